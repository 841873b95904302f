package k6script

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// console writes the script's console.* lines to stderr, at most
// consoleBurst lines per second, so a chatty script cannot flood the
// terminal (or slow the VUs on it); what it drops it counts and says.
type console struct {
	w       Writer
	mu      sync.Mutex
	window  time.Time
	n       int
	dropped int64
}

const consoleBurst = 20

func newConsole(w Writer) *console { return &console{w: w} }

func (c *console) object(v *vu) *goja.Object {
	o := newLazyObject(v.rt)
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		must(o.Set(level, func(call goja.FunctionCall) goja.Value {
			parts := make([]string, 0, len(call.Arguments))
			for _, a := range call.Arguments {
				parts = append(parts, show(v, a))
			}
			c.line(level, strings.Join(parts, " "))
			return goja.Undefined()
		}))
	}
	return o.object()
}

// show is how console prints a value: objects as JSON, as k6 does.
func show(v *vu, a goja.Value) string {
	if o, ok := a.(*goja.Object); ok && o.ClassName() != "Error" {
		if _, isFn := goja.AssertFunction(a); !isFn {
			if b, err := v.stringify(o); err == nil {
				return b
			}
		}
	}
	var s string
	if err := v.rt.Try(func() { s = a.String() }); err != nil {
		return "[" + jsError(err) + "]"
	}
	return s
}

func (c *console) errorf(format string, args ...any) { c.line("error", fmt.Sprintf(format, args...)) }

func (c *console) line(level, msg string) {
	if c.w == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.Sub(c.window) >= time.Second {
		if c.dropped > 0 {
			fmt.Fprintf(c.w, "console: %d lines not shown (more than %d a second)\n", c.dropped, consoleBurst)
		}
		c.window, c.n, c.dropped = now, 0, 0
	}
	if c.n >= consoleBurst {
		c.dropped++
		return
	}
	c.n++
	fmt.Fprintf(c.w, "%s: %s\n", level, msg)
}

// close says how many lines the last window dropped.
func (c *console) close() {
	if c.w == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped > 0 {
		fmt.Fprintf(c.w, "console: %d lines not shown (more than %d a second)\n", c.dropped, consoleBurst)
		c.dropped = 0
	}
}
