package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/fault"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/use"
)

// probeFlags say which of the target's resources the USE scan reads.
type probeFlags struct {
	targetPID    int
	targetCgroup string
	metrics      string
	postgres     string
}

func (f *probeFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.IntVar(&f.targetPID, "target-pid", 0, "the target's PID: its CPU (from its cgroup, or /proc) is sampled")
	fl.StringVar(&f.targetCgroup, "target-cgroup", "", "the target's cgroup directory: its CPU usage, limit and throttling are sampled")
	fl.StringVar(&f.metrics, "metrics", "", "the target's Prometheus /metrics URL (Go runtime, database/sql pool, Bookstore metrics)")
	fl.StringVar(&f.postgres, "postgres", "", "PostgreSQL DSN: pg_stat_activity connections and wait events are sampled")
}

// metricsCheckTimeout bounds the scrape that checks --metrics before any load starts.
const metricsCheckTimeout = 5 * time.Second

// probes checks the flags (a gone PID, a path that is not a cgroup and an
// endpoint that does not answer are bad input) and builds the probes. The
// error is a usage error.
func (f probeFlags) probes(ctx context.Context) ([]use.Probe, error) {
	if f.targetPID != 0 && f.targetCgroup != "" {
		return nil, usagef("give --target-pid or --target-cgroup, not both")
	}
	h := fault.Detect().Hierarchy
	var out []use.Probe
	switch {
	case f.targetPID != 0:
		// The same check knee run makes: the process exists and may be signalled.
		if _, err := fault.NewSignalFreezer(f.targetPID); err != nil {
			return nil, usagef("--target-pid %d: %v", f.targetPID, err)
		}
		out = append(out, &use.CPUProbe{PID: f.targetPID, Hierarchy: h})
	case f.targetCgroup != "":
		cg, err := fault.OpenIn(h, f.targetCgroup)
		if err != nil {
			return nil, usagef("--target-cgroup: %v", err)
		}
		out = append(out, &use.CPUProbe{Cgroup: cg.Dir(), Hierarchy: h})
	}
	if f.metrics != "" {
		if err := checkMetrics(ctx, f.metrics); err != nil {
			return nil, usagef("--metrics %s: %v", f.metrics, err)
		}
		out = append(out, &use.PromProbe{URL: f.metrics})
	}
	if f.postgres != "" {
		out = append(out, &use.PostgresProbe{DSN: f.postgres})
	}
	return out, nil
}

// checkMetrics scrapes url once: it must answer 200 with the Prometheus
// text format, or the whole scan would say "not measured" for nothing.
func checkMetrics(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, metricsCheckTimeout)
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
	if _, err := use.ParseMetrics(io.LimitReader(resp.Body, 32<<20)); err != nil {
		return fmt.Errorf("not a Prometheus metrics page: %w", err)
	}
	return nil
}

// useExport is knee use's --summary-export.
type useExport struct {
	USE        use.Table   `json:"use"`
	Bottleneck use.Verdict `json:"bottleneck"`
}

func (a *app) useCommand() *cobra.Command {
	var f probeFlags
	var duration time.Duration
	var export string
	c := &cobra.Command{
		Use:   "use",
		Short: "A USE scan of the target under whatever load is running: utilization, saturation, errors per resource",
		Long: `knee use samples the target's resources every second for --duration, under
whatever load is running (another knee run, production, a k6 test), and prints
the USE table (target CPU, Go scheduler, HTTP server, connection pool,
database, machine) and the verdict: the saturated resource with its evidence,
and why every other resource is not the bottleneck. A resource no flag lets
knee read is shown as not measured, never as zero.`,
		Example: `  knee use --target-pid 4242 --metrics http://127.0.0.1:5080/metrics --duration 40s
  knee use --target-cgroup /sys/fs/cgroup/cpu/bookstore --postgres postgres://knee@127.0.0.1/knee`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if duration < 2*use.DefaultInterval {
				return usagef("--duration %s: must be at least %s (a rate needs two samples)", duration, 2*use.DefaultInterval)
			}
			probes, err := f.probes(a.ctx)
			if err != nil {
				return err
			}
			probes = append(probes, &use.MachineProbe{TargetPIDs: targetPIDs(f.targetPID)})
			return a.doUse(probes, duration, export)
		},
	}
	f.register(c)
	c.Flags().DurationVar(&duration, "duration", 40*time.Second, "how long to sample (one sample a second)")
	c.Flags().StringVar(&export, "summary-export", "", `write {"use", "bottleneck"} as JSON to this file`)
	return c
}

func targetPIDs(pid int) []int {
	if pid > 0 {
		return []int{pid}
	}
	return nil
}

// doUse samples for duration (or until interrupted), then prints the table
// and the verdict.
func (a *app) doUse(probes []use.Probe, duration time.Duration, export string) error {
	s := &use.Sampler{Probes: probes, T0: time.Now()}
	defer s.Close()
	fmt.Fprintf(a.env.Stderr, "sampling %d probes every %s for %s...\n", len(probes), use.DefaultInterval, duration)
	ctx, cancel := context.WithTimeout(a.ctx, duration)
	defer cancel()
	if err := s.Run(ctx); err != nil {
		return fmt.Errorf("USE sampling: %w", err)
	}
	samples := s.Samples()
	if len(samples) == 0 {
		return errors.New("USE scan: no sample was taken")
	}
	t := use.Summarize(samples, 0, 0)
	t.Label = fmt.Sprintf("USE table over %s", duration)
	v := use.Judge([]use.Table{t}, nil)
	out := a.tables()
	if err := report.USE(out, t); err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := report.Verdict(out, v); err != nil {
		return err
	}
	if export != "" {
		return writeJSON(export, useExport{USE: t, Bottleneck: v})
	}
	return nil
}
