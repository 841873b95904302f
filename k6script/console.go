package k6script

import (
	"fmt"
	"reflect"
	"strconv"
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

// show is how console prints a value, as k6 v1.8.1 does
// (internal/js/console.go valueString): a function as [object Function],
// an Error and every primitive as its string, anything else written out
// by showObject.
func show(v *vu, a goja.Value) string {
	var s string
	if err := v.rt.Try(func() {
		if _, isFn := goja.AssertFunction(a); isFn {
			s = consoleFunction
			return
		}
		if o, ok := a.(*goja.Object); ok && o.ClassName() != "Error" {
			var b strings.Builder
			showObject(&b, o, map[*goja.Object]bool{})
			s = b.String()
			return
		}
		s = a.String()
	}); err != nil {
		return "[" + jsError(err) + "]"
	}
	return s
}

// k6's console placeholders.
const (
	consoleFunction = "[object Function]"
	consoleCircular = "[Circular]"
)

// showObject writes a value inside what console prints, k6's way: null
// for null and undefined, strings quoted, arrays as [ a, b ], objects as
// { key: value } over their own enumerable keys, a Date as its quoted ISO
// string, an ArrayBuffer and a typed array with their bytes and elements,
// a value met again inside itself as [Circular].
func showObject(b *strings.Builder, val goja.Value, seen map[*goja.Object]bool) {
	if val == nil || goja.IsUndefined(val) || goja.IsNull(val) {
		b.WriteString("null")
		return
	}
	if _, isFn := goja.AssertFunction(val); isFn {
		b.WriteString(consoleFunction)
		return
	}
	o, ok := val.(*goja.Object)
	if !ok {
		if _, isStr := val.Export().(string); isStr {
			b.WriteString(`"` + val.String() + `"`)
		} else {
			b.WriteString(val.String())
		}
		return
	}
	if seen[o] {
		b.WriteString(consoleCircular)
		return
	}
	seen[o] = true
	defer delete(seen, o)
	if o.ClassName() == "Error" {
		b.WriteString(o.String())
		return
	}
	if showBinary(b, o) {
		return
	}
	if o.ClassName() == "Array" {
		n := o.Get("length").ToInteger()
		if n == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[ ")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			showObject(b, o.Get(strconv.FormatInt(i, 10)), seen)
		}
		b.WriteString(" ]")
		return
	}
	keys := o.Keys()
	if len(keys) == 0 {
		if o.ClassName() == "Date" {
			if iso, ok := goja.AssertFunction(o.Get("toISOString")); ok {
				if r, err := iso(o); err == nil {
					b.WriteString(`"` + r.String() + `"`)
					return
				}
			}
		}
		b.WriteString("{}")
		return
	}
	b.WriteString("{ ")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + ": ")
		showObject(b, o.Get(k), seen)
	}
	b.WriteString(" }")
}

// showBinary writes an ArrayBuffer as ArrayBuffer { [Uint8Contents]: <01
// 02>, byteLength: 2 } and a typed array as Uint8Array(2) [ 1, 2 ], as k6
// does; false for anything else.
func showBinary(b *strings.Builder, o *goja.Object) bool {
	if ab, ok := o.Export().(goja.ArrayBuffer); ok {
		bs := ab.Bytes()
		b.WriteString("ArrayBuffer { [Uint8Contents]: <")
		for i, c := range bs {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(b, "%02x", c)
		}
		fmt.Fprintf(b, ">, byteLength: %d }", len(bs))
		return true
	}
	t := o.ExportType()
	if t == nil || t.Kind() != reflect.Slice {
		return false
	}
	name := typedArrayName(t.Elem().Kind())
	if name == "" {
		return false
	}
	n := o.Get("length").ToInteger()
	fmt.Fprintf(b, "%s(%d)", name, n)
	if n == 0 {
		b.WriteString(" []")
		return true
	}
	b.WriteString(" [ ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(o.Get(strconv.FormatInt(i, 10)).String())
	}
	b.WriteString(" ]")
	return true
}

// typedArrayName names a typed array by its elements' kind, as k6 does (a
// Uint8ClampedArray is a Uint8Array there too); "" for another slice.
func typedArrayName(k reflect.Kind) string {
	switch k {
	case reflect.Int8:
		return "Int8Array"
	case reflect.Uint8:
		return "Uint8Array"
	case reflect.Int16:
		return "Int16Array"
	case reflect.Uint16:
		return "Uint16Array"
	case reflect.Int32:
		return "Int32Array"
	case reflect.Uint32:
		return "Uint32Array"
	case reflect.Float32:
		return "Float32Array"
	case reflect.Float64:
		return "Float64Array"
	case reflect.Int64:
		return "BigInt64Array"
	case reflect.Uint64:
		return "BigUint64Array"
	}
	return ""
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
