package request

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/knee-dev/knee/load"
)

// ErrInterrupted marks a request cut short because the caller's context
// ended (the run stopped), not because the target failed. The Result's Err
// also wraps the context's error.
var ErrInterrupted = errors.New("request interrupted: the run stopped")

// chooseSalt separates the request choice from every variable's choice.
const chooseSalt = 0x5851f42d4c957f2d

// Options configure a Sender. The zero value sends plain http:// requests
// with the lean HTTP/1.1 client and the rest with a fresh tuned transport,
// seed 0 and the default timeout.
type Options struct {
	Vars      map[string][]string // value lists for {name} placeholders
	Seed      uint64              // picks are a function of (Seed, vu, iter)
	Timeout   time.Duration       // for Specs without one; default DefaultTimeout
	Transport TransportOptions
	// RoundTripper overrides the transport built from Transport (tests,
	// several Senders sharing connections). The Sender does not close it,
	// and sends every request through it.
	RoundTripper http.RoundTripper
	// NetHTTPOnly sends every request through net/http, never through the
	// lean HTTP/1.1 client (see the package doc).
	NetHTTPOnly bool
}

// Sender sends one weighted choice of its requests per iteration. It
// implements load.Iteration and is safe for concurrent use.
type Sender struct {
	reqs    []compiled
	cum     []int // cumulative weights
	vars    *Vars
	seed    uint64
	rt      http.RoundTripper
	owned   *http.Transport // closed by Close; nil when the caller gave one
	scratch sync.Pool       // *[]byte for rendering URLs and headers
	// lean is the HTTP/1.1 client for plain http:// targets; nil when
	// every request goes through rt.
	lean     *leanPool
	leanBufs sync.Pool // *leanBuf
}

var _ load.Iteration = (*Sender)(nil)

// NewSender parses and checks every Spec once. The error joins every
// problem found (each a *FieldError, or a variable's problem).
func NewSender(specs []Spec, o Options) (*Sender, error) {
	if len(specs) == 0 {
		return nil, errors.New("no requests to send; give at least one URL")
	}
	vars, err := NewVars(o.Vars)
	if err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	s := &Sender{vars: vars, seed: o.Seed}
	var errs []error
	total := 0
	for i, spec := range specs {
		c, cerrs := compile(i, spec, vars, timeout)
		errs = append(errs, cerrs...)
		total += c.weight
		s.reqs = append(s.reqs, c)
		s.cum = append(s.cum, total)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	rt := o.RoundTripper
	if rt == nil {
		s.owned = NewTransport(o.Transport)
		rt = s.owned
	}
	s.rt = rt
	s.scratch.New = func() any { b := make([]byte, 0, 512); return &b }
	if useLean(o) {
		s.planLean()
	}
	return s, nil
}

// useLean reports whether o leaves plain HTTP/1.1 requests to the lean
// client: not when the caller gave a transport, asked for HTTP/2, bounded
// the connections per host, or asked for net/http.
func useLean(o Options) bool {
	return o.RoundTripper == nil && !o.NetHTTPOnly && o.Transport.Client != ClientNetHTTP &&
		!o.Transport.HTTP2 && o.Transport.MaxConnsPerHost <= 0
}

// planLean prepares every request the lean client can send.
func (s *Sender) planLean() {
	for i := range s.reqs {
		if p, ok := planLean(&s.reqs[i]); ok {
			s.reqs[i].plan = &p
			s.lean = cmp.Or(s.lean, newLeanPool())
		}
	}
	s.leanBufs.New = func() any { return &leanBuf{parts: make([]byte, 0, 512), out: make([]byte, 0, 512)} }
}

// Names are the distinct name tags of the requests, in Spec order.
func (s *Sender) Names() []string {
	var names []string
	seen := make(map[string]bool, len(s.reqs))
	for _, c := range s.reqs {
		if !seen[c.name] {
			seen[c.name] = true
			names = append(names, c.name)
		}
	}
	return names
}

// Close closes the idle connections of the transport the Sender built and
// of its lean client; the lean client's busy connections close when their
// requests end. A Sender still sends after Close, but keeps no connections.
func (s *Sender) Close() {
	if s.owned != nil {
		s.owned.CloseIdleConnections()
	}
	if s.lean != nil {
		s.lean.close()
	}
}

// choose picks a request by weight for (vu, iter).
func (s *Sender) choose(vu, iter uint64) *compiled {
	if len(s.reqs) == 1 {
		return &s.reqs[0]
	}
	r := pick(s.seed^chooseSalt, vu, iter, s.cum[len(s.cum)-1])
	return &s.reqs[sort.SearchInts(s.cum, r+1)]
}

// Do sends one request. Sent is stamped right before the round trip and
// Done after the response body has been read to the end and discarded, so
// the time includes the whole response. Redirects are not followed: a 3xx
// is the target's answer and is counted as such, and following it would
// time two requests as one. It returns when ctx is done.
func (s *Sender) Do(ctx context.Context, vu, iter uint64) load.Result {
	c := s.choose(vu, iter)
	res := load.Result{Name: c.name}
	if c.plan != nil && s.doLean(ctx, c, vu, iter, &res) {
		return res
	}
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := s.build(rctx, c, vu, iter)
	if err != nil {
		res.Sent = time.Now()
		res.Done = res.Sent
		res.Err, res.ErrClass = err, ClassOther
		return res
	}
	var wire wireMeter
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: wire.gotConn}))
	res.Sent = time.Now()
	resp, err := s.rt.RoundTrip(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		if cerr := resp.Body.Close(); err == nil {
			err = cerr
		}
	}
	res.Done = time.Now()
	res.BytesIn, res.BytesOut = wire.bytes()
	if err != nil {
		res.Err, res.ErrClass = s.failure(ctx, err)
		return res
	}
	res.Status = resp.StatusCode
	return res
}

