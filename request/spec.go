package request

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// DefaultTimeout is the per-request timeout when neither the Spec nor the
// Options set one (k6's default too).
const DefaultTimeout = 60 * time.Second

// Header is one request header; Value is a template.
type Header struct {
	Key, Value string
}

// Spec is one request as configured. Zero fields take their defaults.
type Spec struct {
	Name    string        // name tag the request is recorded under; default: the URL template
	Method  string        // default GET
	URL     string        // template; must render to an absolute http:// or https:// URL
	Headers []Header      // values are templates; sent in this order
	Body    string        // template
	Weight  int           // relative share of iterations; default 1
	Timeout time.Duration // default Options.Timeout, else DefaultTimeout
}

// Tag is the name the request is recorded under: Name, else the URL template.
func (s Spec) Tag() string {
	if s.Name != "" {
		return s.Name
	}
	return s.URL
}

// FieldError is a problem with one field of one Spec. Field is the
// scenario-file key ("url", "method", "headers", "body", "weight", "timeout");
// Header names the header when Field is "headers".
type FieldError struct {
	Index  int    // position of the Spec in its list
	Name   string // its name tag
	Field  string
	Header string
	Err    error
}

func (e *FieldError) Error() string {
	field := e.Field
	if e.Header != "" {
		field += " " + e.Header
	}
	return fmt.Sprintf("request %q: %s: %v", e.Name, field, e.Err)
}

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

type headerTemplate struct {
	key string
	val Template
}

// compiled is a Spec parsed once, with everything static prepared up front.
type compiled struct {
	name, method string
	url          Template
	staticURL    *url.URL // non-nil when url has no placeholders
	headers      []headerTemplate
	staticHeader http.Header // non-nil when no header value has placeholders
	host         *Template   // a Host header: net/http takes it from Request.Host only
	body         Template
	staticBody   []byte // body when it has no placeholders
	timeout      time.Duration
	weight       int
	plan         *leanPlan // nil when the lean client never sends it
}

// CheckSpecs reports every problem of specs (each a *FieldError) without
// building anything else. vars may be nil.
func CheckSpecs(specs []Spec, vars *Vars) []error {
	var errs []error
	for i, s := range specs {
		if _, err := compile(i, s, vars, DefaultTimeout); err != nil {
			errs = append(errs, err...)
		}
	}
	return errs
}

func compile(i int, s Spec, vars *Vars, defTimeout time.Duration) (compiled, []error) {
	c := compiled{name: s.Tag(), method: s.Method, weight: s.Weight, timeout: s.Timeout}
	var errs []error
	fail := func(field, header string, err error) {
		errs = append(errs, &FieldError{Index: i, Name: c.name, Field: field, Header: header, Err: err})
	}
	if c.method == "" {
		c.method = http.MethodGet
	} else if !isToken(c.method) {
		fail("method", "", fmt.Errorf("%q is not an HTTP method; use e.g. GET or POST", s.Method))
	}
	switch {
	case c.weight == 0:
		c.weight = 1
	case c.weight < 0:
		fail("weight", "", fmt.Errorf("%d is negative; use a positive integer (default 1)", s.Weight))
	}
	switch {
	case c.timeout == 0:
		c.timeout = defTimeout
	case c.timeout < 0:
		fail("timeout", "", fmt.Errorf("%v is negative; use e.g. 10s (default %v)", s.Timeout, DefaultTimeout))
	}
	var err error
	if c.url, err = ParseTemplate(s.URL, vars); err != nil {
		fail("url", "", err)
	} else if u, err := checkURL(c.url, vars); err != nil {
		fail("url", "", err)
	} else if c.url.Static() {
		c.staticURL = u
	}
	if c.body, err = ParseTemplate(s.Body, vars); err != nil {
		fail("body", "", err)
	} else if c.body.Static() {
		c.staticBody = []byte(s.Body)
	}
	static := true
	for _, h := range s.Headers {
		t, err := ParseTemplate(h.Value, vars)
		switch {
		case !isToken(h.Key):
			fail("headers", h.Key, errors.New("not a valid header name; use letters, digits and -"))
		case err != nil:
			fail("headers", h.Key, err)
		}
		if key := http.CanonicalHeaderKey(h.Key); key == "Host" {
			c.host = &t
			if err == nil && t.Static() {
				if _, herr := checkHost(t.Render(nil, 0, 0, 0)); herr != nil {
					fail("headers", h.Key, herr)
				}
			}
		} else {
			static = static && t.Static()
			c.headers = append(c.headers, headerTemplate{key: key, val: t})
		}
	}
	if static {
		c.staticHeader = make(http.Header, len(c.headers))
		for _, h := range c.headers {
			c.staticHeader.Add(h.key, h.val.Text())
		}
	}
	return c, errs
}

// checkURL renders t with sample values ({vu} and {iter} = 1, each
// variable's first value) and checks the result is an absolute HTTP URL.
func checkURL(t Template, vars *Vars) (*url.URL, error) {
	var sample []byte
	for _, s := range t.segs {
		switch s.kind {
		case segLiteral:
			sample = append(sample, s.lit...)
		case segVU, segIter:
			sample = append(sample, '1')
		case segVar:
			sample = append(sample, vars.values[s.v][0]...)
		}
	}
	u, err := url.Parse(string(sample))
	if err != nil {
		return nil, fmt.Errorf("malformed URL %q: %w", sample, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL; write it in full, e.g. http://127.0.0.1:5080/api/books/{isbn}", sample)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host; write it in full, e.g. http://127.0.0.1:5080/", sample)
	}
	return u, nil
}

// isToken reports whether s is an RFC 9110 token (methods, header names).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isNameChar(c) {
			continue
		}
		switch c {
		case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '`', '|', '~':
			continue
		}
		return false
	}
	return true
}
