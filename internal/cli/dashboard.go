package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/dashboard"
	"github.com/knee-dev/knee/report"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// registerDashboardFlag adds --dashboard[=ADDR] (alone: dashboard.DefaultAddr)
// and --dashboard-linger.
func (a *app) registerDashboardFlag(fl *pflag.FlagSet, addr *string) {
	fl.StringVar(addr, "dashboard", "", "serve a live dashboard of the run at http://ADDR while it runs (alone: "+
		dashboard.DefaultAddr+"; beyond loopback every request needs the token printed at start; give an address as --dashboard=ADDR)")
	fl.Lookup("dashboard").NoOptDefVal = dashboard.DefaultAddr
	fl.DurationVar(&a.linger, "dashboard-linger", 0, "how long the dashboard keeps showing the final summary after the run "+
		"(default: until Ctrl-C when stderr is a terminal, not at all otherwise)")
	a.lingerSet = func() bool { return fl.Changed("dashboard-linger") }
}

// lingerFor is how long the dashboard stays after the run: --dashboard-linger
// when given, else until interrupted (-1) for a person at a terminal, and
// not at all for a script.
func (a *app) lingerFor() time.Duration {
	if a.lingerSet != nil && a.lingerSet() {
		return max(0, a.linger)
	}
	if a.env.StderrIsTerminal {
		return -1
	}
	return 0
}

// linger keeps srv serving for d (-1: until the first interrupt), saying so.
func (a *app) lingerWait(srv *dashboard.Server, d time.Duration) {
	if d == 0 {
		return
	}
	var after <-chan time.Time
	if d > 0 {
		fmt.Fprintf(a.env.Stderr, "dashboard: the final summary stays at %s for %s\n", srv.URL(), d)
		after = time.After(d)
	} else {
		fmt.Fprintf(a.env.Stderr, "dashboard: the final summary stays at %s until Ctrl-C\n", srv.URL())
	}
	if a.ctx.Err() != nil {
		return // stopped during the run: the exit code says so
	}
	select {
	case <-a.ctx.Done():
		a.servedOut.Store(true) // the signal ended the serving, not the work
	case <-after:
	}
}

// executeRun is runner.Execute, serving the live dashboard of the run
// while it goes when addr is set (see withDashboard).
func (a *app) executeRun(cfg *scenario.Config, opt runner.Options, addr string, ts []analyze.Threshold) (*runner.Result, error) {
	return a.withDashboard(opt, addr, ts, func(opt runner.Options) (*runner.Result, error) {
		return runner.Execute(a.ctx, cfg, opt)
	})
}

// withDashboard calls execute (a run: a scenario's or a k6 script's) with
// opt, serving the live dashboard of the run while it goes when addr is
// set: the runner feeds the page every interval (runner.Options.OnRecord).
// At the end it writes the HTML report into the run directory and tells the
// page (and stderr) where the run directory and the report are.
func (a *app) withDashboard(opt runner.Options, addr string, ts []analyze.Threshold, execute func(runner.Options) (*runner.Result, error)) (*runner.Result, error) {
	if addr == "" {
		return execute(opt)
	}
	srv, err := dashboard.Start(dashboard.Options{Addr: addr, Dir: opt.Dir, Interval: opt.Interval})
	if err != nil {
		return nil, fmt.Errorf("--dashboard: %w", err)
	}
	defer srv.Close()
	srv.Announce(a.env.Stderr)
	opt.OnRecord = srv.Add // every interval as it is written: no reading the directory back
	res, err := execute(opt)
	if res == nil {
		return res, err
	}
	page := filepath.Join(res.Dir, "report.html")
	if rerr := writeRunReport(res.Run, page, ts); rerr != nil {
		fmt.Fprintf(a.env.Stderr, "dashboard: no report written: %v\n", rerr)
		page = ""
	}
	srv.Finish(res.Dir, page)
	fmt.Fprintf(a.env.Stderr, "dashboard: run directory %s, report %s\n", res.Dir, orNone(page))
	a.lingerAfter(srv)
	return res, err
}

// lingerAfter keeps the page of a finished run up as lingerFor says.
func (a *app) lingerAfter(srv *dashboard.Server) { a.lingerWait(srv, a.lingerFor()) }

// serveRun serves the dashboard of a finished run directory until the first
// interrupt (knee report --serve).
func (a *app) serveRun(dir, addr string) error {
	srv, err := dashboard.Start(dashboard.Options{Addr: addr, Dir: dir})
	if err != nil {
		return fmt.Errorf("--serve: %w", err)
	}
	defer srv.Close()
	srv.Announce(a.env.Stderr)
	srv.Finish(dir, "")
	a.lingerWait(srv, -1)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// writeRunReport writes the HTML report of one run to file.
func writeRunReport(r *rundir.Dir, file string, ts []analyze.Threshold) error {
	in, err := report.Build([]*rundir.Dir{r}, report.BuildOptions{Thresholds: ts})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := report.HTML(&buf, in); err != nil {
		return err
	}
	return rundir.WriteFileAtomic(file, buf.Bytes(), 0o644)
}
