package k6script

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/tidwall/gjson"

	"github.com/knee-dev/knee/request"
)

// k6's default number of redirects followed.
const defaultMaxRedirects = 10

// httpModule is "k6/http": the request functions, sent through the
// script's request.Caller on the VU's goroutine.
func httpModule(v *vu) *goja.Object {
	rt := v.rt
	o := newLazyObject(rt)
	send := func(method string, u, body, params goja.Value) goja.Value {
		return v.httpRequest(method, u, body, params)
	}
	noBody := func(method string) func(call goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			return send(method, call.Argument(0), nil, call.Argument(1))
		}
	}
	withBody := func(method string) func(call goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			return send(method, call.Argument(0), call.Argument(1), call.Argument(2))
		}
	}
	must(o.Set("get", noBody(http.MethodGet)))
	must(o.Set("head", noBody(http.MethodHead)))
	must(o.Set("post", withBody(http.MethodPost)))
	must(o.Set("put", withBody(http.MethodPut)))
	must(o.Set("patch", withBody(http.MethodPatch)))
	must(o.Set("del", withBody(http.MethodDelete)))
	must(o.Set("options", withBody(http.MethodOptions)))
	must(o.Set("cookieJar", func() *goja.Object { return v.jarObject(v.vuJar()) }))
	must(o.Set("CookieJar", func(goja.ConstructorCall) *goja.Object { return v.jarObject(&jarObject{jar: newJar()}) }))
	must(o.Set("batch", func(reqs goja.Value) goja.Value { return v.batch(reqs) }))
	for _, c := range httpConstants {
		must(o.Set(c[0], c[1]))
	}
	must(o.Set("url", v.httpURL))
	must(o.Set("expectedStatuses", v.expectedStatuses))
	must(o.Set("file", v.httpFile))
	must(o.Set("setResponseCallback", func(cb goja.Value) {
		v.callback = v.callbackValue(cb, "http.setResponseCallback")
	}))
	must(o.Set("request", func(call goja.FunctionCall) goja.Value {
		return send(strings.ToUpper(call.Argument(0).String()), call.Argument(1), call.Argument(2), call.Argument(3))
	}))
	must(o.Set("asyncRequest", func(call goja.FunctionCall) goja.Value {
		return v.asyncRequest(strings.ToUpper(call.Argument(0).String()), call.Argument(1), call.Argument(2), call.Argument(3))
	}))
	return o.object()
}

// httpRequest sends one request and returns k6's Response object.
func (v *vu) httpRequest(method string, u, body, params goja.Value) goja.Value {
	r := &responseObject{v: v, b: v.buildCall(method, u, body, params)}
	if r.b.bad != nil {
		return v.unsent(r.b.bad, "Request Failed")
	}
	v.k6Hops(&r.b, r.b.tags)
	r.send(v.ctx, v.conns)
	return v.sent(r)
}

// sent records a sent request's replies, throws if it failed and the
// script asked for that, and returns its Response object.
func (v *vu) sent(r *responseObject) goja.Value {
	for i := range r.reps {
		v.record(r.b.name, &r.reps[i], r.b.verdictOf(i, &r.reps[i]))
	}
	v.throwIfFailed(&r.b, r.rep)
	return v.rt.NewDynamicObject(r)
}

// asyncRequest is http.asyncRequest as k6 v1.8.1 has it
// (js/modules/k6/http/request.go asyncRequest): the arguments are read at
// once, and what k6 cannot read settles the Promise at once (an errored
// Response, or under throw a rejection); the request goes out on a
// goroutine of its own, through the shared transport as a batch's do, and
// its Response settles the Promise on the VU's event loop once it is in.
// So several are in flight together, the script goes on meanwhile, and
// the call (an iteration) ends once every one has settled.
func (v *vu) asyncRequest(method string, u, body, params goja.Value) goja.Value {
	p, resolve, reject := v.rt.NewPromise()
	var r *responseObject
	if ex := v.rt.Try(func() { r = &responseObject{v: v, b: v.buildCall(method, u, body, params)} }); ex != nil {
		must(reject(ex.Value()))
		return v.rt.ToValue(p)
	}
	if r.b.bad != nil {
		must(resolve(v.unsent(r.b.bad, "Request Failed")))
		return v.rt.ToValue(p)
	}
	v.k6Hops(&r.b, r.b.tags)
	ctx, enqueue := v.loop.context(), v.loop.register()
	go func() {
		r.send(ctx, nil)
		enqueue(func() error {
			var res goja.Value
			if ex := v.rt.Try(func() { res = v.sent(r) }); ex != nil {
				return reject(ex.Value())
			}
			return resolve(res)
		})
	}()
	return v.rt.ToValue(p)
}

