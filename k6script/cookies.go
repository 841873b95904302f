package k6script

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// jarObject is k6's CookieJar: http.cookieJar() (the VU's own, used by
// every request without a jar param) and new http.CookieJar().
type jarObject struct {
	jar *cookieJar
	obj *goja.Object
}

// cookieJar is a cookie jar that knows whether anything was ever set in
// it: the VU's own is emptied at each iteration, and one never set is
// empty already, so it is kept rather than made again (two allocations
// per iteration of a script whose target sets no cookies).
type cookieJar struct {
	*cookiejar.Jar
	set atomic.Bool // SetCookies was called with a cookie (http.batch calls it from other goroutines)
}

func newJar() *cookieJar {
	j, _ := cookiejar.New(nil) // nil options never fail
	return &cookieJar{Jar: j}
}

func (j *cookieJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	if len(cookies) > 0 {
		j.set.Store(true)
	}
	j.Jar.SetCookies(u, cookies)
}

// Cookies are the jar's cookies for u: none, without asking the jar (its
// lock, the URL's host and path worked out), while none was ever set.
func (j *cookieJar) Cookies(u *url.URL) []*http.Cookie {
	if !j.set.Load() {
		return nil
	}
	return j.Jar.Cookies(u)
}

// jarFor wraps j in its JavaScript object (once per jar).
func (v *vu) jarObject(j *jarObject) *goja.Object {
	if j.obj != nil {
		return j.obj
	}
	rt := v.rt
	o := rt.NewObject()
	must(o.Set("set", func(rawURL, name, value string, opts goja.Value) {
		u := v.mustURL(rawURL)
		ck := &http.Cookie{Name: name, Value: value}
		if o, ok := opts.(*goja.Object); ok {
			if d := o.Get("domain"); d != nil && !goja.IsUndefined(d) {
				ck.Domain = d.String()
			}
			if p := o.Get("path"); p != nil && !goja.IsUndefined(p) {
				ck.Path = p.String()
			}
			if e := o.Get("expires"); e != nil && !goja.IsUndefined(e) {
				if t, err := time.Parse(time.RFC1123, e.String()); err == nil {
					ck.Expires = t
				}
			}
			if m := o.Get("max_age"); m != nil && !goja.IsUndefined(m) {
				ck.MaxAge = int(m.ToInteger())
			}
			ck.Secure = o.Get("secure") != nil && o.Get("secure").ToBoolean()
			ck.HttpOnly = o.Get("http_only") != nil && o.Get("http_only").ToBoolean()
		}
		j.jar.SetCookies(u, []*http.Cookie{ck})
	}))
	must(o.Set("cookiesForURL", func(rawURL string) *goja.Object {
		byName := map[string][]any{}
		var names []string
		for _, ck := range j.jar.Cookies(v.mustURL(rawURL)) {
			if _, ok := byName[ck.Name]; !ok {
				names = append(names, ck.Name)
			}
			byName[ck.Name] = append(byName[ck.Name], ck.Value)
		}
		out := rt.NewObject()
		for _, n := range names { // a missing property reads as a nil Value: build the lists in Go
			must(out.Set(n, rt.NewArray(byName[n]...)))
		}
		return out
	}))
	must(o.Set("delete", func(rawURL, name string) {
		j.jar.SetCookies(v.mustURL(rawURL), []*http.Cookie{{Name: name, MaxAge: -1}})
	}))
	must(o.Set("clear", func(rawURL string) {
		u := v.mustURL(rawURL)
		for _, ck := range j.jar.Cookies(u) {
			j.jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, MaxAge: -1}})
		}
	}))
	j.obj = o
	v.jars[o] = j
	return o
}

func (v *vu) mustURL(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		panic(v.rt.NewGoError(fmt.Errorf("%q is not an absolute URL", raw)))
	}
	return u
}

// vuJar is the VU's own jar.
func (v *vu) vuJar() *jarObject {
	if v.jar == nil {
		v.jar = &jarObject{jar: newJar()}
	}
	return v.jar
}

// cookieParams reads params.cookies: {name: value} or {name: {value,
// replace}}; replacing names those whose replace is true.
func cookieParams(c goja.Value) (out []*http.Cookie, replacing map[string]bool) {
	o, ok := c.(*goja.Object)
	if !ok {
		return nil, nil
	}
	for _, name := range o.Keys() {
		val := o.Get(name)
		if vo, ok := val.(*goja.Object); ok && vo.ClassName() == "Object" {
			val = vo.Get("value")
			if r := vo.Get("replace"); r != nil && r.ToBoolean() {
				if replacing == nil {
					replacing = map[string]bool{}
				}
				replacing[name] = true
			}
		}
		if val == nil || goja.IsUndefined(val) {
			continue
		}
		out = append(out, &http.Cookie{Name: name, Value: val.String()})
	}
	return out, replacing
}

// replacingJar is a request's jar when its params.cookies replace some of
// the jar's: those names are not sent from the jar (k6's
// SetRequestCookies, lib/netext/httpext/request.go:349); what the
// responses set goes into the jar as ever.
type replacingJar struct {
	http.CookieJar
	names map[string]bool
}

func (j replacingJar) Cookies(u *url.URL) []*http.Cookie {
	var out []*http.Cookie
	for _, ck := range j.CookieJar.Cookies(u) {
		if !j.names[ck.Name] {
			out = append(out, ck)
		}
	}
	return out
}
