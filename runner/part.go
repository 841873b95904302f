package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/load/schedule"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/scenario"
)

// ErrNotReleased is wrapped by the error of a run whose coordinator did
// not release it (Split.Release failed): a failure of the test, not of its
// configuration.
var ErrNotReleased = errors.New("not started by the coordinator")

// Split says how this runner takes part in a test split among runners.
// The zero value is a whole test on one runner.
type Split struct {
	Share   schedule.Share // this runner's segment; zero is the whole test
	StartAt time.Time      // start the schedule at this wall-clock instant; zero: at once
	TestID  string         // names the test; "" derives one from the plan and the sequence
	Runner  string         // this runner's name (e.g. a pod's), for the merge's notes
	// Release, when set, is waited for before the schedule starts instead
	// of StartAt: a coordinator's barrier, which returns once every runner
	// is ready, with the coordinator's clock at that instant (recorded as
	// the part's StartAt, so StartOffset is this runner's start against it).
	Release func(ctx context.Context) (time.Time, error)
}

func (s Split) active() bool {
	return !s.Share.IsWhole() || !s.StartAt.IsZero() || s.TestID != "" || s.Release != nil
}

// splitConfig returns cfg cut to the share, and the run.json Part that
// records the whole test's plan. Scenarios the share gets nothing of are
// left out, with a note.
func splitConfig(cfg *scenario.Config, sp Split) (*scenario.Config, *rundir.Part, []string, error) {
	whole := newMeta(cfg)
	seq := sp.Share.Sequence().String()
	if seq == "" {
		seq = "0,1"
	}
	part := &rundir.Part{
		TestID:   sp.TestID,
		Segment:  sp.Share.Segment().String(),
		Sequence: seq,
		Runner:   sp.Runner,
		Plan:     whole.Scenarios,
		StartAt:  sp.StartAt,
		// A part's requests are a slice of the test's: its thresholds are
		// judged on the merge (knee merge reads them from here), not here.
		Thresholds: cfg.Thresholds,
	}
	if part.TestID == "" {
		part.TestID = planID(whole.Scenarios, seq, sp.StartAt)
	}
	part.ClockSynced, part.ClockMaxErr, part.ClockOffset, part.ClockSync = clockState()
	out := *cfg
	out.Scenarios = nil
	var notes []string
	for _, sc := range cfg.Scenarios {
		ex, err := load.Segment(sc.Executor, sp.Share)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
		}
		if ex == nil {
			notes = append(notes, fmt.Sprintf("scenario %q: segment %s gets none of its VUs; this runner leaves it out", sc.Name, part.Segment))
			continue
		}
		sc.Executor = ex
		out.Scenarios = append(out.Scenarios, sc)
	}
	if len(out.Scenarios) == 0 {
		return nil, nil, nil, fmt.Errorf("segment %s gets nothing of any scenario; use fewer runners or more VUs", part.Segment)
	}
	return &out, part, notes, nil
}

// planID names a test by what it asks: the same plan, sequence and start
// give the same id on every runner, so a merge can tell its parts apart
// from another test's.
func planID(plan []rundir.Scenario, seq string, startAt time.Time) string {
	h := sha256.New()
	b, _ := json.Marshal(plan) // plain data: it always encodes
	h.Write(b)
	fmt.Fprintf(h, "|%s|%s", seq, startAt.UTC().Format(time.RFC3339Nano))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// waitUntil sleeps until the wall clock reaches at; an error if ctx ends first.
func waitUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("interrupted while waiting for --start-at"), context.Cause(ctx))
	}
}

// scaleTargets makes the target rates run.json records the share's: the
// executors keep the whole test's rate and start only the share's iterations.
func scaleTargets(meta *rundir.Meta, sh schedule.Share) {
	if sh.IsWhole() {
		return
	}
	frac, _ := sh.Segment().Length().Float64()
	for i := range meta.Scenarios {
		meta.Scenarios[i].TargetRate *= frac
	}
}
