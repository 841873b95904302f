package k6script

import (
	"errors"
	"slices"

	"github.com/dop251/goja"
)

// executionModule is "k6/execution": vu, scenario and test information,
// read when accessed.
func executionModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	must(defineExec(v, o, "vu", rt.NewDynamicObject(&execObject{v: v, get: func(key string) goja.Value {
		switch key {
		case "idInTest", "idInInstance":
			return rt.ToValue(v.id)
		case "iterationInScenario", "iterationInInstance":
			return rt.ToValue(v.st.Iter)
		}
		return nil
	}, keys: []string{"idInTest", "idInInstance", "iterationInScenario", "iterationInInstance"}})))
	must(defineExec(v, o, "scenario", rt.NewDynamicObject(&execObject{v: v, get: func(key string) goja.Value {
		if v.st.Scenario == "" && slices.Contains(scenarioKeys, key) {
			// setup() and teardown() run in no scenario: k6's getters throw
			// (internal/js/modules/k6/execution/execution.go:84-90).
			panic(rt.NewGoError(errNoScenario))
		}
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
	}, keys: scenarioKeys})))
	must(defineExec(v, o, "instance", rt.NewDynamicObject(&execObject{v: v, get: func(key string) goja.Value {
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

// scenarioKeys are k6/execution's scenario fields.
var scenarioKeys = []string{"name", "iterationInTest", "iterationInInstance", "executor", "startTime"}

// errNoScenario is k6's error for exec.scenario read outside a scenario:
// the init code, setup(), teardown() (execution.go:74).
var errNoScenario = errors.New("getting scenario information outside of the VU context is not supported")

// initErrors are k6's errors for exec.vu, exec.scenario and exec.instance
// read in the init code, where k6's VU has no state yet
// (execution.go:74, 131, 217).
var initErrors = map[string]string{
	"vu":       "getting VU information in the init context is not supported",
	"scenario": errNoScenario.Error(),
	"instance": "getting instance information in the init context is not supported",
}

// defineExec puts info on o under name as k6 does, an accessor that
// throws in the init code.
func defineExec(v *vu, o *goja.Object, name string, info *goja.Object) error {
	get := v.rt.ToValue(func() goja.Value {
		if v.init {
			panic(v.rt.NewGoError(errors.New(initErrors[name])))
		}
		return info
	})
	return o.DefineAccessorProperty(name, get, nil, goja.FLAG_FALSE, goja.FLAG_TRUE)
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
