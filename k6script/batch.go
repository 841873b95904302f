package k6script

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dop251/goja"
)

// batch is http.batch: the requests go out in parallel (through the shared
// transport, since the VU's own connections carry one request at a time),
// as many at once as k6 lets them (sendBatch); the JavaScript waits, and
// each reply is recorded on the VU's goroutine. It returns an array or an
// object of Responses, as it was given.
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
	v.sendBatch(items)
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

// sendBatch sends a batch's requests as k6 does (lib/netext/httpext
// batch.go MakeBatchRequests): min(len(items), options.batch) workers take
// them in order, and each waits for one of its host's options.batchPerHost
// slots (none: no bound). k6's defaults are its CLI's, 20 and 6: a batch
// of ten requests to one host has six in flight, on six connections.
func (v *vu) sendBatch(items []*responseObject) {
	parallel, perHost := v.s.Options.batchLimits()
	// Each request's host slots, found once: nil entries when unbounded.
	slot := make([]chan struct{}, len(items))
	if perHost > 0 {
		byHost := map[string]chan struct{}{}
		for i, it := range items {
			h := batchHost(it.b.call.URL)
			if byHost[h] == nil {
				byHost[h] = make(chan struct{}, perHost)
			}
			slot[i] = byHost[h]
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(items), parallel) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(items)); i = next.Add(1) - 1 {
				if slot[i] != nil {
					slot[i] <- struct{}{}
				}
				items[i].send(v.ctx, nil)
				if slot[i] != nil {
					<-slot[i]
				}
			}
		})
	}
	wg.Wait()
}

// batchHost is the host a batch request's slot is counted by: its URL's
// host and port as written, k6's URL.Host; "" for a URL that does not
// parse (the request then fails on its own).
func batchHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
