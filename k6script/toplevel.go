package k6script

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dop251/goja"
)

// Top-level await (bundle.go wraps the init code in an async function):
// the init code has ended when that function's Promise has settled. knee's
// module calls settle their Promises before they return and the init
// code's timers all fire (timers.go), so once the program and its timers
// have run, a Promise still pending waits on something knee does not have.

// catchExports sets the hook the bundle's last statement calls with the
// entry's namespace, and returns what reads the exports it was given
// (an empty object if the init code never got there).
func (v *vu) catchExports(cjs bool) func() *goja.Object {
	rt := v.rt
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
var stackFrame = regexp.MustCompile(`(?m)^\s*at (?:.*? \()?(.+):(\d+):(\d+)\(\d+\)\)?$`)

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
	m := stackFrame.FindStringSubmatch(stack.String())
	if m == nil {
		return msg
	}
	name := strings.TrimPrefix(m[1], remoteNS+":") // a remote module: its URL
	return fmt.Sprintf("%s:%s:%s: %s", name, m[2], m[3], msg)
}
