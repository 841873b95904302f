package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/knee-dev/knee/coord"
	"github.com/knee-dev/knee/load/schedule"
	"github.com/knee-dev/knee/promrw"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
)

// splitFlags are knee run's flags for a test split among runners.
type splitFlags struct {
	segment  string
	sequence string
	index    string // --execution-segment-index: the N-th segment of the sequence (0-based)
	startAt  string
	testID   string
	runner   string
	coord    string   // --coordinator URL
	promRW   []string // --out prometheus-rw=URL
	// closeTimeout bounds, in all, the pushes left when the run ends.
	closeTimeout time.Duration
}

func registerSplitFlags(fl *pflag.FlagSet, f *splitFlags) {
	fl.StringVar(&f.segment, "execution-segment", "", "this runner's part of the test, k6's from:to (e.g. 1/4:2/4, 25%:50%)")
	fl.StringVar(&f.sequence, "execution-segment-sequence", "", "every runner's segments, e.g. 0,1/4,2/4,3/4,1 (give it to all runners so their parts fit exactly)")
	fl.StringVar(&f.index, "execution-segment-index", "", "take the N-th segment (0-based) of --execution-segment-sequence, e.g. a Job's completion index")
	fl.StringVar(&f.startAt, "start-at", "", "start the schedule at this wall-clock instant (RFC 3339), the same on every runner")
	fl.StringVar(&f.testID, "test-id", "", "name of the split test, the same on every runner (default: derived from the plan)")
	fl.StringVar(&f.runner, "runner-name", "", "this runner's name in the merge and its Prometheus runner label (default: its segment, unique among the test's runners)")
	fl.DurationVar(&f.closeTimeout, "out-close-timeout", promrw.DefaultCloseTimeout, "prometheus-rw: at the end, push what is queued within this long in all; what is left is counted as not pushed")
	fl.StringVar(&f.coord, "coordinator", "", "start when knee coordinate at this URL releases every runner, and send it the run directory after (token from "+coord.TokenEnv+"); with --execution-segment-index")
}

// coordinator is the client of --coordinator, or nil; sp is the parsed split.
func (f splitFlags) coordinator(sp *runner.Split, getenv func(string) string, log io.Writer) (*coord.Client, error) {
	if f.coord == "" {
		return nil, nil
	}
	if f.index == "" {
		return nil, fmt.Errorf("--coordinator: give --execution-segment-index too (the coordinator knows runners by index)")
	}
	if f.startAt != "" {
		return nil, fmt.Errorf("give --coordinator or --start-at, not both: the coordinator starts the runners")
	}
	if u, err := url.Parse(f.coord); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--coordinator %q: want a URL such as http://checkout-coord:7070", f.coord)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(f.index)) // checked by parse
	name := sp.Runner
	if name == "" {
		name = sp.Share.Segment().String()
	}
	c := &coord.Client{URL: f.coord, Token: getenv(coord.TokenEnv), Index: n, Runner: name, Log: log}
	sp.Release = c.Ready
	return c, nil
}

// parse turns the flags into a runner.Split.
func (f splitFlags) parse() (runner.Split, error) {
	var sp runner.Split
	seq, err := schedule.ParseSequence(f.sequence)
	if err != nil {
		return sp, fmt.Errorf("--execution-segment-sequence: %w", err)
	}
	var seg schedule.Segment
	switch {
	case f.index != "" && f.segment != "":
		return sp, fmt.Errorf("give --execution-segment or --execution-segment-index, not both")
	case f.index != "":
		n, err := strconv.Atoi(strings.TrimSpace(f.index))
		if err != nil || n < 0 || n >= len(seq) {
			return sp, fmt.Errorf("--execution-segment-index %q: want 0 to %d, the segments of --execution-segment-sequence %q", f.index, len(seq)-1, f.sequence)
		}
		seg = seq[n]
	default:
		if seg, err = schedule.ParseSegment(f.segment); err != nil {
			return sp, fmt.Errorf("--execution-segment: %w", err)
		}
	}
	if sp.Share, err = schedule.NewShare(seg, seq); err != nil {
		return sp, fmt.Errorf("--execution-segment %s: %w", seg, err)
	}
	if f.startAt != "" {
		if sp.StartAt, err = time.Parse(time.RFC3339Nano, f.startAt); err != nil {
			return sp, fmt.Errorf("--start-at %q: not an RFC 3339 time such as 2026-12-01T03:00:00Z", f.startAt)
		}
	}
	sp.TestID, sp.Runner = f.testID, f.runner
	return sp, nil
}

// liveOutputs pushes every interval to each prometheus-rw URL; the returned
// function sends what is left and reports what was pushed.
func (a *app) liveOutputs(opt *runner.Options, urls []string, closeTimeout time.Duration) func() {
	if len(urls) == 0 {
		return func() {}
	}
	var pushers []*promrw.Pusher
	opt.OnInterval = func(meta *rundir.Meta, end time.Time, snap record.IntervalSnapshot) {
		if pushers == nil { // the first interval: the run's identity is known
			testID, name := meta.ID, ""
			if meta.Part != nil {
				// The segment, unless named: two runners on one host (or
				// two pods with one host name) must not push one series.
				testID, name = meta.Part.TestID, meta.Part.Label()
			}
			if name == "" {
				name, _ = os.Hostname()
			}
			for _, u := range urls {
				p, err := promrw.New(u, testID, name)
				if err != nil {
					fmt.Fprintln(a.env.Stderr, "knee:", err)
					continue
				}
				pushers = append(pushers, p)
			}
		}
		for _, p := range pushers {
			p.Interval(end, snap)
		}
	}
	return func() {
		// One deadline for every output: the second Ctrl-C ends it too.
		ctx, cancel := context.WithTimeout(a.abort, max(closeTimeout, 0))
		defer cancel()
		for i, p := range pushers {
			st := p.Close(ctx, closeTimeout)
			fmt.Fprintf(a.env.Stderr, "prometheus-rw %s: %d pushes, %d bytes, %d failed, %d dropped, %d not pushed (--out-close-timeout %v)\n", urls[i], st.Requests, st.Bytes, st.Failed, st.Dropped, st.Unsent, closeTimeout)
			if st.LastError != nil {
				fmt.Fprintf(a.env.Stderr, "prometheus-rw %s: last error: %v\n", urls[i], st.LastError)
			}
		}
	}
}
