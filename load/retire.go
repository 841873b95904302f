package load

import "time"

// VUReleaser is an Iteration that holds per-VU resources (a connection,
// buffers, a script runtime) and can let them go. The open model calls
// ReleaseVU when it retires a VU that sat idle (see Options.RetireIdle),
// the closed model when ramping-vus ramps a VU down; always from that VU's
// goroutine after its last iteration returned, so never while the same vu
// is in Do (or DoRecord). In the open model the vu may run again later,
// with iterations numbered on from where it stopped: Do must then build
// afresh whatever it needs. VUs still alive when the scenario ends are not
// released: the Iteration's owner closes it after the run.
type VUReleaser interface {
	ReleaseVU(vu uint64)
}

// DefaultRetireIdle is the least time an open-model VU beyond the
// pre-allocated ones stays idle before it retires, when
// Options.RetireIdle is 0.
const DefaultRetireIdle = 2 * time.Second

// retireBatch bounds the VUs retired per start (see vuPool.retire):
// letting go of one is quick, but after a long stall thousands of VUs
// become idle together, and the next start must not wait for all of them.
const retireBatch = 32

func (o Options) retireIdle() time.Duration {
	switch {
	case o.RetireIdle == 0:
		return DefaultRetireIdle
	case o.RetireIdle < 0:
		return 0
	}
	return o.RetireIdle
}

// idleLimit is how long a VU may stay idle before it retires: least (0:
// never), or twice the schedule's gap between its last two starts if that
// is longer, so that a slow rate whose every start needs a VU that
// finished long ago does not retire and restart VUs at every start.
func idleLimit(least, gap time.Duration) time.Duration {
	if least <= 0 {
		return 0
	}
	return max(least, 2*gap)
}

// rotationDue reports whether a VU idle since since should take a start
// gap after the one before, at now, ahead of the VU most recently idle:
// once it has been idle for the retire limit (idleLimit of least, the
// resolved Options.RetireIdle; of DefaultRetireIdle when VUs never
// retire). Both engines hand idle VUs out last in, first out, the cheapest
// way to send (a few VUs' connections stay busy and warm), and retire
// those beyond the pre-allocated ones that sit idle; but the pre-allocated
// VUs at the bottom would sit unused until a stall reached them, and a
// connection they opened then would stay for the rest of the run. Rotated
// in now and then (at 2,000/s with 50 VUs, 25 of the 2,000 starts a
// second), every pre-allocated VU opens its connection within seconds, as
// every k6 VU does within its first round, and keeps it in use: the
// generator's descriptors are the same from the start to the end, and a
// kept connection the server dropped is found by a start, not by the next
// stall.
func rotationDue(since, now time.Time, least, gap time.Duration) bool {
	if least <= 0 {
		least = DefaultRetireIdle
	}
	return now.Sub(since) > idleLimit(least, gap)
}

// retireVUs ends the VUs the pool retired (its letGo): it closes their
// jobs channels, and each VU's goroutine ends after releasing what the
// Iteration holds for it (see retired). mu held.
func (a *openGoroutines) retireVUs(gone []*openVU) {
	for _, v := range gone {
		last := a.alive[len(a.alive)-1]
		last.at, a.alive[v.at] = v.at, last
		a.alive[len(a.alive)-1] = nil
		a.alive = a.alive[:len(a.alive)-1]
		v.retiring = true
		close(v.jobs)
	}
	// The slice grew with the pool's peak; once it has shrunk far below,
	// it shrinks too. Order, and so every VU's at, is kept.
	a.alive = shrink(a.alive)
}

// retired releases what the Iteration holds for v and parks v's identity
// for reuse; v's goroutine calls it last, for the identity is not to be
// taken over before the Iteration has let go of it.
func (a *openGoroutines) retired(s *scenarioRun, v *openVU) {
	release(s, v.id)
	a.mu.Lock()
	a.park(v.id, v.iter)
	a.mu.Unlock()
}

// poolPeak tells when a VU pool that grew past minShrinkCap VUs (a stall
// made the schedule's starts wait, each on a VU of its own) has fallen
// below a quarter of its peak: the stall's VUs have retired and released
// what they held, so Options.OnShrink may give the memory back.
type poolPeak struct{ peak int }

// grew notes the pool's size after it grew.
func (p *poolPeak) grew(alive int) { p.peak = max(p.peak, alive) }

// shrunk reports, once per peak, that the pool fell below a quarter of it.
func (p *poolPeak) shrunk(alive int) bool {
	if p.peak <= minShrinkCap || alive >= p.peak/4 {
		return false
	}
	p.peak = alive
	return true
}

// shrunk calls Options.OnShrink on a goroutine of its own: it may take a
// while (a whole GC), and the scheduler has starts to make.
func (s *scenarioRun) shrunk() {
	if f := s.gen.opt.OnShrink; f != nil {
		go f()
	}
}

// minShrinkCap is the capacity below which a pool slice is left as it is.
const minShrinkCap = 64

// shrink copies s into a slice of twice its length when s fills less than
// a quarter of its capacity (the pool fell far below its peak), so that
// memory sized to a stall's thousands of VUs goes back once they retire;
// else it returns s. The factor between the two keeps a pool that
// oscillates from copying at every change.
func shrink[T any](s []T) []T {
	if cap(s) <= minShrinkCap || len(s) >= cap(s)/4 {
		return s
	}
	return append(make([]T, 0, max(2*len(s), minShrinkCap/2)), s...)
}

// release lets the Iteration free what it holds for vu, a VU that retired
// (open model) or was ramped down (closed model); its goroutine only.
func release(s *scenarioRun, vu uint64) {
	if r, ok := s.it.(VUReleaser); ok {
		r.ReleaseVU(vu)
	}
}