// throwIfFailed makes a request that failed (no response: refused, reset,
// timed out...) throw, as k6 does with options.throw or the params' throw;
// it was recorded first.
func (v *vu) throwIfFailed(b *builtCall, rep *request.Reply) {
	if b.throw && rep.Err != nil && v.ctx.Err() == nil {
		panic(v.rt.NewGoError(fmt.Errorf("request to %s failed: %w", v.s.cfg.Redact.Name(rep.URL), rep.Err)))
	}
}

// builtCall is a request read from its arguments: the Call, its name tag,
// its jar, and whether the body is wanted as an ArrayBuffer.
type builtCall struct {
	call     request.Call
	name     string
	jar      http.CookieJar
	binary   bool             // responseType 'binary'
	callback responseCallback // the VU's, or the responseCallback param's
	named    string           // the name tag given (params.tags.name, http.url), "" for the URL
	tags     map[string]string
	auth     string // params auth 'digest' (http_digest.go) or 'ntlm' (http_ntlm.go); "" for neither
	// plainBody is the body before params.compression (res.request.body,
	// as k6 keeps it); nil when the body went as given.
	plainBody []byte
	hops      hopState // the k6 metrics' hook's (k6Hops)
	// throw is options.throw, or the params' own throw (k6's
	// ParsedHTTPRequest.Throw, request.go:378): a failed request throws.
	throw bool
	// bad is an error k6 finds reading the arguments, which it gives back
	// as an errored Response, the request not sent, under options.throw
	// false (unsent).
	bad error
}

// parseError is an error k6's parseRequest returns
// (js/modules/k6/http/request.go:143-404), with its error code (k6's
// K6Error: 1020 for a URL; 0 for none).
type parseError struct {
	code int
	msg  string
}

func (e *parseError) Error() string { return e.msg }

// unreadable is the call of arguments k6 cannot read: err thrown under
// options.throw, else kept for an errored Response (handleParseRequestError).
func (v *vu) unreadable(err error) builtCall {
	if v.s.Options.Throw {
		panic(v.rt.NewGoError(err))
	}
	return builtCall{bad: err}
}

// requestURL is a request's URL as k6's httpext.ToURL reads it: a string
// that parses, or an http.url template; anything else is k6's invalid URL
// (lib/netext/httpext/url.go:18-70).
func requestURL(u goja.Value) (string, error) {
	var s string
	switch x := u.(type) {
	case *goja.Object:
		if n := x.Get(urlNameKey); n == nil || goja.IsUndefined(n) {
			return "", &parseError{code: 1020, msg: fmt.Sprintf("invalid URL: '#%v'", u.Export())}
		}
		s = x.String()
	default:
		str, ok := u.Export().(string)
		if !ok {
			return "", &parseError{code: 1020, msg: fmt.Sprintf("invalid URL: '#%v'", u.Export())}
		}
		s = str
	}
	if _, err := url.Parse(s); err != nil {
		return "", &parseError{code: 1020, msg: "invalid URL: " + err.Error()}
	}
	return s, nil
}

// bodyTypeError is k6's error for a body that is none of a string, an
// ArrayBuffer, bytes or an object (request.go:262-277): a number, a
// boolean, an array...; nil for those.
func bodyTypeError(body goja.Value) error {
	switch x := body.Export().(type) {
	case string, goja.ArrayBuffer, []byte, map[string]any:
		return nil
	default:
		return &parseError{msg: strings.ReplaceAll(fmt.Sprintf("unknown request body type %T", x), "goja.", "sobek.")}
	}
}

