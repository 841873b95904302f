package k6script

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/dop251/goja"
)

// clickLink is res.clickLink({selector, params}) as k6 v1.8.1 has it
// (js/modules/k6/http/response.go): the first element the selector
// (default "a[href]") finds in the body, its href resolved against the
// response's URL (the last hop's, after redirects), sent as a GET of its
// own with params. No element, or none with an href, throws k6's errors,
// naming the selector and the response's URL. An argument given must be
// an object (k6 converts it, so undefined or null throws a TypeError).
func (r *responseObject) clickLink(call goja.FunctionCall) goja.Value {
	rt := r.v.rt
	selector := "a[href]"
	params := goja.Null()
	if len(call.Arguments) > 0 {
		o := call.Argument(0).ToObject(rt)
		for _, k := range o.Keys() {
			switch k {
			case "selector":
				selector = o.Get(k).String()
			case "params":
				params = o.Get(k)
			}
		}
	}
	base, err := url.Parse(r.rep.URL)
	if err != nil {
		panic(rt.NewGoError(err))
	}
	link := r.v.parseDoc(r.htmlText()).Find(selector)
	if link.Length() == 0 {
		panic(rt.NewGoError(fmt.Errorf("no element found for selector '%s' in response '%s'", selector, r.rep.URL)))
	}
	href, ok := link.Attr("href")
	if !ok {
		panic(rt.NewGoError(fmt.Errorf("no valid href attribute value found on element '%s' in response '%s'", selector, r.rep.URL)))
	}
	ref, err := url.Parse(href)
	if err != nil {
		panic(rt.NewGoError(err))
	}
	return r.v.httpRequest(http.MethodGet, rt.ToValue(base.ResolveReference(ref).String()), goja.Undefined(), params)
}
