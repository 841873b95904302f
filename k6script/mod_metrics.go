package k6script

import (
	"fmt"

	"github.com/dop251/goja"
)

// metricsModule is "k6/metrics": Trend, Counter, Rate, Gauge. Metrics are
// declared in the init code and added to in iterations.
func metricsModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	for _, kind := range []struct{ js, kind string }{{"Trend", KindTrend}, {"Counter", KindCounter}, {"Rate", KindRate}, {"Gauge", KindGauge}} {
		must(o.Set(kind.js, func(call goja.ConstructorCall) *goja.Object {
			name := call.Argument(0).String()
			if goja.IsUndefined(call.Argument(0)) || name == "" {
				panic(rt.NewGoError(fmt.Errorf("new %s(): give the metric a name", kind.js)))
			}
			isTime := kind.kind == KindTrend && call.Argument(1).ToBoolean()
			x, err := v.s.metrics.declare(name, kind.kind, isTime)
			if err != nil {
				panic(rt.NewGoError(err))
			}
			v.s.k6.declare(name, kind.kind, isTime)
			obj := call.This
			must(obj.Set("name", name))
			must(obj.Set("add", func(c goja.FunctionCall) goja.Value {
				if v.init {
					panic(rt.NewGoError(fmt.Errorf("%s.add in the init code: metrics can be added to only in functions, as in k6", name)))
				}
				val := c.Argument(0)
				n := val.ToFloat()
				if kind.kind == KindRate {
					n = 0
					if val.ToBoolean() {
						n = 1
					}
				}
				v.k6Custom(name, n, tagsArg(c.Argument(1)))
				if kind.kind == KindTrend {
					v.addTrend(name, n)
				} else {
					x.add(n)
				}
				return rt.ToValue(true)
			}))
			return nil
		}))
	}
	return o
}
