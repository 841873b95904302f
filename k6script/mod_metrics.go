package k6script

import (
	"fmt"
	"math"

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
				n, ok := metricValue(val)
				if !ok { // k6's words; not added, a warning unless options.throw
					err := fmt.Errorf("'%s' is an invalid value for metric '%s', a number or a boolean value is expected", limitValue(val.String()), name)
					if v.s.Options.Throw {
						panic(rt.NewGoError(err))
					}
					v.s.con.line("warn", err.Error())
					return rt.ToValue(false)
				}
				// A Rate's value stays as given (k6's outputs write 5 as
				// 5.000000); its sinks count every non-zero one as true.
				v.k6Custom(name, n, v.mustTags(c.Argument(1), fmt.Sprintf("cannot add tags for the '%s' custom metric", name)))
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

// metricValue is the number k6's metric add() takes from v (its rule in
// internal/js/modules/k6/metrics): the value as a number, 1 for a truthy
// one that converts to 0 (the string "0", an empty array), and false for
// null and anything that is not a number (undefined, "abc", NaN), which k6
// does not add.
func metricValue(v goja.Value) (float64, bool) {
	if v == nil || goja.IsNull(v) {
		return 0, false
	}
	n := v.ToFloat()
	if n == 0 && v.ToBoolean() {
		n = 1
	}
	return n, !math.IsNaN(n)
}

// limitValue shortens a long value for a warning, keeping its ends, as k6
// does.
func limitValue(s string) string {
	const keep = 50 // runes from each end
	r := []rune(s)
	if len(r) < 2*keep {
		return s
	}
	return string(r[:keep]) + fmt.Sprintf("... omitting %d characters ...", len(r)-2*keep) + string(r[len(r)-keep:])
}