// buildCall reads a request's arguments.
func (v *vu) buildCall(method string, u, body, params goja.Value) builtCall {
	rt := v.rt
	if v.init {
		panic(rt.NewGoError(fmt.Errorf("http.%s in the init code: k6 allows requests only in functions (default, setup, teardown); move it into setup()", strings.ToLower(method))))
	}
	if u == nil {
		u = goja.Undefined()
	}
	rawURL, err := requestURL(u)
	if err != nil {
		return v.unreadable(err)
	}
	hasBody := body != nil && !goja.IsUndefined(body) && !goja.IsNull(body)
	if hasBody {
		if err := bodyTypeError(body); err != nil {
			return v.unreadable(err)
		}
	}
	call := request.Call{Method: method, URL: rawURL, Header: v.plainHeader(), MaxRedirects: defaultMaxRedirects,
		Discard: v.s.Options.DiscardResponseBodies}
	if v.s.Options.MaxRedirects != nil {
		call.MaxRedirects = *v.s.Options.MaxRedirects
	}
	if _, ok := params.(*goja.Object); ok || hasBody {
		call.Header = call.Header.Clone() // params and bodies add to it
	}
	// A request is named by its URL with the secrets masked (per request,
	// without remembering: a token may change every iteration).
	name := v.s.cfg.Redact.Name(urlName(u, call.URL))
	named := ""
	if name != v.s.cfg.Redact.Name(call.URL) {
		named = name // an http.url template
	}
	var tags map[string]string
	var replacing map[string]bool
	throw := v.s.Options.Throw
	jar := v.vuJar()
	binary, callback, auth := false, v.callback, ""
	var encodings []string
	if p, ok := params.(*goja.Object); ok && !goja.IsUndefined(params) && !goja.IsNull(params) {
		var err error
		if encodings, err = compressionParam(p.Get("compression")); err != nil {
			return v.unreadable(err)
		}
		if cb := p.Get("responseCallback"); cb != nil && !goja.IsUndefined(cb) {
			if callback, err = callbackParam(cb); err != nil {
				return v.unreadable(err)
			}
		}
		if name, tags, err = v.applyParams(p, &call, name); err != nil {
			return v.unreadable(err)
		}
		if n, ok := tags["name"]; ok {
			named = n
		}
		if r := p.Get("responseType"); r != nil && !goja.IsUndefined(r) {
			binary = r.String() == "binary"
		}
		if jo, ok := p.Get("jar").(*goja.Object); ok {
			if j, ok := v.jars[jo]; ok {
				jar = j
			}
		}
		call.Cookies, replacing = cookieParams(p.Get("cookies"))
		if t := p.Get("throw"); t != nil && !goja.IsUndefined(t) {
			throw = t.ToBoolean()
		}
		if a := p.Get("auth"); a != nil && !goja.IsUndefined(a) && !goja.IsNull(a) {
			if x := a.String(); x == "digest" || x == "ntlm" {
				auth = x
			}
		}
	}
	var plain []byte
	if hasBody {
		call.Body = v.requestBody(body, call.Header)
		if len(encodings) > 0 {
			plain = call.Body
			call.Body = v.encodeBody(call.Body, encodings, call.Header)
		}
	}
	var jarOf http.CookieJar = jar.jar
	if replacing != nil {
		jarOf = replacingJar{CookieJar: jar.jar, names: replacing}
	}
	return builtCall{call: call, name: name, jar: jarOf, throw: throw, binary: binary, callback: callback, named: named, tags: tags, auth: auth, plainBody: plain}
}

// plainHeader is the header of a request without params or a body: the
// User-Agent alone. The VU's calls share it, so it is only read; a call
// that adds to its header clones it first.
func (v *vu) plainHeader() http.Header {
	if v.plain == nil {
		v.plain = http.Header{"User-Agent": {v.s.userAgent()}}
	}
	return v.plain
}

