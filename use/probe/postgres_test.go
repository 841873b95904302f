package probe

import (
	"context"
	"fmt"
	"github.com/knee-dev/knee/use"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestPostgresProbeUnreachable(t *testing.T) {
	// Port 1 on loopback: nothing listens, the connection is refused at once.
	p := &Postgres{DSN: "postgres://knee@127.0.0.1:1/knee?connect_timeout=2"}
	defer p.Close()
	got, err := p.Sample(context.Background(), time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("%d readings, want 6", len(got))
	}
	for _, r := range got {
		if r.Measured() || !strings.HasPrefix(r.NotMeasured, "database unreachable: ") {
			t.Errorf("%s: %v %q", r.Metric, r.Value, r.NotMeasured)
		}
	}
}

// TestPostgresProbeWaits holds a table lock in one session and makes a
// second wait for it while a third sleeps, then checks the sampled wait
// events. It needs a server: KNEE_TEST_POSTGRES="$(scripts/postgres-test.sh)".
func TestPostgresProbeWaits(t *testing.T) {
	dsn := os.Getenv("KNEE_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SKIPPED: KNEE_TEST_POSTGRES is not set; run scripts/postgres-test.sh and export its DSN to test the PostgreSQL probe against a real server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	holder, waiter, sleeper := connect(), connect(), connect()
	table := fmt.Sprintf("use_probe_test_%d", os.Getpid())
	if _, err := holder.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table+" (x int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { _, err := waiter.Exec(ctx, "SELECT count(*) FROM "+table); done <- err }()
	go func() { _, err := sleeper.Exec(ctx, "SELECT pg_sleep(3)"); done <- err }()

	p := &Postgres{DSN: dsn}
	defer p.Close()
	var m map[string]use.Reading
	// The two sessions need a moment to reach their waits: poll, bounded.
	for range 50 {
		got, err := p.Sample(ctx, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		m = byMetric(t, got)
		if m[use.MetricPGWaitPrefix+"Lock:relation"].Value >= 1 && m[use.MetricPGWaitPrefix+"Timeout:PgSleep"].Value >= 1 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	for _, metric := range []string{use.MetricPGWaitPrefix + "Lock:relation", use.MetricPGWaitPrefix + "Timeout:PgSleep"} {
		if r := m[metric]; !r.Measured() || r.Value < 1 {
			t.Errorf("%s = %+v, want at least 1 (readings %+v)", metric, r, m)
		}
	}
	if r := m[use.MetricPGWaitTypePrefix+"Lock"]; r.Value < 1 {
		t.Errorf("Lock type = %+v, want at least 1", r)
	}
	if r := m[use.MetricPGWaitTypePrefix+"BufferPin"]; !r.Measured() {
		t.Errorf("BufferPin type not written: %+v", r)
	}
	// Both waits count; other sessions of the shared server may add more.
	if r := m[use.MetricPGWaiting]; r.Value < 2 {
		t.Errorf("waiting = %v, want at least 2", r.Value)
	}
	if act, w := m[use.MetricPGActive].Value, m[use.MetricPGWaitingFraction].Value; act < 2 || w <= 0 || w > 1 {
		t.Errorf("active %v, waiting fraction %v", act, w)
	}
	conns, maxConns := m[use.MetricPGConnections].Value, m[use.MetricPGMaxConnections].Value
	// holder, waiter, sleeper and the probe itself.
	if conns < 4 || maxConns <= 0 || m[use.MetricPGConnUtilization].Value != conns/maxConns {
		t.Errorf("connections %v of %v, utilization %v", conns, maxConns, m[use.MetricPGConnUtilization].Value)
	}
}
