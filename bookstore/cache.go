package bookstore

import (
	"bytes"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// outputCache keeps whole GET 200 responses keyed by path and query string,
// like ASP.NET's output cache in the reference article: a different query
// string (?run=...) is a different key, which is how a load test bypasses it.
//
// Expired entries are swept at most once a TTL, and the cache never holds
// more than max entries: a load test with a unique key per request fills it
// and then simply stops caching until the next sweep.
//
// Concurrency: safe for concurrent use.
type outputCache struct {
	ttl time.Duration // <= 0 disables the cache
	max int

	mu        sync.Mutex
	entries   map[string]cachedResponse
	nextSweep time.Time

	hits, misses atomic.Uint64
}

type cachedResponse struct {
	body        []byte
	contentType string
	expires     time.Time
}

func newOutputCache(ttl time.Duration, max int) *outputCache {
	return &outputCache{ttl: ttl, max: max, entries: map[string]cachedResponse{}}
}

func (c *outputCache) enabled() bool { return c.ttl > 0 }

// get returns the live response for key, counting a hit or a miss.
func (c *outputCache) get(key string, now time.Time) (cachedResponse, bool) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok && !now.Before(e.expires) {
		delete(c.entries, key)
		ok = false
	}
	c.mu.Unlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return e, ok
}

// put stores a response for one TTL from now, unless the cache is full.
func (c *outputCache) put(key string, body []byte, contentType string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !now.Before(c.nextSweep) {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		c.nextSweep = now.Add(c.ttl)
	}
	if _, exists := c.entries[key]; !exists && len(c.entries) >= c.max {
		return
	}
	c.entries[key] = cachedResponse{body: body, contentType: contentType, expires: now.Add(c.ttl)}
}

// clear drops every entry; the hit and miss counters keep counting.
func (c *outputCache) clear() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}

func (c *outputCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// maxCachedBody bounds what one cached response may hold.
const maxCachedBody = 1 << 20

// middleware serves GET requests from the cache and stores the GET 200
// responses of next, marking each with X-Cache: HIT or MISS.
func (c *outputCache) middleware(next http.Handler) http.Handler {
	if !c.enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		key := r.URL.RequestURI()
		if e, ok := c.get(key, time.Now()); ok {
			w.Header().Set("Content-Type", e.contentType)
			w.Header().Set("X-Cache", "HIT")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(e.body) // a client that left cannot be told
			return
		}
		w.Header().Set("X-Cache", "MISS")
		tee := &teeWriter{ResponseWriter: w}
		next.ServeHTTP(tee, r)
		if tee.status() == http.StatusOK && !tee.overflow {
			c.put(key, tee.body.Bytes(), w.Header().Get("Content-Type"), time.Now())
		}
	})
}

// teeWriter passes a response through and keeps a copy of its body.
type teeWriter struct {
	http.ResponseWriter
	code     int
	body     bytes.Buffer
	overflow bool // the body outgrew maxCachedBody and was not kept
}

func (t *teeWriter) WriteHeader(code int) {
	if t.code == 0 {
		t.code = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(p []byte) (int, error) {
	if t.code == 0 {
		t.code = http.StatusOK
	}
	if !t.overflow {
		if t.body.Len()+len(p) > maxCachedBody {
			t.overflow = true
			t.body = bytes.Buffer{}
		} else {
			t.body.Write(p)
		}
	}
	return t.ResponseWriter.Write(p)
}

func (t *teeWriter) status() int {
	if t.code == 0 {
		return http.StatusOK
	}
	return t.code
}