// applyParams reads k6's params: headers, tags (name), timeout,
// responseType, redirects. It returns the request's name tag and the
// params' tags (k6 tags the request's metrics with all of them), or the
// error k6's parseRequest gives for one (unreadable's).
func (v *vu) applyParams(p *goja.Object, call *request.Call, name string) (string, map[string]string, error) {
	if h, ok := p.Get("headers").(*goja.Object); ok {
		for _, k := range h.Keys() {
			call.Header.Set(k, h.Get(k).String())
		}
	}
	tags, err := tagsArg(p.Get("tags"))
	if err != nil { // k6's parseRequest (js/modules/k6/http/request.go:368)
		return name, nil, fmt.Errorf("invalid HTTP request metric tags: %w", err)
	}
	if n, ok := tags["name"]; ok {
		name = n
	}
	// Digest is http_digest.go's, NTLM http_ntlm.go's.
	if a := p.Get("auth"); a != nil && !goja.IsUndefined(a) && !goja.IsNull(a) {
		switch a.String() {
		case "", "basic", "digest", "ntlm":
		default:
			panic(v.rt.NewGoError(fmt.Errorf("params auth %q is not supported by knee (basic, digest and ntlm are, from the URL's user:password); put a precomputed Authorization header in params.headers, or run the script with k6", a.String())))
		}
	}
	if t := p.Get("timeout"); t != nil && !goja.IsUndefined(t) {
		if call.Timeout, err = durationParam(t); err != nil {
			return name, nil, fmt.Errorf("invalid timeout value: %w", err) // request.go:377
		}
	}
	if r := p.Get("redirects"); r != nil && !goja.IsUndefined(r) {
		call.MaxRedirects = int(r.ToInteger())
	}
	if r := p.Get("responseType"); r != nil && !goja.IsUndefined(r) {
		switch r.String() {
		case "none":
			call.Discard = true
		case "text", "binary":
			call.Discard = false
		default: // k6's enumer's words (lib/netext/httpext/response_type_gen.go:35)
			return name, nil, fmt.Errorf("%s does not belong to ResponseType values", r.String())
		}
	}
	return name, tags, nil
}

// unsent is the Response k6 gives back for a request whose arguments it
// could not read, under options.throw false: warned of, never sent nor
// counted, status 0 and the error's text, with no error_code (k6's
// handleParseRequestError, js/modules/k6/http/request.go:69).
func (v *vu) unsent(err error, warning string) goja.Value {
	v.s.con.line("warn", fmt.Sprintf("%s: %v", warning, err))
	return v.rt.NewDynamicObject(unsentResponse(v, err))
}

// unsentResponse is an unsent request's Response: k6's NewResponse
// (lib/netext/httpext/response.go:75), whose body is an empty byte slice
// (an empty array to the script, not null) and request null, with the
// error's text and code.
func unsentResponse(v *vu, err error) *responseObject {
	r := &responseObject{v: v, own: map[string]goja.Value{"body": v.rt.NewArray(), "request": goja.Null()}}
	if err != nil {
		r.own["error"] = v.rt.ToValue(err.Error())
		var pe *parseError
		if errors.As(err, &pe) {
			r.own["error_code"] = v.rt.ToValue(pe.code)
		}
	}
	r.rep = &r.one[0]
	return r
}

// durationValue is durationParam, its error thrown prefixed with what
// (gRPC's params).
func (v *vu) durationValue(val goja.Value, what string) time.Duration {
	d, err := durationParam(val)
	if err != nil {
		panic(v.rt.NewGoError(fmt.Errorf("%s: %w", what, err)))
	}
	return d
}

// durationParam reads a k6 duration param: a string ("10s", "500" ms) or
// milliseconds; a string that is neither fails with Go's words, as k6's
// ParseExtendedDuration does (lib/types/types.go:27).
func durationParam(val goja.Value) (time.Duration, error) {
	if s, ok := val.Export().(string); ok {
		d, err := ParseDuration(s)
		if err != nil {
			if _, gerr := time.ParseDuration(s); gerr != nil {
				err = gerr
			}
			return 0, err
		}
		return d, nil
	}
	return time.Duration(val.ToFloat() * float64(time.Millisecond)), nil
}

