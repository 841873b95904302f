package bookstore

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestCacheHitThenBypassWithQueryString(t *testing.T) {
	forEachStore(t, Options{}, func(t *testing.T, s *Server) {
		steps := []struct {
			method, target, body string
			wantCode             int
			wantCache            string
			hits, misses         float64 // counters after the step
		}{
			{"GET", "/api/books/9780441172719", "", 200, "MISS", 0, 1},
			{"GET", "/api/books/9780441172719", "", 200, "HIT", 1, 1},
			{"GET", "/api/books/9780441172719?run=1-1", "", 200, "MISS", 1, 2},
			{"GET", "/api/books/9780441172719?run=1-1", "", 200, "HIT", 2, 2},
			{"GET", "/api/books/9780441172719?run=1-2", "", 200, "MISS", 2, 3},
			{"GET", "/api/books?q=dune", "", 200, "MISS", 2, 4},
			{"GET", "/api/books?q=dune", "", 200, "HIT", 3, 4},
			// Errors are not kept: a 404 misses every time.
			{"GET", "/api/books/9780000000002", "", 404, "MISS", 3, 5},
			{"GET", "/api/books/9780000000002", "", 404, "MISS", 3, 6},
			// Neither POSTs nor routes outside the API touch the cache.
			{"POST", "/api/orders", `{"isbn":"9780441172719","quantity":1}`, 201, "", 3, 6},
			{"GET", "/healthz", "", 200, "", 3, 6},
		}
		for i, st := range steps {
			got := do(t, s, st.method, st.target, st.body)
			if got.code != st.wantCode || got.header.Get("X-Cache") != st.wantCache {
				t.Errorf("step %d %s %s: %d X-Cache %q, want %d %q",
					i, st.method, st.target, got.code, got.header.Get("X-Cache"), st.wantCode, st.wantCache)
			}
			hits, misses := metricValue(t, s, MetricCacheHits), metricValue(t, s, MetricCacheMisses)
			if hits != st.hits || misses != st.misses {
				t.Errorf("step %d: hits %v misses %v, want %v %v", i, hits, misses, st.hits, st.misses)
			}
		}
		// A cached hit is byte-for-byte the first response.
		if got := do(t, s, "GET", "/api/books/9780441172719", ""); got.header.Get("X-Cache") != "HIT" {
			t.Errorf("X-Cache = %q, want HIT", got.header.Get("X-Cache"))
		} else {
			wantJSON(t, got.body, duneJSON) // the order above is not visible until the TTL ends
		}
	})
}

func TestCacheDisabled(t *testing.T) {
	s := newTestServer(t, Options{CacheTTL: -1})
	for range 2 {
		if got := do(t, s, "GET", "/api/books/9780441172719", ""); got.header.Get("X-Cache") != "" {
			t.Errorf("X-Cache = %q with the cache off", got.header.Get("X-Cache"))
		}
	}
	if h, m := metricValue(t, s, MetricCacheHits), metricValue(t, s, MetricCacheMisses); h != 0 || m != 0 {
		t.Errorf("hits %v misses %v with the cache off, want 0 0", h, m)
	}
}

func TestCacheExpiresAfterTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newOutputCache(10*time.Second, 100)
		c.put("/a", []byte("A"), "text/plain", time.Now())
		time.Sleep(10*time.Second - time.Nanosecond)
		if _, ok := c.get("/a", time.Now()); !ok {
			t.Error("entry gone 1 ns before its TTL")
		}
		time.Sleep(time.Nanosecond)
		if _, ok := c.get("/a", time.Now()); ok {
			t.Error("entry served at its TTL")
		}
		if c.hits.Load() != 1 || c.misses.Load() != 1 {
			t.Errorf("hits %d misses %d, want 1 1", c.hits.Load(), c.misses.Load())
		}
	})
}

func TestCacheStaysWithinItsBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newOutputCache(10*time.Second, 3)
		for _, k := range []string{"/1", "/2", "/3", "/4"} {
			c.put(k, nil, "", time.Now())
		}
		if n := c.len(); n != 3 {
			t.Fatalf("len = %d, want the bound 3", n)
		}
		if _, ok := c.get("/4", time.Now()); ok {
			t.Error("/4 was stored past the bound")
		}
		// After a TTL the next put sweeps the expired ones and fits.
		time.Sleep(10 * time.Second)
		c.put("/5", nil, "", time.Now())
		if n := c.len(); n != 1 {
			t.Errorf("len after sweep = %d, want 1", n)
		}
		c.clear()
		if n := c.len(); n != 0 {
			t.Errorf("len after clear = %d, want 0", n)
		}
	})
}
