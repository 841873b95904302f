package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/bookstore"
	"github.com/knee-dev/knee/internal/textwrap"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// COOptions set up the coordinated-omission experiment. Zero fields take the
// article's values.
type COOptions struct {
	Duration        time.Duration // each run; default 60 s
	FreezeAt        time.Duration // default 30 s
	FreezeFor       time.Duration // default 5 s
	VUs             int           // closed model; default 20
	Think           time.Duration // closed model; default 100 ms
	Rate            float64       // open model, req/s; default 200
	PreAllocatedVUs int           // open model; default 50
	MaxVUs          int           // open model; default 2000
	CPUs            float64       // the Bookstore's CPU limit; 0 for none

	Out        string // directory under which the experiment's run directories go
	Executable string // the knee binary, to start the Bookstore
	Progress   io.Writer
	Live       bool
	Stderr     io.Writer // the Bookstore's own stderr
	Abort      <-chan struct{}
	Getenv     func(string) string
}

func (o COOptions) withDefaults() COOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.Duration, 60*time.Second)
	def(&o.FreezeAt, 30*time.Second)
	def(&o.FreezeFor, 5*time.Second)
	def(&o.Think, 100*time.Millisecond)
	if o.VUs == 0 {
		o.VUs = 20
	}
	if o.Rate == 0 {
		o.Rate = 200
	}
	if o.PreAllocatedVUs == 0 {
		o.PreAllocatedVUs = 50
	}
	if o.MaxVUs == 0 {
		o.MaxVUs = 2000
	}
	return o
}

// Validate reports every setting that cannot work, before anything starts.
func (o COOptions) Validate() []error {
	var errs []error
	if o.Duration <= 0 {
		errs = append(errs, fmt.Errorf("--duration %s: must be positive", o.Duration))
	}
	if o.FreezeAt < 0 || o.FreezeFor <= 0 || o.FreezeAt+o.FreezeFor > o.Duration {
		errs = append(errs, fmt.Errorf("--freeze-at %s --freeze-for %s: the freeze must lie inside the %s run", o.FreezeAt, o.FreezeFor, o.Duration))
	}
	if o.VUs <= 0 || o.Rate <= 0 || o.MaxVUs < o.PreAllocatedVUs {
		errs = append(errs, fmt.Errorf("--vus %d, --rate %g, --max-vus %d: must be positive, and --max-vus at least --pre-allocated-vus %d", o.VUs, o.Rate, o.MaxVUs, o.PreAllocatedVUs))
	}
	if o.Think < 0 {
		errs = append(errs, fmt.Errorf("--think %s: must not be negative", o.Think))
	}
	return errs
}

// COResult is the experiment's outcome: the article's three rows and the
// signals that give coordinated omission away.
type COResult struct {
	Closed          rundir.Summary     `json:"closed"`
	ClosedCorrected rundir.Summary     `json:"closed_corrected"`
	Open            rundir.Summary     `json:"open"`
	Signals         COSignals          `json:"signals"`
	Correction      analyze.Correction `json:"correction"`
	ClosedDir       string             `json:"closed_dir"`
	OpenDir         string             `json:"open_dir"`
	Notes           []string           `json:"notes,omitempty"`
}

// COSignals are the detection signals of the closed run, with the open run
// beside them.
type COSignals struct {
	ClosedRate      float64           `json:"closed_rate"`
	OpenRate        float64           `json:"open_rate"`
	ClosedMaxMS     float64           `json:"closed_max_ms"`
	ClosedP99MS     float64           `json:"closed_p99_ms"`
	MaxP99Ratio     float64           `json:"closed_max_p99_ratio"`
	Closed          analyze.COSignals `json:"closed_co_signals"`
	Open            analyze.COSignals `json:"open_co_signals"`
	CorrectedToOpen float64           `json:"corrected_p99_to_open_p99"`
}

// ArticleRequest is the request both runs send, named as the article tags it.
func ArticleRequest(base string) request.Spec {
	return request.Spec{Name: "GET /api/books/{isbn}", URL: base + "/api/books/{isbn}"}
}