// requestBody is a string, an ArrayBuffer, or an object sent form-encoded.
func (v *vu) requestBody(body goja.Value, h http.Header) []byte {
	switch b := body.Export().(type) {
	case string:
		return []byte(b)
	case goja.ArrayBuffer:
		return b.Bytes()
	case []byte:
		return b
	case map[string]any:
		for _, val := range b {
			if _, ok := val.(*fileData); ok {
				return v.multipartBody(b, h)
			}
		}
		// An array value is the field repeated, in order, as k6 sends it
		// (topping=onion&topping=bacon), not its printed form.
		form := url.Values{}
		for k, val := range b {
			if arr, ok := val.([]any); ok {
				for _, el := range arr {
					form.Add(k, fmt.Sprint(el))
				}
				continue
			}
			form.Set(k, fmt.Sprint(val))
		}
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		return []byte(form.Encode())
	}
	return []byte(body.String())
}

// fileData is what http.file returns: a file to upload in a multipart body.
type fileData struct {
	data        []byte
	filename    string
	contentType string
}

// httpFile is http.file(data, [filename], [contentType]), as k6 has it: data
// a string or an ArrayBuffer; the file name defaults to the time in
// nanoseconds as k6's does, the type to application/octet-stream.
func (v *vu) httpFile(call goja.FunctionCall) goja.Value {
	f := &fileData{contentType: "application/octet-stream"}
	switch d := call.Argument(0).Export().(type) {
	case string:
		f.data = []byte(d)
	case goja.ArrayBuffer:
		f.data = d.Bytes()
	case []byte:
		f.data = d
	default:
		panic(v.rt.NewGoError(fmt.Errorf("http.file: give the data as a string or an ArrayBuffer (from open(path, 'b'))")))
	}
	if n := call.Argument(1); !goja.IsUndefined(n) && !goja.IsNull(n) {
		f.filename = n.String()
	} else {
		f.filename = strconv.FormatInt(time.Now().UnixNano(), 10)
	}
	if c := call.Argument(2); !goja.IsUndefined(c) && !goja.IsNull(c) {
		f.contentType = c.String()
	}
	return v.rt.ToValue(f)
}

// multipartBody sends an object with a file (http.file) as
// multipart/form-data, as k6 does: files as file parts, the rest as fields,
// in key order (so the body is the same every time).
func (v *vu) multipartBody(fields map[string]any, h http.Header) []byte {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, k := range keys {
		var err error
		if f, ok := fields[k].(*fileData); ok {
			hdr := textproto.MIMEHeader{}
			hdr.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, escapeQuotes(k), escapeQuotes(f.filename)))
			hdr.Set("Content-Type", f.contentType)
			var part io.Writer
			if part, err = w.CreatePart(hdr); err == nil {
				_, err = part.Write(f.data)
			}
		} else {
			err = w.WriteField(k, fmt.Sprint(fields[k]))
		}
		if err != nil { // a bytes.Buffer does not fail
			panic(v.rt.NewGoError(err))
		}
	}
	w.Close()
	h.Set("Content-Type", w.FormDataContentType())
	return buf.Bytes()
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

func escapeQuotes(s string) string { return quoteEscaper.Replace(s) }

