package request

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// BenchmarkDo measures the generator's own cost per request (ns and
// allocations) against a loopback server: every µs here is taken from the
// target when both share a machine.
func BenchmarkDo(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"isbn":"9780441172719","title":"Dune"}`)
	}))
	defer srv.Close()
	vars := map[string][]string{"isbn": {"9780441172719", "9780261102217", "9780141439587"}}
	cases := []struct {
		name string
		spec Spec
	}{
		{"static GET", Spec{URL: srv.URL + "/api/books/9780441172719"}},
		{"templated GET", Spec{URL: srv.URL + "/api/books/{isbn}?run={vu}-{iter}", Headers: []Header{{"Accept", "application/json"}}}},
		{"templated POST", Spec{Method: "POST", URL: srv.URL + "/api/books", Headers: []Header{{"X-Isbn", "{isbn}"}}, Body: `{"isbn":"{isbn}"}`}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := newSender(b, []Spec{c.spec}, Options{Vars: vars})
			var iter atomic.Uint64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if res := s.Do(context.Background(), 1, iter.Add(1)); res.Err != nil {
						b.Fatal(res.Err)
					}
				}
			})
		})
	}
}
