package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/use/probe"
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

// target is the flags' target.
func (f probeFlags) target() probe.Target {
	return probe.Target{PID: f.targetPID, Cgroup: f.targetCgroup, Metrics: f.metrics, Postgres: f.postgres}
}

// probes checks the target (a gone PID, a path that is not a cgroup and an
// endpoint that does not answer are bad input) and builds its probes.
func (f probeFlags) probes(ctx context.Context) ([]probe.Probe, error) {
	p, err := f.target().Probes(ctx)
	return p, usageErr(err)
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
			opt := probe.ScanOptions{Duration: duration, TargetPIDs: f.target().PIDs(), Progress: a.env.Stderr}
			if err := opt.Validate(); err != nil {
				return usageErr(err)
			}
			probes, err := f.probes(a.ctx)
			if err != nil {
				return err
			}
			opt.Probes = probes
			res, err := probe.Scan(a.ctx, opt)
			if err != nil {
				return err
			}
			out := a.tables()
			if err := report.USE(out, res.USE); err != nil {
				return err
			}
			fmt.Fprintln(out)
			if err := report.Verdict(out, res.Bottleneck); err != nil {
				return err
			}
			if export != "" {
				return writeJSON(export, res)
			}
			return nil
		},
	}
	f.register(c)
	c.Flags().DurationVar(&duration, "duration", 40*time.Second, "how long to sample (one sample a second)")
	c.Flags().StringVar(&export, "summary-export", "", `write {"use", "bottleneck"} as JSON to this file`)
	return c
}