// errorCode is k6's error_code: 0, 1000+status for HTTP errors, or a
// failed request's code (k6Error).
func errorCode(rep *request.Reply) int {
	if rep.Err == nil {
		if rep.Status >= 400 {
			return 1000 + rep.Status
		}
		return 0
	}
	code, _ := k6Error(rep.Err)
	return code
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// responseObject is k6's Response object, and the request it answers:
// the call, its replies and the object are one allocation. It is a
// dynamic object whose properties are made when first read: most scripts
// read one or two of them, and building them all cost as much CPU as the
// request itself.
type responseObject struct {
	v    *vu
	b    builtCall
	reps []request.Reply // sendCall's
	rep  *request.Reply  // the response: the last of reps
	one  [1]request.Reply
	own  map[string]goja.Value // made or set properties
}

// send sends r's call through conns (nil: the shared transport).
func (r *responseObject) send(ctx context.Context, conns *request.Conns) {
	r.reps = r.v.sendCall(ctx, &r.b, conns, r.one[:0])
	r.rep = &r.reps[len(r.reps)-1]
}

// sentBody is res.request.body: the body as the script gave it, before
// params.compression.
func (r *responseObject) sentBody() []byte {
	if r.b.plainBody != nil {
		return r.b.plainBody
	}
	return r.b.call.Body
}

// responseKeys are a Response's properties, in k6's order.
var responseKeys = []string{"status", "status_text", "proto", "url", "body", "headers", "timings", "tls_version", "tls_cipher_suite", "ocsp", "remote_ip", "remote_port", "error", "error_code", "request", "json", "html", "submitForm", "clickLink", "cookies"}

func (r *responseObject) Get(key string) goja.Value {
	if val, ok := r.own[key]; ok {
		return val
	}
	val := r.make(key)
	if val == nil {
		return nil
	}
	switch key {
	case "headers", "timings", "request", "json", "body", "cookies", "ocsp":
		// Objects keep their identity between reads (res.headers === res.headers).
		if r.own == nil {
			r.own = map[string]goja.Value{}
		}
		r.own[key] = val
	}
	return val
}

func (r *responseObject) make(key string) goja.Value {
	rt, rep := r.v.rt, r.rep
	switch key {
	case "status":
		return rt.ToValue(rep.Status)
	case "status_text":
		return rt.ToValue(statusText(rep))
	case "remote_ip", "remote_port": // the connection's peer, as k6: "" and 0 without one
		host, port := remoteHostPort(rep.RemoteAddr)
		if key == "remote_ip" {
			return rt.ToValue(host)
		}
		return rt.ToValue(port)
	case "proto":
		return rt.ToValue(rep.Proto)
	case "url":
		return rt.ToValue(rep.URL)
	case "error":
		_, msg := k6Error(rep.Err)
		return rt.ToValue(msg)
	case "error_code":
		return rt.ToValue(errorCode(rep))
	case "body":
		if r.b.call.Discard || rep.Body == nil && rep.Err != nil {
			return goja.Null()
		}
		body, err := decodeBody(rep.Headers(), rep.Body)
		if err != nil {
			panic(rt.NewGoError(err))
		}
		if r.b.binary {
			return rt.ToValue(rt.NewArrayBuffer(append([]byte(nil), body...)))
		}
		return rt.ToValue(string(body))
	case "headers":
		hdr := rt.NewObject()
		for k, vals := range rep.Headers() {
			must(hdr.Set(k, strings.Join(vals, ", ")))
		}
		return hdr
	case "timings":
		t := rt.NewObject()
		tm := rep.Timings
		must(t.Set("blocked", ms(tm.Blocked)))
		must(t.Set("connecting", ms(tm.Connecting)))
		must(t.Set("tls_handshaking", ms(tm.TLSHandshaking)))
		must(t.Set("sending", ms(tm.Sending)))
		must(t.Set("waiting", ms(tm.Waiting)))
		must(t.Set("receiving", ms(tm.Receiving)))
		must(t.Set("duration", ms(tm.Duration)))
		return t
	case "request":
		return r.request()
	case "tls_version":
		return rt.ToValue(tlsVersionName(rep.TLSVersion))
	case "tls_cipher_suite":
		if rep.TLSCipherSuite == 0 {
			return rt.ToValue("")
		}
		return rt.ToValue(cipherSuiteName(rep.TLSCipherSuite))
	case "json":
		return rt.ToValue(r.json)
	case "html": // res.html([selector]): the body as k6/html's Selection
		return rt.ToValue(func(call goja.FunctionCall) goja.Value {
			doc := r.v.parseDoc(r.htmlText())
			if s := call.Argument(0); !goja.IsUndefined(s) && !goja.IsNull(s) {
				doc = doc.Find(s.String())
			}
			return r.v.selection(doc, r.rep.URL)
		})
	case "submitForm":
		return rt.ToValue(r.submitForm)
	case "clickLink":
		return rt.ToValue(r.clickLink)
	case "ocsp":
		return r.ocsp()
	case "cookies":
		return r.cookies()
	}
	return nil
}

// request is res.request as k6 has it: method, url, body, the headers as
// lists of values (Cookie included, as net/http added the cookies), and
// the cookies sent by name, each a list of {name, value, replace}.
func (r *responseObject) request() goja.Value {
	rt := r.v.rt
	sent := &http.Request{Header: r.b.call.Header.Clone()}
	if sent.Header == nil {
		sent.Header = http.Header{}
	}
	cookies := rt.NewObject()
	byName := map[string][]any{}
	var names []string
	for _, ck := range r.rep.SentCookies {
		sent.AddCookie(ck)
		c := rt.NewObject()
		must(c.Set("name", ck.Name))
		must(c.Set("value", ck.Value))
		must(c.Set("replace", false))
		if _, ok := byName[ck.Name]; !ok {
			names = append(names, ck.Name)
		}
		byName[ck.Name] = append(byName[ck.Name], c)
	}
	for _, n := range names {
		must(cookies.Set(n, rt.NewArray(byName[n]...)))
	}
	headers := rt.NewObject()
	for k, vals := range sent.Header {
		list := make([]any, len(vals))
		for i, val := range vals {
			list[i] = val
		}
		must(headers.Set(k, rt.NewArray(list...)))
	}
	req := rt.NewObject()
	must(req.Set("method", r.b.call.Method))
	must(req.Set("url", r.b.call.URL))
	must(req.Set("headers", headers))
	must(req.Set("body", string(r.sentBody())))
	must(req.Set("cookies", cookies))
	return req
}

// tlsVersionName is k6's res.tls_version: "tls1.0" ... "tls1.3", "" over
// plain http.
func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "tls1.0"
	case tls.VersionTLS11:
		return "tls1.1"
	case tls.VersionTLS12:
		return "tls1.2"
	case tls.VersionTLS13:
		return "tls1.3"
	}
	return ""
}

