package probe

import (
	"context"
	"fmt"
	"github.com/knee-dev/knee/use"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgWaitTypes are PostgreSQL's wait event types, plus CPU for an active
// backend waiting on nothing. Each is written every sample, zero or not, so
// a table's mean over a step is the mean backends in that state.
func pgWaitTypes() []string {
	return []string{"CPU", "Activity", "BufferPin", "Client", "Extension", "InjectionPoint", "IO", "IPC", "Lock", "LWLock", "Timeout"}
}

// Postgres samples pg_stat_activity: client connections against
// max_connections, and what the active backends wait on. An active backend
// with no wait event is running (on CPU); one waiting on a Client event is
// waiting for the application, not for the database, so it is not counted
// as waiting.
//
// The DSN's role sees other roles' sessions only with pg_read_all_stats (or
// pg_monitor); without it, their backends are invisible, not counted.
type Postgres struct {
	DSN string

	conn *pgx.Conn
	seen []string // wait events seen so far, in first-seen order
}

// Name is "postgres".
func (p *Postgres) Name() string { return "postgres" }

// Close closes the probe's connection.
func (p *Postgres) Close() error {
	if p.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.conn.Close(ctx)
	p.conn = nil
	return err
}

const pgWaitsQuery = `
SELECT coalesce(wait_event_type, ''), coalesce(wait_event, ''), count(*)
FROM pg_stat_activity
WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()
GROUP BY 1, 2 ORDER BY 1, 2`

const pgConnsQuery = `
SELECT current_setting('max_connections')::int,
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')`

// Sample connects (once, and again after a failure) and reads
// pg_stat_activity. A database it cannot reach is not measured, with why.
func (p *Postgres) Sample(ctx context.Context, _ time.Time) ([]use.Reading, error) {
	out, err := p.sample(ctx)
	if err != nil {
		if p.conn != nil {
			p.conn.Close(ctx) // a broken connection: its close error says nothing new
			p.conn = nil
		}
		why := "database unreachable: " + err.Error()
		return []use.Reading{
			notMeasured(use.Database, use.MetricPGConnections, use.Info, use.UnitCount, why),
			notMeasured(use.Database, use.MetricPGMaxConnections, use.Info, use.UnitCount, why),
			notMeasured(use.Database, use.MetricPGConnUtilization, use.Utilization, use.UnitFraction, why),
			notMeasured(use.Database, use.MetricPGActive, use.Info, use.UnitCount, why),
			notMeasured(use.Database, use.MetricPGWaiting, use.Saturation, use.UnitCount, why),
			notMeasured(use.Database, use.MetricPGWaitingFraction, use.Saturation, use.UnitFraction, why),
		}, nil
	}
	return out, nil
}

func (p *Postgres) sample(ctx context.Context) ([]use.Reading, error) {
	if p.conn == nil {
		conn, err := pgx.Connect(ctx, p.DSN)
		if err != nil {
			return nil, err
		}
		p.conn = conn
	}
	var maxConns, conns int64
	if err := p.conn.QueryRow(ctx, pgConnsQuery).Scan(&maxConns, &conns); err != nil {
		return nil, fmt.Errorf("read connections: %w", err)
	}
	rows, err := p.conn.Query(ctx, pgWaitsQuery)
	if err != nil {
		return nil, fmt.Errorf("read wait events: %w", err)
	}
	byType, byEvent := map[string]int64{}, map[string]int64{}
	var active, waiting int64
	for rows.Next() {
		var typ, event string
		var n int64
		if err := rows.Scan(&typ, &event, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read wait events: %w", err)
		}
		active += n
		if typ == "" {
			typ, event = "CPU", "running"
		} else if typ != "Client" {
			waiting += n
		}
		byType[typ] += n
		key := typ + ":" + event
		if _, ok := byEvent[key]; !ok && !slices.Contains(p.seen, key) {
			p.seen = append(p.seen, key)
		}
		byEvent[key] += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read wait events: %w", err)
	}
	var waits []use.Reading
	for _, typ := range pgWaitTypes() {
		waits = append(waits, measured(use.Database, use.MetricPGWaitTypePrefix+typ, use.Info, float64(byType[typ]), use.UnitCount))
	}
	// Events seen before and absent now are zero now, so their means stay
	// true from the sample they first appeared in.
	for _, key := range p.seen {
		waits = append(waits, measured(use.Database, use.MetricPGWaitPrefix+key, use.Info, float64(byEvent[key]), use.UnitCount))
	}
	out := []use.Reading{
		measured(use.Database, use.MetricPGConnections, use.Info, float64(conns), use.UnitCount),
		measured(use.Database, use.MetricPGMaxConnections, use.Info, float64(maxConns), use.UnitCount),
		measured(use.Database, use.MetricPGConnUtilization, use.Utilization, ratio(conns, maxConns), use.UnitFraction),
		measured(use.Database, use.MetricPGActive, use.Info, float64(active), use.UnitCount),
		measured(use.Database, use.MetricPGWaiting, use.Saturation, float64(waiting), use.UnitCount),
		measured(use.Database, use.MetricPGWaitingFraction, use.Saturation, ratio(waiting, active), use.UnitFraction),
	}
	return append(out, waits...), nil
}

// ratio is a/b, and 0 when b is 0 (no active backend: none waits).
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
