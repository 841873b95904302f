package probe

import (
	"context"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/internal/proc"
	"io"
	"net/http"
	"time"

	"github.com/knee-dev/knee/cgroup"
)

// Target names what of a load test's target is sampled: its process or
// its cgroup (not both), its Prometheus /metrics page and its PostgreSQL.
// Zero fields are not sampled.
type Target struct {
	PID      int    // its CPU: from its cgroup, or /proc
	Cgroup   string // a cgroup directory: its CPU usage, limit and throttling
	Metrics  string // the /metrics URL
	Postgres string // a DSN: pg_stat_activity connections and wait events

	// Root roots /proc and the cgroup mounts ("" is "/"); tests set it.
	Root string
}

// MetricsCheckTimeout bounds the scrape that checks Target.Metrics.
const MetricsCheckTimeout = 5 * time.Second

// Probes checks t and returns the probes that read it. The process must
// exist, the cgroup directory must be one, and the /metrics page must
// answer in the Prometheus text format now, or the whole scan would say
// "not measured" for nothing. Every error is bad input and names the knee
// flag it came from (--target-pid, --target-cgroup, --metrics).
func (t Target) Probes(ctx context.Context) ([]Probe, error) {
	if t.PID != 0 && t.Cgroup != "" {
		return nil, errors.New("give --target-pid or --target-cgroup, not both")
	}
	var h cgroup.Hierarchy
	if t.PID != 0 || t.Cgroup != "" {
		// Without a readable mount table the probe reads /proc only and
		// says so in its readings; that is not bad input.
		h, _ = cgroup.Mounts(rootOr(t.Root))
	}
	var out []Probe
	switch {
	case t.PID != 0:
		if err := (proc.FS{Root: t.Root}).Exists(t.PID); err != nil {
			return nil, fmt.Errorf("--target-pid %d: %w", t.PID, err)
		}
		out = append(out, &CPU{Root: t.Root, PID: t.PID, Hierarchy: h})
	case t.Cgroup != "":
		g, err := cgroup.Open(h, t.Cgroup)
		if err != nil {
			return nil, fmt.Errorf("--target-cgroup: %w", err)
		}
		out = append(out, &CPU{Root: t.Root, Cgroup: g.Dir(), Hierarchy: h})
	}
	if t.Metrics != "" {
		if err := checkMetrics(ctx, t.Metrics); err != nil {
			return nil, fmt.Errorf("--metrics %s: %w", t.Metrics, err)
		}
		out = append(out, &Prom{URL: t.Metrics})
	}
	if t.Postgres != "" {
		out = append(out, &Postgres{DSN: t.Postgres})
	}
	return out, nil
}

// PIDs is the target's process, for the machine probe to tell it from the
// rest of the machine's work.
func (t Target) PIDs() []int {
	if t.PID > 0 {
		return []int{t.PID}
	}
	return nil
}

func rootOr(root string) string {
	if root == "" {
		return "/"
	}
	return root
}

// checkMetrics scrapes url once: it must answer 200 with the Prometheus
// text format.
func checkMetrics(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, MetricsCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("unreachable: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answered %s", resp.Status)
	}
	if _, err := ParseMetrics(io.LimitReader(resp.Body, maxScrape)); err != nil {
		return fmt.Errorf("not a Prometheus metrics page: %w", err)
	}
	return nil
}
