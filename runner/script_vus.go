package runner

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/knee-dev/knee/k6script"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/scenario"
)

// vusEvery is how often k6 samples vus and vus_max: a one-second ticker
// from the scheduler's start (k6 v1.8.1 execution/scheduler.go
// emitVUsAndVUsMax), no sample at the start or the end.
const vusEvery = time.Second

// vusCounter is what the sampler records into (k6script.Script).
type vusCounter interface {
	RecordVUs(active, initialised int64)
	VUsTaken(scenario string) int64
	// CountVUsInitialised gives the script k6's initialised VUs, for
	// exec.instance.vusInitialized.
	CountVUsInitialised(count func() int64)
	// TimeTestRun gives the script k6's test run duration so far, for
	// exec.instance.currentTestRunDuration.
	TimeTestRun(elapsed func() time.Duration)
}

// vusSampler samples k6's vus and vus_max of a script's run. Before the
// load starts and after it ends no VU is active, as in k6's setup() and
// teardown().
type vusSampler struct {
	to    vusCounter
	scs   []scenario.Scenario
	stats atomic.Pointer[func() []load.Stats]
}

// attach is runner.Options.OnLoad: the load's live counters.
func (v *vusSampler) attach(stats func() []load.Stats) { v.stats.Store(&stats) }

// sample is one reading. k6's active VUs: in the closed model a VU is
// active from its start until it stops (the executor holds it the whole
// time), in the open model only while it runs an iteration
// (lib/executor ramping_arrival_rate.go activeVUPool).
func (v *vusSampler) sample() (active, initialised int64) {
	var live map[string]load.Stats
	if f := v.stats.Load(); f != nil {
		live = map[string]load.Stats{}
		for _, st := range (*f)() {
			live[st.Scenario] = st
		}
	}
	for _, sc := range v.scs {
		st := live[sc.Name]
		if sc.Executor.Model() == load.ModelOpen {
			active += int64(st.BusyVUs)
		} else {
			active += int64(st.VUs)
		}
	}
	return active, v.initialised()
}

// initialised is k6's initialised VUs: what the plan needs before the
// start (a closed scenario's peak, an open one's pre-allocated VUs), plus
// the open model's VUs started beyond those, which it keeps once made.
func (v *vusSampler) initialised() int64 {
	n := int64(0)
	for _, sc := range v.scs {
		if sc.Executor.Model() == load.ModelOpen {
			n += max(int64(plannedVUs(sc)), v.to.VUsTaken(sc.Name))
			continue
		}
		n += int64(plannedVUs(sc))
	}
	return n
}

// vusClock is a running sampler: k6's one-second ticker on the test's
// own clock, which stands still while paused (the time knee spends on
// what k6 does not do: the environment note before and after the load),
// so the samples fall where k6's would.
type vusClock struct {
	ctl  chan bool // true: run, false: pause
	done chan struct{}
	stop func()

	mu      sync.Mutex
	running bool
	since   time.Time     // when it last started running
	ran     time.Duration // the running time before since
}

// start records a sample every `every` of unpaused time until the clock
// is stopped.
func (v *vusSampler) start(every time.Duration) *vusClock {
	c := &vusClock{ctl: make(chan bool), done: make(chan struct{}), running: true, since: time.Now()}
	var wg sync.WaitGroup
	wg.Go(func() { v.tick(every, c) })
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			c.account(false) // its running time ends here
			close(c.done)
		})
		wg.Wait()
	}
	return c
}

// tick records a sample each time the clock's running time reaches the
// next multiple of every: a ticker's, without drift, that stands still
// while the clock is paused.
func (v *vusSampler) tick(every time.Duration, c *vusClock) {
	next := every // the running time of the next sample
	t := time.NewTimer(every)
	defer t.Stop()
	running := true
	for {
		var fire <-chan time.Time
		if running {
			fire = t.C
		}
		select {
		case <-c.done:
			return
		case running = <-c.ctl:
			if running {
				t.Reset(max(next-c.elapsed(), 0))
			} else {
				t.Stop()
			}
		case <-fire:
			v.to.RecordVUs(v.sample())
			next += every
			t.Reset(max(next-c.elapsed(), 0))
		}
	}
}

// pause stops the clock until resume; both return at once once stopped.
func (c *vusClock) pause() { c.set(false) }

// resume runs the clock again.
func (c *vusClock) resume() { c.set(true) }

func (c *vusClock) set(run bool) {
	select {
	case <-c.done:
		return
	default:
	}
	c.account(run)
	select {
	case c.ctl <- run:
	case <-c.done:
	}
}

// account adds the running time up to a pause; run says what the clock
// does from now.
func (c *vusClock) account(run bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case run && !c.running:
		c.since = time.Now()
	case !run && c.running:
		c.ran += time.Since(c.since)
	}
	c.running = run
}

// elapsed is the clock's running time so far: the test's own duration,
// as k6's GetCurrentTestRunDuration has it.
func (c *vusClock) elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return c.ran + time.Since(c.since)
	}
	return c.ran
}

// startVUs starts sampling s's vus and vus_max, as k6 does from its
// start to teardown()'s end. The clock stands still from Execute's call
// (the caller pauses it) to the load's start, which opt.OnLoad (chained)
// marks, and from the load's end to teardown: there knee does what k6
// does not (the environment note).
func startVUs(s vusCounter, plan *k6script.Plan, opt *Options) *vusClock {
	v := &vusSampler{to: s, scs: plan.Config.Scenarios}
	s.CountVUsInitialised(v.initialised)
	clock := v.start(vusEvery)
	s.TimeTestRun(clock.elapsed)
	prev := opt.OnLoad
	opt.OnLoad = func(stats func() []load.Stats) {
		if prev != nil {
			prev(stats)
		}
		v.attach(stats)
		clock.resume()
	}
	return clock
}

// plannedVUs is how many VUs a scenario needs before its start: the open
// model's pre-allocated VUs, the closed model's peak.
func plannedVUs(sc scenario.Scenario) int {
	switch e := sc.Executor.(type) {
	case load.ConstantArrivalRate:
		return e.PreAllocatedVUs
	case load.RampingArrivalRate:
		return e.PreAllocatedVUs
	default:
		return sc.Executor.PeakVUs()
	}
}
