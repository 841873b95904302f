package k6script

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// batch is http.batch: the requests go out in parallel (through the shared
// transport, since the VU's own connections carry one request at a time);
// the JavaScript waits, and each reply is recorded on the VU's goroutine.
// It returns an array or an object of Responses, as it was given.
func (v *vu) batch(reqs goja.Value) goja.Value {
	rt := v.rt
	o, ok := reqs.(*goja.Object)
	if !ok {
		panic(rt.NewGoError(fmt.Errorf("http.batch: give an array or an object of requests")))
	}
	keys := o.Keys()
	items := make([]*responseObject, len(keys))
	for i, key := range keys {
		it := &responseObject{v: v, b: v.batchCall(o.Get(key))}
		v.k6Hops(&it.b, it.b.tags)
		items[i] = it
	}
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Go(func() { it.send(v.ctx, nil) })
	}
	wg.Wait()
	isArray := o.ClassName() == "Array"
	var arr []any
	out := rt.NewObject()
	for i, it := range items {
		for j := range it.reps {
			v.record(it.b.name, &it.reps[j], it.b.verdictOf(j, &it.reps[j]))
		}
		res := rt.NewDynamicObject(it)
		if isArray {
			arr = append(arr, res)
		} else {
			must(out.Set(keys[i], res))
		}
	}
	for _, it := range items { // every reply recorded first
		v.throwIfFailed(it.rep)
	}
	if isArray {
		return rt.NewArray(arr...)
	}
	return out
}

// batchCall reads one batch entry: a URL string, [method, url, body,
// params], or {method, url, body, params}.
func (v *vu) batchCall(e goja.Value) builtCall {
	o, ok := e.(*goja.Object)
	if !ok {
		return v.buildCall(http.MethodGet, e, nil, nil)
	}
	if o.ClassName() == "Array" {
		method := strings.ToUpper(o.Get("0").String())
		return v.buildCall(method, o.Get("1"), o.Get("2"), o.Get("3"))
	}
	method := http.MethodGet
	if m := o.Get("method"); m != nil && !goja.IsUndefined(m) {
		method = strings.ToUpper(m.String())
	}
	return v.buildCall(method, o.Get("url"), o.Get("body"), o.Get("params"))
}
