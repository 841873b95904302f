package request

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newSender(t testing.TB, specs []Spec, o Options) *Sender {
	t.Helper()
	s, err := NewSender(specs, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// seen is what a test server saw of one request.
type seen struct {
	method, path, query, body string
	header                    http.Header
	proto                     int
}

func recordingServer(t *testing.T, respBody string) (*httptest.Server, <-chan seen) {
	ch := make(chan seen, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h := r.Header.Clone()
		h.Set("Host", r.Host)
		ch <- seen{r.Method, r.URL.Path, r.URL.RawQuery, string(b), h, r.ProtoMajor}
		io.WriteString(w, respBody)
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

func TestDoSendsRenderedRequest(t *testing.T) { forEachClient(t, testDoSendsRenderedRequest) }

func testDoSendsRenderedRequest(t *testing.T, cl client) {
	srv, got := recordingServer(t, strings.Repeat("x", 1000))
	s := cl.sender(t, []Spec{{
		Method:  "POST",
		URL:     srv.URL + "/api/books/{isbn}?run={vu}-{iter}",
		Headers: []Header{{"Content-Type", "application/json"}, {"x-isbn", "{isbn}"}, {"host", "books-{vu}.example"}},
		Body:    `{"isbn":"{isbn}"}`,
	}}, Options{Vars: map[string][]string{"isbn": {"9780441172719"}}})

	res := s.Do(context.Background(), 3, 7)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	r := <-got
	want := seen{method: "POST", path: "/api/books/9780441172719", query: "run=3-7", body: `{"isbn":"9780441172719"}`}
	if r.method != want.method || r.path != want.path || r.query != want.query || r.body != want.body {
		t.Errorf("server saw %+v, want %+v", r, want)
	}
	if r.header.Get("X-Isbn") != "9780441172719" || r.header.Get("Content-Type") != "application/json" || r.header.Get("Host") != "books-3.example" {
		t.Errorf("headers %v", r.header)
	}
	if ae := r.header.Get("Accept-Encoding"); ae != "" {
		t.Errorf("Accept-Encoding %q was negotiated behind the caller's back", ae)
	}
	// Bytes on the wire, by hand. Out: the request line (48), Host (23),
	// User-Agent: Go-http-client/1.1 (32), Content-Length: 24 (20),
	// Content-Type (32), X-Isbn (23), the blank line (2) and the body (24).
	// In: net/http's server writes the status line (17), a Date (37),
	// Content-Length: 1000 (22), the sniffed Content-Type (41), the blank
	// line (2) and the 1000-byte body.
	const out, in = 48 + 23 + 32 + 20 + 32 + 23 + 2 + 24, 17 + 37 + 22 + 41 + 2 + 1000
	if res.Status != 200 || res.BytesIn != in || res.BytesOut != out || res.ErrClass != "" {
		t.Errorf("result %+v, want status 200, %d bytes in, %d out", res, in, out)
	}
	if res.Name != srv.URL+"/api/books/{isbn}?run={vu}-{iter}" {
		t.Errorf("Name = %q, want the URL template", res.Name)
	}
	if res.Sent.IsZero() || res.Done.Before(res.Sent) {
		t.Errorf("Sent %v, Done %v", res.Sent, res.Done)
	}
}

func TestDoPicksByWeight(t *testing.T) { forEachClient(t, testDoPicksByWeight) }

func testDoPicksByWeight(t *testing.T, cl client) {
	srv, _ := recordingServer(t, "")
	s := cl.sender(t, []Spec{
		{Name: "light", URL: srv.URL + "/a"},
		{Name: "heavy", URL: srv.URL + "/b", Weight: 3},
	}, Options{Seed: 7})
	counts := map[string]int{}
	for it := uint64(0); it < 20000; it++ {
		counts[s.choose(it%50, it).name]++
	}
	// 20000 draws with p=1/4: 5000 expected, sd ~61; allow 5 sd.
	if c := counts["light"]; math.Abs(float64(c)-5000) > 310 {
		t.Errorf("light chosen %d of 20000 times, want ~5000", c)
	}
	if got := s.Names(); len(got) != 2 || got[0] != "light" || got[1] != "heavy" {
		t.Errorf("Names = %v", got)
	}
	for i := 0; i < 20; i++ {
		if s.Do(context.Background(), 1, uint64(i)).Status != 200 {
			t.Fatal("request failed")
		}
	}
}

func TestDoKeepsConnectionsAlive(t *testing.T) { forEachClient(t, testDoKeepsConnectionsAlive) }

func testDoKeepsConnectionsAlive(t *testing.T, cl client) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	s := cl.sender(t, []Spec{{URL: srv.URL}}, Options{})
	for i := 0; i < 50; i++ {
		if res := s.Do(context.Background(), 1, uint64(i)); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("50 sequential requests opened %d connections, want 1", n)
	}
}

func TestDoRespectsMaxConnsPerHost(t *testing.T) { forEachClient(t, testDoRespectsMaxConnsPerHost) }

func testDoRespectsMaxConnsPerHost(t *testing.T, cl client) {
	var conns, inFlight atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		<-release
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	s := cl.sender(t, []Spec{{URL: srv.URL}}, Options{Transport: TransportOptions{MaxConnsPerHost: 2}})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() { s.Do(context.Background(), uint64(i), 0) })
	}
	for inFlight.Load() < 2 { // both connections busy, 6 requests queued behind them
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if n := conns.Load(); n != 2 {
		t.Errorf("8 concurrent requests opened %d connections, want 2", n)
	}
}

func TestNewSenderReportsEveryProblem(t *testing.T) {
	_, err := NewSender([]Spec{
		{Name: "a", URL: "http://h/{isbn}", Method: "GE T", Weight: -1},
		{Name: "b", URL: "/relative", Timeout: -time.Second},
		{Name: "c", URL: "http://h/", Body: "{x", Headers: []Header{{"Bad Key", "v"}}},
	}, Options{})
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a *FieldError", e)
		}
		fields = append(fields, fe.Name+"."+fe.Field)
	}
	want := "a.method a.weight a.url b.timeout b.url c.body c.headers"
	if got := strings.Join(fields, " "); got != want {
		t.Errorf("problems %q, want %q\n%v", got, want, err)
	}
	if _, err := NewSender(nil, Options{}); err == nil {
		t.Error("no requests: want an error")
	}
}

