package k6script

import (
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// urlNameKey is the hidden property of an http.url object holding its name tag.
const urlNameKey = "__knee_url_name"

// httpURL is k6's http.url tagged template: http.url`${BASE}/books/${id}`
// is the URL with the values filled in, named by the template with each
// value as ${} ("${}/books/${}"), so one name groups every id.
func (v *vu) httpURL(call goja.FunctionCall) goja.Value {
	rt := v.rt
	parts, ok := call.Argument(0).(*goja.Object)
	if !ok {
		return rt.ToValue(call.Argument(0).String())
	}
	n := int(parts.Get("length").ToInteger())
	var url, name strings.Builder
	for i := 0; i < n; i++ {
		s := parts.Get(strconv.Itoa(i)).String()
		url.WriteString(s)
		name.WriteString(s)
		if i+1 < n {
			url.WriteString(call.Argument(i + 1).String())
			name.WriteString("${}")
		}
	}
	o := rt.NewObject()
	u := url.String()
	must(o.Set("url", u))
	must(o.Set("name", name.String()))
	must(o.DefineDataProperty(urlNameKey, rt.ToValue(name.String()), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))
	must(o.Set("toString", func() string { return u }))
	return o
}

// urlName is the default name tag of a request to u: an http.url's
// template, else the URL itself.
func urlName(u goja.Value, url string) string {
	if o, ok := u.(*goja.Object); ok {
		if n := o.Get(urlNameKey); n != nil && !goja.IsUndefined(n) {
			return n.String()
		}
	}
	return url
}
