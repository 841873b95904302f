package bookstore

import (
	"context"
	"testing"
	"time"
)

func TestPoolTimeoutIs503AndCounted(t *testing.T) {
	o := Options{MaxPool: 1, PoolTimeout: 50 * time.Millisecond}
	forEachStore(t, o, func(t *testing.T, s *Server) {
		ctx := context.Background()
		held, err := s.store.db.Conn(ctx) // the pool's only connection
		if err != nil {
			t.Fatal(err)
		}
		timeout := `{"error":"timeout obtaining a connection from the pool"}`
		for _, target := range []string{"/api/books/9780441172719", "/api/books?q=dune"} {
			got := do(t, s, "GET", target, "")
			if got.code != 503 {
				t.Errorf("GET %s with the pool exhausted = %d, want 503", target, got.code)
			}
			wantJSON(t, got.body, timeout)
		}
		got := do(t, s, "POST", "/api/orders", `{"isbn":"`+braveISBN+`","quantity":1}`)
		if got.code != 503 {
			t.Errorf("POST order with the pool exhausted = %d, want 503", got.code)
		}
		if n := metricValue(t, s, MetricPoolTimeouts); n != 3 {
			t.Errorf("%s = %v, want 3", MetricPoolTimeouts, n)
		}
		if n := metricValue(t, s, "go_sql_wait_count_total"); n != 3 {
			t.Errorf("go_sql_wait_count_total = %v, want 3", n)
		}
		if n := metricValue(t, s, "go_sql_in_use_connections"); n != 1 {
			t.Errorf("go_sql_in_use_connections = %v, want 1", n)
		}
		if err := held.Close(); err != nil {
			t.Fatal(err)
		}
		// The 503 was not cached: the same URL now reaches the database.
		if got := do(t, s, "GET", "/api/books/9780441172719", ""); got.code != 200 || got.header.Get("X-Cache") != "MISS" {
			t.Errorf("after release: %d X-Cache %q, want 200 MISS", got.code, got.header.Get("X-Cache"))
		}
		if n := metricValue(t, s, MetricPoolTimeouts); n != 3 {
			t.Errorf("%s = %v after a success, want still 3", MetricPoolTimeouts, n)
		}
	})
}

func TestSlowSerialisedDatabaseFillsThePool(t *testing.T) {
	// The article's collapse in miniature: the database runs one query at a
	// time and each takes "forever", so requests hold their connection while
	// they queue, the pool of 2 runs dry and the third request times out.
	o := Options{MaxPool: 2, PoolTimeout: 50 * time.Millisecond, QueryDelay: time.Hour, SerializeQueries: true}
	s := newTestServer(t, o)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan response, 2)
	for i := range 2 {
		go func() {
			done <- doCtx(t, ctx, s, "GET", "/api/books/9780441172719?run="+string(rune('a'+i)), "")
		}()
	}
	// One request sleeps inside the database, the other queues for it.
	waitFor(t, func() bool {
		return metricValue(t, s, MetricDBQueueWaiting) == 1 && metricValue(t, s, "go_sql_in_use_connections") == 2
	})
	got := do(t, s, "GET", "/api/books/9780261102217", "")
	if got.code != 503 {
		t.Errorf("third request = %d %s, want 503", got.code, got.body)
	}
	cancel()
	for range 2 {
		if r := <-done; r.code != 503 {
			t.Errorf("cancelled request = %d %s, want 503", r.code, r.body)
		}
	}
	waitFor(t, func() bool { return metricValue(t, s, MetricDBQueueWaiting) == 0 })
	if n := metricValue(t, s, MetricPoolTimeouts); n != 1 {
		t.Errorf("%s = %v, want 1", MetricPoolTimeouts, n)
	}
}
