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
	isArray := o.ClassName() == "Array"
	items := make([]*responseObject, len(keys))
	for i, key := range keys {
		it := &responseObject{v: v, b: v.batchCall(o.Get(key))}
		if it.b.bad != nil {
			return v.unsentBatch(keys, i, it.b.bad, isArray)
		}
		v.k6Hops(&it.b, it.b.tags)
		items[i] = it
	}
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Go(func() { it.send(v.ctx, nil) })
	}
	wg.Wait()
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
		v.throwIfFailed(&it.b, it.rep)
	}
	if isArray {
		return rt.NewArray(arr...)
	}
	return out
}

// unsentBatch is what k6's http.batch gives back, under options.throw
// false, when its entry bad cannot be read (js/modules/k6/http/request.go
// prepareBatchArray, prepareBatchObject, Batch): nothing is sent; the
// entries before it are empty Responses, it is the errored one, and an
// array's later entries are null (an object has no later keys).
func (v *vu) unsentBatch(keys []string, bad int, err error, isArray bool) goja.Value {
	v.s.con.line("warn", fmt.Sprintf("A batch request failed: %v", err))
	res := func(i int) goja.Value {
		if i == bad {
			return v.rt.NewDynamicObject(unsentResponse(v, err))
		}
		return v.rt.NewDynamicObject(unsentResponse(v, nil))
	}
	if isArray {
		arr := make([]any, len(keys))
		for i := range keys {
			arr[i] = goja.Null()
			if i <= bad {
				arr[i] = res(i)
			}
		}
		return v.rt.NewArray(arr...)
	}
	out := v.rt.NewObject()
	for i := 0; i <= bad; i++ {
		must(out.Set(keys[i], res(i)))
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
