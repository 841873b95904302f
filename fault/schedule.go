package fault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"
)

// Fault freezes Freezer from t0+At for For.
type Fault struct {
	At, For time.Duration
	Freezer Freezer
}

// Event is one freeze or thaw that Schedule did or tried.
type Event struct {
	Fault  int           // index in the faults given to Schedule
	Kind   string        // "freeze" or "thaw"
	At     time.Duration // since t0
	Target string        // Freezer.String()
	Method string        // Freezer.Method() when it has one
	Err    error
}

// Scheduler runs faults. StateDir is where frozen.json is kept so that
// ThawAll can thaw what a killed knee left frozen; "" keeps no state file.
type Scheduler struct {
	StateDir string
}

// Schedule runs faults with the state file in DefaultStateDir.
func Schedule(ctx context.Context, t0 time.Time, faults []Fault, onEvent func(Event)) error {
	dir, err := DefaultStateDir(os.Getenv)
	if err != nil {
		return err
	}
	return Scheduler{StateDir: dir}.Run(ctx, t0, faults, onEvent)
}

// ValidateFaults reports every fault that cannot run: a negative At, a For
// that is not positive, no Freezer, or two faults on the same target that
// overlap (the first thaw would end the second freeze early).
func ValidateFaults(faults []Fault) []error {
	var errs []error
	for i, f := range faults {
		switch {
		case f.Freezer == nil:
			errs = append(errs, fmt.Errorf("fault %d: no target", i))
			continue
		case f.At < 0:
			errs = append(errs, fmt.Errorf("fault %d: at %v is before the start", i, f.At))
		case f.For <= 0:
			errs = append(errs, fmt.Errorf("fault %d: for %v must be positive", i, f.For))
		}
		for j, g := range faults[:i] {
			if g.Freezer != nil && g.Freezer.String() == f.Freezer.String() &&
				f.At < g.At+g.For && g.At < f.At+f.For {
				errs = append(errs, fmt.Errorf("fault %d overlaps fault %d on %s", i, j, f.Freezer))
			}
		}
	}
	return errs
}

type step struct {
	at    time.Duration
	fault int
	thaw  bool
}

// Run freezes each fault's target at t0+At and thaws it For later. It
// returns when every fault is done or ctx ends, and every target it froze is
// thawed on every way out, panics included. A failed freeze does not stop
// the others; Run returns every freeze and thaw error, joined. onEvent (may
// be nil) is called from Run's goroutine.
func (s Scheduler) Run(ctx context.Context, t0 time.Time, faults []Fault, onEvent func(Event)) (err error) {
	if errs := ValidateFaults(faults); len(errs) > 0 {
		return errors.Join(errs...)
	}
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	r := &faultRun{s: s, t0: t0, faults: faults, onEvent: onEvent, frozen: map[int]StateEntry{}}
	r.owner = os.Getpid()
	if st, err := readProcStat("/proc", r.owner); err == nil {
		r.ownerStart = st.start
	}
	defer func() { err = errors.Join(err, r.thawAll()) }()

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for _, st := range plan(faults) {
		timer.Reset(time.Until(t0.Add(st.at)))
		select {
		case <-ctx.Done():
			return errors.Join(r.errs...)
		case <-timer.C:
		}
		if st.thaw {
			r.thaw(st.fault)
		} else {
			r.freeze(ctx, st.fault)
		}
	}
	return errors.Join(r.errs...)
}

// plan orders every freeze and thaw in time; at equal times thaws go first.
func plan(faults []Fault) []step {
	var steps []step
	for i, f := range faults {
		steps = append(steps, step{at: f.At, fault: i}, step{at: f.At + f.For, fault: i, thaw: true})
	}
	slices.SortStableFunc(steps, func(a, b step) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		if a.thaw != b.thaw {
			if a.thaw {
				return -1
			}
			return 1
		}
		return 0
	})
	return steps
}

type faultRun struct {
	s          Scheduler
	t0         time.Time
	faults     []Fault
	onEvent    func(Event)
	owner      int
	ownerStart uint64
	frozen     map[int]StateEntry // fault index → its state entry (zero when not recorded)
	errs       []error
}

func (r *faultRun) event(i int, kind string, err error) {
	f := r.faults[i].Freezer
	ev := Event{Fault: i, Kind: kind, At: time.Since(r.t0), Target: f.String(), Err: err}
	if m, ok := f.(interface{ Method() string }); ok {
		ev.Method = m.Method()
	}
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s %s: %w", kind, f, err))
	}
	r.onEvent(ev)
}

// freeze records the target, then freezes it. A target that cannot be
// recorded is not frozen: nothing could thaw it after a SIGKILL.
func (r *faultRun) freeze(ctx context.Context, i int) {
	f := r.faults[i].Freezer
	entry, recorded := entryFor(f, r.owner, r.ownerStart, time.Now())
	if recorded && r.s.StateDir != "" {
		if err := addEntry(r.s.StateDir, entry); err != nil {
			r.event(i, "freeze", fmt.Errorf("not frozen: %w", err))
			return
		}
	} else {
		recorded = false
	}
	if err := f.Freeze(ctx); err != nil {
		// Freeze thaws on failure; thaw again in case it could not.
		err = errors.Join(err, f.Thaw())
		if recorded {
			err = errors.Join(err, removeEntry(r.s.StateDir, entry))
		}
		r.event(i, "freeze", err)
		return
	}
	if !recorded {
		entry = StateEntry{}
	}
	r.frozen[i] = entry
	r.event(i, "freeze", nil)
}

// thaw thaws fault i if it is frozen and reports it.
func (r *faultRun) thaw(i int) {
	if _, ok := r.frozen[i]; ok {
		r.event(i, "thaw", r.doThaw(i))
	}
}

// doThaw thaws fault i and drops its state entry; a failed thaw keeps the
// entry for ThawAll.
func (r *faultRun) doThaw(i int) error {
	entry := r.frozen[i]
	delete(r.frozen, i)
	err := r.faults[i].Freezer.Thaw()
	if err == nil && entry.Method != "" {
		err = removeEntry(r.s.StateDir, entry)
	}
	return err
}

// thawAll thaws whatever is still frozen, in fault order. Every thaw is
// done before any event is reported, so a panicking onEvent cannot leave a
// target frozen.
func (r *faultRun) thawAll() error {
	keys := make([]int, 0, len(r.frozen))
	for i := range r.frozen {
		keys = append(keys, i)
	}
	slices.Sort(keys)
	errs := make([]error, len(keys))
	for k, i := range keys {
		errs[k] = r.doThaw(i)
	}
	n := len(r.errs)
	for k, i := range keys {
		r.event(i, "thaw", errs[k])
	}
	return errors.Join(r.errs[n:]...)
}