// failure classifies err, telling the run's own end apart from the target's failures.
func (s *Sender) failure(ctx context.Context, err error) (error, string) {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrInterrupted, err), ClassOther
	}
	return err, Classify(err)
}

// build renders c into a request bound to ctx, reusing everything static.
func (s *Sender) build(ctx context.Context, c *compiled, vu, iter uint64) (*http.Request, error) {
	bp := s.scratch.Get().(*[]byte)
	defer s.scratch.Put(bp)
	u := c.staticURL
	if u == nil {
		*bp = c.url.Append((*bp)[:0], s.vars, s.seed, vu, iter)
		var err error
		if u, err = url.Parse(string(*bp)); err != nil {
			return nil, fmt.Errorf("request %q: rendered URL: %w", c.name, err)
		}
	}
	hdr := c.staticHeader
	if hdr == nil {
		hdr = make(http.Header, len(c.headers))
		for _, h := range c.headers {
			*bp = h.val.Append((*bp)[:0], s.vars, s.seed, vu, iter)
			hdr[h.key] = append(hdr[h.key], string(*bp))
		}
	}
	req := &http.Request{
		Method:     c.method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     hdr,
		Host:       u.Host,
	}
	if c.host != nil {
		*bp = c.host.Append((*bp)[:0], s.vars, s.seed, vu, iter)
		h, err := checkHost(string(*bp))
		if err != nil {
			return nil, fmt.Errorf("request %q: %w", c.name, err)
		}
		req.Host = h
	}
	data := c.staticBody
	if !c.body.Static() {
		data = c.body.Append(make([]byte, 0, len(c.body.text)+64), s.vars, s.seed, vu, iter)
	}
	if len(data) > 0 {
		req.ContentLength = int64(len(data))
		req.Body = &body{data: data}
		req.GetBody = func() (io.ReadCloser, error) { return &body{data: data}, nil }
	}
	return req.WithContext(ctx), nil
}

// body is a request body over bytes that are never modified, so the
// transport may read it even after the round trip returned.
type body struct {
	data []byte
	off  int
}

func (b *body) Read(p []byte) (int, error) {
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	n := copy(p, b.data[b.off:])
	b.off += n
	return n, nil
}

func (b *body) Close() error { return nil }