// cipherSuiteName is k6's res.tls_cipher_suite: the IANA name Go gives,
// except the two TLS 1.2 ChaCha20 suites, which k6 names without the
// _SHA256 suffix (its lib.SupportedTLSCipherSuitesToString).
func cipherSuiteName(id uint16) string {
	switch id {
	case tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:
		return "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"
	case tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:
		return "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"
	}
	return tls.CipherSuiteName(id)
}

// cookies is res.cookies: the response's Set-Cookie cookies by name, each
// a list of {name, value, domain, path, expires, max_age, secure, http_only}.
func (r *responseObject) cookies() goja.Value {
	rt := r.v.rt
	byName := map[string][]any{}
	var names []string
	for _, ck := range (&http.Response{Header: r.rep.Headers()}).Cookies() {
		c := rt.NewObject()
		must(c.Set("name", ck.Name))
		must(c.Set("value", ck.Value))
		must(c.Set("domain", ck.Domain))
		must(c.Set("path", ck.Path))
		// k6's own arithmetic (lib/netext/httpext/request.go:326), which for
		// a cookie without Expires (Go's zero time, beyond what UnixNano
		// holds) gives -6795364578871, not 0.
		must(c.Set("expires", ck.Expires.UnixNano()/1000000))
		must(c.Set("max_age", ck.MaxAge))
		must(c.Set("secure", ck.Secure))
		must(c.Set("http_only", ck.HttpOnly))
		if _, ok := byName[ck.Name]; !ok {
			names = append(names, ck.Name)
		}
		byName[ck.Name] = append(byName[ck.Name], c)
	}
	out := rt.NewObject()
	for _, n := range names {
		must(out.Set(n, rt.NewArray(byName[n]...)))
	}
	return out
}