// CO runs the article's freeze experiment: the Bookstore in its own cgroup,
// a closed-model run (VUs with think time) and an open-model run (a constant
// arrival rate), each with the Bookstore frozen for FreezeFor at FreezeAt.
func CO(ctx context.Context, opt COOptions) (*COResult, error) {
	opt = opt.withDefaults()
	if errs := opt.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	t, err := StartBookstore(ctx, TargetOptions{Executable: opt.Executable, CPUs: opt.CPUs, Stderr: opt.Stderr})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	res := &COResult{Notes: t.Notes}
	say(opt.Progress, "Bookstore at %s (pid %d, freezer: %s)\n", t.URL, t.PID, t.Freezer)

	closed := load.ConstantVUs{VUs: opt.VUs, Duration: opt.Duration, Think: opt.Think}
	open := load.ConstantArrivalRate{Rate: opt.Rate, TimeUnit: time.Second, Duration: opt.Duration, PreAllocatedVUs: opt.PreAllocatedVUs, MaxVUs: opt.MaxVUs}
	var runs [2]*runner.Result
	for i, ex := range []load.Executor{closed, open} {
		name := ex.Model()
		say(opt.Progress, "\n== %s model: %s, Bookstore frozen %s at %s\n", name, describeExecutor(ex), opt.FreezeFor, opt.FreezeAt)
		r, err := runOnce(ctx, t, opt, name, ex)
		if err != nil {
			return nil, fmt.Errorf("%s run: %w", name, err)
		}
		runs[i] = r
		if r.Summary.Interrupted {
			return nil, fmt.Errorf("%s run interrupted; its run directory %s keeps what was measured", name, r.Dir)
		}
	}
	return summarize(res, runs[0], runs[1])
}

func runOnce(ctx context.Context, t *Target, opt COOptions, name string, ex load.Executor) (*runner.Result, error) {
	cfg := &scenario.Config{
		Scenarios: []scenario.Scenario{{
			Name: name, Executor: ex, GracefulStop: scenario.DefaultGracefulStop,
			Requests: []request.Spec{ArticleRequest(t.URL)},
		}},
		Vars:   map[string][]string{"isbn": bookstore.ArticleISBNs()},
		Faults: []scenario.Fault{{Kind: scenario.FaultFreeze, At: opt.FreezeAt, For: opt.FreezeFor}},
	}
	return runner.Execute(ctx, cfg, runner.Options{
		Dir:       filepath.Join(opt.Out, name),
		Progress:  opt.Progress,
		Live:      opt.Live,
		Abort:     opt.Abort,
		Target:    t.Freezer,
		TargetPID: t.PID,
		Getenv:    opt.Getenv,
		Notes:     append([]string{"knee lab co: the article's coordinated-omission experiment"}, t.Notes...),
	})
}

// summarize reads both runs through analyze.Analyze: the closed one raw and
// corrected, the open one, and the signals.
func summarize(res *COResult, closed, open *runner.Result) (*COResult, error) {
	res.ClosedDir, res.OpenDir = closed.Dir, open.Dir
	res.Closed, res.Open = closed.Summary, open.Summary
	ca, err := analyze.Analyze(closed.Run, analyze.Options{})
	if err != nil {
		return nil, err
	}
	oa, err := analyze.Analyze(open.Run, analyze.Options{})
	if err != nil {
		return nil, err
	}
	if ca.Correction == nil {
		return nil, fmt.Errorf("correcting the closed run: %s", ca.CorrectionNote)
	}
	res.Correction = *ca.Correction
	c := ca.Correction.Summary(closed.Summary)
	res.ClosedCorrected = c
	s := &res.Signals
	s.ClosedRate, s.OpenRate = closed.Summary.Rate, open.Summary.Rate
	s.ClosedMaxMS, s.ClosedP99MS = closed.Summary.LatencyMS.Max, closed.Summary.LatencyMS.P99
	if s.ClosedP99MS > 0 {
		s.MaxP99Ratio = s.ClosedMaxMS / s.ClosedP99MS
	}
	if open.Summary.LatencyMS.P99 > 0 {
		s.CorrectedToOpen = c.LatencyMS.P99 / open.Summary.LatencyMS.P99
	}
	s.Closed, s.Open = ca.CO, oa.CO
	return res, nil
}

func describeExecutor(ex load.Executor) string {
	switch e := ex.(type) {
	case load.ConstantVUs:
		return fmt.Sprintf("constant-vus, %d VUs, think %s, %s", e.VUs, e.Think, e.Duration)
	case load.ConstantArrivalRate:
		return fmt.Sprintf("constant-arrival-rate, %g req/s, maxVUs %d, %s", e.Rate, e.MaxVUs, e.Duration)
	}
	return ex.Kind()
}

// say prints to the progress stream w (nil: nowhere). On a terminal that
// tells its width (runner.Widther), each line is wrapped between its words
// to it, as the runner's own messages are, so a path or a word is never
// broken by the terminal.
func say(w io.Writer, format string, a ...any) {
	if w == nil {
		return
	}
	text := fmt.Sprintf(format, a...)
	if t, ok := w.(runner.Widther); ok && t.Width() > 0 {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = strings.Join(textwrap.Line(l, t.Width()-1, 2), "\n")
		}
		text = strings.Join(lines, "\n")
	}
	fmt.Fprint(w, text)
}
