package bookstore

import (
	"fmt"
	"net/http/httptest"
	"testing"
)

// BenchmarkGetBook compares a GET served by the output cache with one that
// bypasses it with a unique query string and so reaches SQLite.
func BenchmarkGetBook(b *testing.B) {
	s := newTestServer(b, Options{})
	h := s.Handler()
	get := func(b *testing.B, target string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != 200 {
			b.Fatalf("GET %s = %d", target, rec.Code)
		}
	}
	b.Run("cache=hit", func(b *testing.B) {
		get(b, "/api/books/9780441172719") // fills the cache
		for b.Loop() {
			get(b, "/api/books/9780441172719")
		}
	})
	b.Run("cache=miss", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			get(b, fmt.Sprintf("/api/books/9780441172719?run=%d", i))
		}
	})
}
