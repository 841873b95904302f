package k6script

import (
	"errors"

	"github.com/dop251/goja"
)

// executionModule is "k6/execution": vu, scenario and test information,
// read when accessed.
func executionModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	must(o.Set("vu", rt.NewDynamicObject(&execObject{v: v, get: func(key string) goja.Value {
		switch key {
		case "idInTest", "idInInstance":
			return rt.ToValue(v.id)
		case "iterationInScenario", "iterationInInstance":
			return rt.ToValue(v.st.Iter)
		}
		return nil
	}, keys: []string{"idInTest", "idInInstance", "iterationInScenario", "iterationInInstance"}})))
	must(o.Set("scenario", rt.NewDynamicObject(&execObject{v: v, get: func(key string) goja.Value {
		switch key {
		case "name":
			return rt.ToValue(v.st.Scenario)
		case "iterationInTest", "iterationInInstance":
			return rt.ToValue(v.iterInTest)
		case "executor":
			return rt.ToValue(v.s.executorOf(v.st.Scenario))
		case "startTime": // Unix milliseconds, as k6
			return rt.ToValue(v.scStart.UnixMilli())
		}
		return nil
	}, keys: []string{"name", "iterationInTest", "iterationInInstance", "executor", "startTime"}})))
	must(o.Set("instance", rt.NewDynamicObject(&execObject{v: v, get: func(key string) goja.Value {
		switch key {
		case "vusInitialized":
			return rt.ToValue(v.s.initialisedVUs())
		case "iterationsCompleted":
			return rt.ToValue(v.s.iterations.Load())
		case "iterationsInterrupted":
			return rt.ToValue(v.s.exec.interrupted.Load())
		case "vusActive":
			return rt.ToValue(v.s.exec.active.Load())
		case "currentTestRunDuration": // in milliseconds
			return rt.ToValue(ms(v.s.testRunDuration()))
		}
		return nil
	}, keys: []string{"vusInitialized", "iterationsCompleted", "iterationsInterrupted", "vusActive", "currentTestRunDuration"}})))
	test := rt.NewObject()
	must(test.Set("abort", func(call goja.FunctionCall) goja.Value {
		reason := "test aborted"
		if m := call.Argument(0); !goja.IsUndefined(m) && !goja.IsNull(m) {
			reason += ": " + m.String()
		}
		v.aborting = true
		v.s.abort(reason)
		panic(rt.NewGoError(errors.New(reason)))
	}))
	// fail marks the test failed and lets it run on (k6's
	// execution.test.fail): the reason is logged as an error, and the run
	// exits 110 at its end unless it already exits with a code of its own.
	must(test.Set("fail", func(call goja.FunctionCall) goja.Value {
		reason := "test marked as failed"
		if m := call.Argument(0); !goja.IsUndefined(m) && !goja.IsNull(m) {
			reason += ": " + m.String()
		}
		v.s.con.errorf("%s", reason)
		v.s.markFailed(reason)
		return goja.Undefined()
	}))
	must(o.Set("test", test))
	return o
}

// execObject is a read-only object whose properties are computed when read.
type execObject struct {
	v    *vu
	get  func(string) goja.Value
	keys []string
}

func (e *execObject) Get(key string) goja.Value   { return e.get(key) }
func (e *execObject) Set(string, goja.Value) bool { return false }
func (e *execObject) Has(key string) bool         { return e.get(key) != nil }
func (e *execObject) Delete(string) bool          { return false }
func (e *execObject) Keys() []string              { return e.keys }
