package k6script

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// Top-level await (bundle.go then wraps the init code in an async function):
// the init code has ended when that function's Promise has settled. knee's
// module calls settle their Promises before they return and the init
// code's timers all fire (timers.go), so once the program and its timers
// have run, a Promise still pending waits on something knee does not have.

// catchExports returns what reads the script's exports once its init
// code has run (an empty object if it never got there). A CommonJS bundle
// leaves them in module.exports; the async form (async) hands the
// entry's namespace to exportsHook, set here.
func (v *vu) catchExports(async, cjs bool) func() *goja.Object {
	rt := v.rt
	if !async {
		mod := rt.NewObject()
		must(mod.Set("exports", rt.NewObject()))
		must(rt.Set("module", mod))
		must(rt.Set("exports", mod.Get("exports")))
		return func() *goja.Object {
			if ex, ok := mod.Get("exports").(*goja.Object); ok {
				return ex
			}
			return rt.NewObject()
		}
	}
	var ns *goja.Object
	must(rt.Set(exportsHook, func(o *goja.Object) { ns = o }))
	return func() *goja.Object {
		_ = rt.GlobalObject().Delete(exportsHook)
		if ns == nil {
			return rt.NewObject()
		}
		if cjs {
			// esbuild's interop gives a CommonJS entry's module.exports as
			// the default, unless the module says it was an ES module.
			esm := ns.Get("__esModule")
			if m, ok := ns.Get("default").(*goja.Object); ok && (esm == nil || !esm.ToBoolean()) {
				return m
			}
		}
		return ns
	}
}

// initSettled is the init code's outcome from the wrapper's Promise: nil
// when fulfilled, the exception (with file:line:col) when rejected.
func initSettled(res goja.Value) error {
	p, ok := res.Export().(*goja.Promise)
	if !ok {
		return nil
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return nil
	case goja.PromiseStateRejected:
		return errors.New(rejection(p.Result()))
	}
	return errors.New("a top-level await is still pending when the init code ended: nothing knee runs (module calls, timers) settles its Promise")
}

// stackFrame is a frame of goja's Error stack: "at [name (]file:line:col(pc)".
var stackFrame = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\s*at (?:.*? \()?(.+):(\d+):(\d+)\(\d+\)\)?$`)
})

// rejection is a rejected Promise's reason as an exception's message:
// an Error names the place it was made, as jsError does for exceptions.
func rejection(reason goja.Value) string {
	if reason == nil {
		return "undefined"
	}
	msg := reason.String()
	o, ok := reason.(*goja.Object)
	if !ok {
		return msg
	}
	stack := o.Get("stack")
	if stack == nil || goja.IsUndefined(stack) {
		return msg
	}
	m := stackFrame().FindStringSubmatch(stack.String())
	if m == nil {
		return msg
	}
	name := strings.TrimPrefix(m[1], remoteNS+":") // a remote module: its URL
	return fmt.Sprintf("%s:%s:%s: %s", name, m[2], m[3], msg)
}
