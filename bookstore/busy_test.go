package bookstore

import (
	"context"
	"testing"
	"time"
)

func TestSQLiteBusyIs503AndCounted(t *testing.T) {
	s := newTestServer(t, Options{BusyTimeout: 20 * time.Millisecond})
	ctx := context.Background()
	// Another writer holds SQLite's one write lock (transactions begin
	// IMMEDIATE), so the order's transaction cannot start.
	tx, err := s.store.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := do(t, s, "POST", "/api/orders", `{"isbn":"`+braveISBN+`","quantity":1}`)
	if got.code != 503 {
		t.Errorf("order while locked = %d %s, want 503", got.code, got.body)
	}
	wantJSON(t, got.body, `{"error":"database is busy"}`)
	if n := metricValue(t, s, MetricDBBusyErrors); n != 1 {
		t.Errorf("%s = %v, want 1", MetricDBBusyErrors, n)
	}
	// Readers are not blocked by a writer in WAL mode.
	if got := do(t, s, "GET", "/api/books/"+braveISBN, ""); got.code != 200 {
		t.Errorf("read while locked = %d, want 200 (WAL)", got.code)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := do(t, s, "POST", "/api/orders", `{"isbn":"`+braveISBN+`","quantity":1}`); got.code != 201 {
		t.Errorf("order after unlock = %d %s, want 201", got.code, got.body)
	}
}
