package k6script

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// inFlight is a server that counts the requests it holds at once. The
// first `hold` requests wait until that many are in, then a moment more
// for any beyond the bound to arrive, so a batch let go all at once shows
// more than its bound, and one bounded as k6 bounds it shows its bound.
type inFlight struct {
	hold int

	mu      sync.Mutex
	now     int
	most    int
	served  int
	open    bool // reached is closed
	reached chan struct{}
}

func (f *inFlight) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.now++
	f.most = max(f.most, f.now)
	first := f.served < f.hold
	f.served++
	if f.now == f.hold && !f.open {
		f.open = true
		close(f.reached)
	}
	f.mu.Unlock()
	if first {
		select {
		case <-f.reached:
			time.Sleep(100 * time.Millisecond) // room for requests over the bound
		case <-time.After(10 * time.Second): // the bound never reached: f.most says so
		}
	}
	f.mu.Lock()
	f.now--
	f.mu.Unlock()
}

// k6 lets min(options.batch, n) requests of an http.batch go at once, and
// at most options.batchPerHost to one host (lib/netext/httpext/batch.go
// MakeBatchRequests; its run command's defaults, 20 and 6). knee sent
// every request at once: ten to one host were ten connections where k6
// opens six.
func TestBatchBoundsRequestsInFlight(t *testing.T) {
	for _, c := range []struct {
		name    string
		options string
		n       int // requests in the batch, to one host
		want    int // the most in flight
	}{
		{"k6's defaults: 6 to one host", `{}`, 10, 6},
		{"batchPerHost", `{ batchPerHost: 2 }`, 5, 2},
		{"batch below batchPerHost", `{ batch: 3 }`, 8, 3},
		{"no bound per host", `{ batchPerHost: 0 }`, 9, 9},
		{"as strings, as k6's null.Int", `{ batch: '4', batchPerHost: '0' }`, 7, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &inFlight{hold: c.want, reached: make(chan struct{})}
			srv := httptest.NewServer(f)
			defer srv.Close()
			s := loadScript(t, `import http from 'k6/http';
export const options = `+c.options+`;
export default function () {
  const reqs = [];
  for (let i = 0; i < `+strconv.Itoa(c.n)+`; i++) reqs.push(__ENV.BASE + '/' + i);
  http.batch(reqs);
}`, map[string]string{"BASE": srv.URL})
			got := iterateOnce(t, s)
			if len(got.all) != c.n {
				t.Fatalf("%d samples; want %d", len(got.all), c.n)
			}
			for _, smp := range got.all {
				if smp.Status != 200 {
					t.Fatalf("a request's status %d; want 200", smp.Status)
				}
			}
			if f.most != c.want {
				t.Errorf("%d requests in flight at most; want %d", f.most, c.want)
			}
		})
	}
}

func TestBatchOptionsRefused(t *testing.T) {
	for _, c := range []struct{ opts, want string }{
		{`{"batch": 0}`, "options.batch is 0: at least one request"},
		{`{"batchPerHost": -1}`, "options.batchPerHost is -1"},
		{`{"paused": true}`, "options.paused is not supported by knee: knee has no REST API"},
	} {
		_, err := DecodeOptions([]byte(c.opts))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", c.opts, err, c.want)
		}
	}
}

// options.noSetup and options.noTeardown leave those functions unrun, and
// the default function's data undefined (k6's execution scheduler Run;
// internal/js/runner.go gives the VUs undefined without setup data).
func TestNoSetupNoTeardown(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	for _, c := range []struct {
		options string
		want    string // the paths requested, in order
	}{
		{`{}`, "/setup /default-1 /teardown-1"},
		{`{ noSetup: true }`, "/default-undefined /teardown-undefined"},
		{`{ noTeardown: true }`, "/setup /default-1"},
		{`{ noSetup: true, noTeardown: true }`, "/default-undefined"},
	} {
		paths = nil
		s := loadScript(t, `import http from 'k6/http';
export const options = `+c.options+`;
export function setup() { http.get(__ENV.BASE + '/setup'); return { a: 1 }; }
export default function (data) { http.get(__ENV.BASE + '/default-' + (data === undefined ? 'undefined' : data.a)); }
export function teardown(data) { http.get(__ENV.BASE + '/teardown-' + (data === undefined ? 'undefined' : data.a)); }`,
			map[string]string{"BASE": srv.URL})
		if err := s.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		iterateOnce(t, s)
		if err := s.Teardown(context.Background()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := strings.Join(paths, " ")
		mu.Unlock()
		if got != c.want {
			t.Errorf("%s: requested %q; want %q", c.options, got, c.want)
		}
	}
}

// http.asyncRequest sends as k6's does (js/modules/k6/http/request.go
// asyncRequest): on a goroutine of its own, so Promise.all of two has both
// in flight; the iteration waits for a Promise nobody awaits; under throw a
// failed request rejects its Promise. knee sent each on the VU's goroutine
// before returning it, one at a time.
func TestAsyncRequestsInFlightTogether(t *testing.T) {
	f := &inFlight{hold: 2, reached: make(chan struct{})}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s := loadScript(t, `import http from 'k6/http';
import { check } from 'k6';
export const options = { throw: true };
export default async function () {
  const [a, b] = await Promise.all([http.asyncRequest('GET', __ENV.BASE + '/a'), http.asyncRequest('GET', __ENV.BASE + '/b')]);
  check(a, { 'a 200': (r) => r.status === 200 });
  check(b, { 'b 200': (r) => r.status === 200 });
  http.asyncRequest('GET', __ENV.BASE + '/c').then((r) => check(r, { 'c then': (r) => r.status === 200 }));
  http.asyncRequest('GET', 'http://127.0.0.1:1/').catch((e) => check(e, { 'rejected': (e) => String(e).includes('failed') }));
}`, map[string]string{"BASE": srv.URL})
	got := iterateOnce(t, s)
	if f.most != 2 {
		t.Errorf("%d requests in flight at most; want the two of Promise.all", f.most)
	}
	if len(got.all) != 4 {
		t.Errorf("%d requests recorded; want 4 (a, b, c and the refused one)", len(got.all))
	}
	checks := map[string]string{}
	for _, c := range s.Checks.Results() {
		checks[c.Name] = strconv.FormatInt(c.Passes, 10) + "/" + strconv.FormatInt(c.Fails, 10)
	}
	for _, name := range []string{"a 200", "b 200", "c then", "rejected"} {
		if checks[name] != "1/0" {
			t.Errorf("check %q: %q passes/fails; want 1/0 (all: %v)", name, checks[name], checks)
		}
	}
}
