package k6script

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// tagsArg reads a tags argument (check's third, a metric's add's second,
// a request's params.tags) as k6's common.ApplyCustomUserTags does: an
// object's entries as strings; nil for anything else. A value that is not
// a string, a boolean or a number (null, undefined, an object) is an error,
// whose text is k6's (js/common/tags.go): k6 makes no sample of it.
func tagsArg(val goja.Value) (map[string]string, error) {
	o, ok := val.(*goja.Object)
	if !ok || goja.IsUndefined(val) || goja.IsNull(val) {
		return nil, nil
	}
	tags := map[string]string{}
	for _, k := range o.Keys() {
		x := o.Get(k)
		var kind reflect.Kind
		if t := x.ExportType(); t != nil {
			kind = t.Kind()
		}
		switch kind {
		case reflect.String, reflect.Bool, reflect.Int64, reflect.Float64:
			tags[k] = x.String()
		default:
			return nil, fmt.Errorf("invalid value for metric tag '%s': only String, Boolean and Number types are accepted as a metric tag values", k)
		}
	}
	return tags, nil
}

// mustTags is tagsArg, throwing its error prefixed with what k6 prefixes
// it with at the call ("" for none).
func (v *vu) mustTags(val goja.Value, prefix string) map[string]string {
	tags, err := tagsArg(val)
	if err != nil {
		if prefix != "" {
			err = fmt.Errorf("%s: %w", prefix, err)
		}
		panic(v.rt.NewGoError(err))
	}
	return tags
}

// errNameHasGroupSeparator is k6's error for a group or check name with
// "::" in it (lib/models.go:29), which would make its group path ambiguous.
var errNameHasGroupSeparator = errors.New("group and check names may not contain '::'")

// k6Module is "k6": check, sleep, group, fail, randomSeed.
func k6Module(v *vu) *goja.Object {
	rt := v.rt
	o := newLazyObject(rt)
	must(o.Set("check", func(call goja.FunctionCall) goja.Value {
		val := call.Argument(0)
		// k6's Check (internal/js/modules/k6/k6.go:147-175): no second
		// argument is an error; the tags are read before any check is run
		// or counted; the checks are the second argument as an object
		// (undefined and null throw a TypeError, a number has none).
		if len(call.Arguments) < 2 {
			panic(rt.NewGoError(errors.New("no checks provided to `check`")))
		}
		custom := v.mustTags(call.Argument(2), "")
		sets := call.Argument(1).ToObject(rt)
		all := true
		for _, name := range sets.Keys() {
			if strings.Contains(name, "::") { // the checks before it were counted
				panic(rt.NewGoError(errNameHasGroupSeparator))
			}
			cond := sets.Get(name)
			if v.isAsyncFunction(cond) {
				// k6's words; the checks before it were counted.
				panic(rt.NewGoError(errors.New("the built-in check() does not support async functions as arguments. " +
					"Use the JavaScript utils library as a replacement. " +
					"Refer to https://grafana.com/docs/k6/latest/javascript-api/jslib/utils/check/ for more info")))
			}
			pass := cond.ToBoolean()
			var thrown error
			if fn, isFn := goja.AssertFunction(cond); isFn {
				r, err := fn(goja.Undefined(), val)
				// A check that throws fails, is counted, and its exception
				// ends check() there, the later checks not run (as k6).
				pass, thrown = err == nil && r.ToBoolean(), err
			}
			v.k6Check(name, pass, custom)
			group := v.group
			if group != "" {
				group = v.groupName(group) // bounded as the groups' series are
			}
			cc := v.checkCount(group, name)
			v.recordCheck(pass)
			if pass {
				cc.pass.Add(1)
			} else {
				cc.failed.Add(1)
				all = false
			}
			if thrown != nil {
				panic(thrown)
			}
		}
		return rt.ToValue(all)
	}))
	must(o.Set("sleep", func(secs float64) {
		if !(secs > 0) {
			return
		}
		t := time.NewTimer(time.Duration(secs * float64(time.Second)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-v.ctx.Done():
		}
	}))
	must(o.Set("group", func(name string, cb goja.Value) goja.Value {
		fn, ok := goja.AssertFunction(cb)
		if !ok {
			panic(rt.NewGoError(errors.New("group() requires a callback as a second argument")))
		}
		if v.isAsyncFunction(cb) { // k6's words
			panic(rt.NewGoError(errors.New("group() does not support async functions as arguments, " +
				"please see https://grafana.com/docs/k6/latest/javascript-api/k6/group/ for more info")))
		}
		if strings.Contains(name, "::") { // k6's lib.NewGroupPath
			panic(rt.NewGoError(errNameHasGroupSeparator))
		}
		prev := v.group
		if prev == "" {
			v.group = "::" + name
		} else {
			v.group = prev + "::" + name
		}
		defer func() { v.group = prev }()
		start := time.Now()
		r, err := fn(goja.Undefined())
		if err != nil {
			panic(err) // k6 emits no group_duration for a group that threw
		}
		v.groupDuration(v.group, time.Since(start))
		return r
	}))
	must(o.Set("fail", func(msg string) {
		panic(rt.NewGoError(errors.New(msg)))
	}))
	// randomSeed makes the VU's Math.random repeatable, as in k6.
	must(o.Set("randomSeed", func(seed int64) {
		r := rand.New(rand.NewPCG(uint64(seed), uint64(seed)))
		rt.SetRandSource(r.Float64)
	}))
	return o.object()
}

// isAsyncFunction tells an async function (its constructor is
// AsyncFunction), which k6's group() and check() refuse: they would end
// before its awaits, so what it measures would fall outside them.
func (v *vu) isAsyncFunction(val goja.Value) bool {
	if val == nil || goja.IsUndefined(val) || goja.IsNull(val) {
		return false
	}
	c, ok := val.ToObject(v.rt).Get("constructor").(*goja.Object)
	if !ok || c == v.function {
		return false // a plain function's: not the name asked for, without reading it
	}
	return c.Get("name").String() == "AsyncFunction"
}