// json is res.json(selector): the whole body parsed once, or the part a
// gjson selector picks (k6's own selector syntax: "user.tokens.0.value",
// "items.#", "items.#(id==3).name", ...), undefined when it picks nothing
// or the body is not JSON (js/modules/k6/http/response.go:66-112).
func (r *responseObject) json(call goja.FunctionCall) goja.Value {
	rt := r.v.rt
	b := r.Get("body")
	if goja.IsNull(b) || goja.IsUndefined(b) {
		panic(rt.NewGoError(errors.New("the body is null so we can't transform it to JSON - this likely was because of a request error getting the response")))
	}
	body := bodyText(b)
	parse, _ := goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
	sel := call.Argument(0)
	if !goja.IsUndefined(sel) && sel.String() != "" {
		if !gjson.Valid(body) {
			return goja.Undefined()
		}
		res := gjson.Get(body, sel.String())
		if !res.Exists() {
			return goja.Undefined()
		}
		val, err := parse(goja.Undefined(), rt.ToValue(res.Raw))
		if err != nil {
			panic(err)
		}
		return val
	}
	if parsed, ok := r.own["\x00parsed"]; ok {
		return parsed
	}
	val, err := parse(goja.Undefined(), rt.ToValue(body))
	if err != nil {
		if jerr := jsonError(body); jerr != nil {
			panic(rt.NewGoError(jerr))
		}
		panic(err)
	}
	if r.own == nil {
		r.own = map[string]goja.Value{}
	}
	r.own["\x00parsed"] = val
	return val
}

// htmlText is the response's body as text for res.html() (and
// submitForm, clickLink, which k6 reads through it), which cannot go on
// without one: k6's error (js/modules/k6/http/response.go:43).
func (r *responseObject) htmlText() string {
	b := r.Get("body")
	if goja.IsNull(b) || goja.IsUndefined(b) {
		panic(r.v.rt.NewGoError(errors.New("the body is null so we can't transform it to HTML - this likely was because of a request error getting the response")))
	}
	return bodyText(b)
}

// bodyText is a response body as text: a string as it is, a binary body
// (an ArrayBuffer) as its bytes.
func bodyText(b goja.Value) string {
	if ab, ok := b.Export().(goja.ArrayBuffer); ok {
		return string(ab.Bytes())
	}
	return b.String()
}

func (r *responseObject) Set(key string, val goja.Value) bool {
	if r.own == nil {
		r.own = map[string]goja.Value{}
	}
	r.own[key] = val
	return true
}

func (r *responseObject) Has(key string) bool {
	if _, ok := r.own[key]; ok {
		return true
	}
	for _, k := range responseKeys {
		if k == key {
			return true
		}
	}
	return false
}

func (r *responseObject) Delete(key string) bool {
	if r.own == nil {
		r.own = map[string]goja.Value{}
	}
	r.own[key] = goja.Undefined()
	return true
}

func (r *responseObject) Keys() []string {
	keys := append([]string(nil), responseKeys...)
	for k := range r.own {
		if k != "\x00parsed" && !r.Has(k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func statusText(rep *request.Reply) string {
	if rep.Status == 0 {
		return ""
	}
	return fmt.Sprintf("%d %s", rep.Status, http.StatusText(rep.Status))
}

// userAgent is what the script's HTTP requests and WebSocket handshakes
// send as User-Agent: options.userAgent, else knee's own.
func (s *Script) userAgent() string {
	if s.Options.UserAgent != nil {
		return *s.Options.UserAgent
	}
	return "knee (k6 script)"
}

// remoteHostPort splits a connection's peer address as k6 gives it in
// res.remote_ip and res.remote_port.
func remoteHostPort(a net.Addr) (string, int) {
	if a == nil {
		return "", 0
	}
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "", 0
	}
	n, _ := strconv.Atoi(port)
	return host, n
}

// jsonError is k6's error for a body that is not JSON: Go's decoding
// error with the line and character where it stopped, counted as k6's
// checkErrorInJSON counts them (js/modules/k6/http/response.go:114-144);
// nil when Go decodes it.
func jsonError(body string) error {
	var v any
	err := json.Unmarshal([]byte(body), &v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	offset := int(se.Offset)
	if offset > 0 {
		offset-- // Offset counts the bytes read; k6 looks at the last one
	}
	line, char := 1, 0
	for i, c := range body {
		if c == '\n' {
			line++
			char = 0
		} else {
			char++
		}
		if i >= offset {
			if c == '\n' {
				char = 1
			}
			break
		}
	}
	return fmt.Errorf("cannot parse json due to an error at line %d, character %d , error: %w", line, char, err)
}