func TestDoHTTP2(t *testing.T) {
	proto := func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Proto", r.Proto) }
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(proto))
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	h2c := httptest.NewUnstartedServer(http.HandlerFunc(proto))
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetHTTP1(true)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	defer h2c.Close()

	pool := tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	tests := []struct {
		name  string
		url   string
		http2 bool
		want  string
	}{
		{"tls default", tlsSrv.URL, false, "HTTP/1.1"},
		{"tls h2", tlsSrv.URL, true, "HTTP/2.0"},
		{"cleartext default", h2c.URL, false, "HTTP/1.1"},
		{"cleartext h2c", h2c.URL, true, "HTTP/2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTransport(TransportOptions{HTTP2: tt.http2, RootCAs: pool})
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr}).Get(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("X-Proto"); got != tt.want {
				t.Errorf("server saw %s, want %s", got, tt.want)
			}
		})
	}
}

// client is one of the Sender's two ways of sending HTTP/1.1: the Do tests
// run against both.
type client struct {
	name    string
	netHTTP bool
	loop    bool // Do goes through the Sender's event loop (loopDriver)
}

// forEachClient runs test with the lean client, net/http and, where there
// is one, the event loop, which must give Do's results.
func forEachClient(t *testing.T, test func(*testing.T, client)) {
	clients := []client{{"lean", false, false}, {"net/http", true, false}}
	if loopPlatform {
		clients = append(clients, client{"loop", false, true})
	}
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) { test(t, cl) })
	}
}

// sender builds a Sender that sends through cl, checking that the lean
// client takes every plain http:// request it should.
func (cl client) sender(t testing.TB, specs []Spec, o Options) *testSender {
	t.Helper()
	o.NetHTTPOnly = cl.netHTTP
	s := newSender(t, specs, o)
	for i, c := range s.reqs {
		lean := c.plan != nil
		if want := !cl.netHTTP && useLean(o) && strings.HasPrefix(specs[i].URL, "http://"); lean != want {
			t.Fatalf("request %d (%s): lean client %v, want %v", i, specs[i].URL, lean, want)
		}
	}
	ts := &testSender{Sender: s}
	if cl.loop && s.lean != nil {
		ts.drv = startLoopDriver(t, s)
	}
	return ts
}
