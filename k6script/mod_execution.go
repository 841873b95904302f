package k6script

import (
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
		}
		return nil
	}, keys: []string{"name", "iterationInTest", "iterationInInstance", "executor"}})))
	must(o.Set("instance", rt.NewDynamicObject(&execObject{v: v, get: func(key string) goja.Value {
		switch key {
		case "vusInitialized":
			return rt.ToValue(v.s.vuInits.Load())
		case "iterationsCompleted":
			return rt.ToValue(v.s.iterations.Load())
		}
		return nil
	}, keys: []string{"vusInitialized", "iterationsCompleted"}})))
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
