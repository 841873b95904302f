package k6script

import (
	"fmt"

	"github.com/dop251/goja"
)

// dataModule is "k6/data": SharedArray. Its function runs once per script
// (in the first VU that declares the name); every VU gets the same data as
// a read-only array, passed as JSON as k6 does.
func dataModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	must(o.Set("SharedArray", func(call goja.ConstructorCall) *goja.Object {
		if !v.init {
			panic(rt.NewGoError(fmt.Errorf("new SharedArray() works only in the init code, as in k6")))
		}
		name := call.Argument(0).String()
		fn, ok := goja.AssertFunction(call.Argument(1))
		if !ok || goja.IsUndefined(call.Argument(0)) {
			panic(rt.NewGoError(fmt.Errorf("new SharedArray(name, function): give a name and a function that returns an array")))
		}
		raw, err := v.s.shared(name, func() (string, error) {
			res, err := fn(goja.Undefined())
			if err != nil {
				return "", err
			}
			if obj, ok := res.(*goja.Object); !ok || obj.ClassName() != "Array" {
				return "", fmt.Errorf("SharedArray %q: the function must return an array", name)
			}
			return v.stringify(res)
		})
		if err != nil {
			panic(rt.NewGoError(err))
		}
		arr, err := v.frozenJSON(raw)
		if err != nil {
			panic(err)
		}
		return arr
	}))
	return o
}
