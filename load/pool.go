package load

import "time"

// vuPool is the open model's VUs as both engines keep them, and the rules
// that decide who takes a start; the engines keep only how a VU waits and
// runs. V is the engine's VU: *openVU, a goroutine (openGoroutines), or
// *loopVU, an id on the Loop (openLoop).
//
// The rules: an idle VU takes a start, the one most recently idle (last in,
// first out keeps the VUs a rate needs busy, their connections warm, and
// leaves the rest at the bottom), except that the one idle longest takes
// it once it has been idle for the retire limit (rotation; see
// rotationDue); when none is idle a new VU takes it while fewer than max
// are alive, taking over a retired VU's identity if one is parked;
// otherwise the start is dropped. At each start, VUs beyond the
// pre-allocated ones that have been idle too long retire (see idleLimit).
//
// A vuPool is not safe for concurrent use: openGoroutines calls it with its
// mu held, openLoop from its one goroutine.
type vuPool[V any] struct {
	pre, max int           // the pre-allocated VUs, and the most alive at once
	idleMax  time.Duration // Options.RetireIdle, resolved; 0: never retire

	idle   []idleVU[V]   // bottom (0) idle longest, top most recently
	parked []parkedVU    // the identities of retired VUs, for reuse
	alive  int           // VUs alive: idle or busy
	prev   time.Duration // the offset of the last start made
	high   poolPeak      // when the pool falls far below its peak (retire.go)
	gone   []V           // retire's buffer

	newID    func() uint64 // a VU id never used in the run
	onShrink func()        // the pool fell far below its peak: Options.OnShrink
	// letGo lets go of VUs the pool has retired, longest idle first, and
	// shrinks what the engine sized to the pool's peak; set by the engine
	// before its first start.
	letGo func(gone []V)
}

// idleVU is an idle VU and when it became idle.
type idleVU[V any] struct {
	v     V
	since time.Time
}

// parkedVU is what a retired VU leaves for the next VU started: its id and
// how many iterations that id ran, so that ids, and the per-VU state an
// Iteration keys by id, stay as few as the VUs ever alive at once, and
// (vu, iter) never repeats.
type parkedVU struct{ id, iter uint64 }

// taker is who takes a start the pool assigns.
type taker uint8

const (
	takerIdle taker = iota // an idle VU
	takerNew               // a new VU: the engine makes it, with spawn's identity
	takerNone              // none: the start is dropped
)

// assign decides who takes a start at offset off, made at now, that no VU
// takes itself: first it retires the VUs idle too long (begin), then picks
// an idle VU (pick), else a new one while fewer than max are alive, else
// none. reap, if not nil, is asked when no VU is idle to make idle those
// whose iterations have ended meanwhile, and reports whether any has: an
// engine that notices ends only when it looks (openLoop) looks before it
// makes a VU, which would open a connection.
func (p *vuPool[V]) assign(now time.Time, off time.Duration, reap func() bool) (V, taker) {
	gap := p.begin(now, off)
	v, ok := p.pick(now, gap)
	if !ok && reap != nil && reap() {
		v, ok = p.pick(now, gap)
	}
	switch {
	case ok:
		return v, takerIdle
	case p.alive < p.max:
		return v, takerNew
	}
	return v, takerNone
}

// setUp takes the run's options and id source; before any other call.
func (p *vuPool[V]) setUp(s *scenarioRun) {
	p.idleMax = s.gen.opt.retireIdle()
	p.newID = s.nextVUID
	p.onShrink = s.shrunk
}

// gap is the schedule's gap between a start at offset off and the last
// start made.
func (p *vuPool[V]) gap(off time.Duration) time.Duration { return off - p.prev }

// begin notes a start at offset off, made at now, and returns its gap
// after the one before. First it retires the VUs idle for longer than that
// gap allows (see retire).
func (p *vuPool[V]) begin(now time.Time, off time.Duration) time.Duration {
	gap := p.gap(off)
	p.retire(now, idleLimit(p.idleMax, gap))
	p.prev = off
	return gap
}

// rotating reports whether a start gap after the one before, at now, goes
// to the VU idle longest (see rotationDue) rather than to the VU most
// recently idle, or to a VU that finishes then and would take it itself.
func (p *vuPool[V]) rotating(now time.Time, gap time.Duration) bool {
	return len(p.idle) > 0 && rotationDue(p.idle[0].since, now, p.idleMax, gap)
}

// pick takes the idle VU that makes a start gap after the one before, at
// now: the one idle longest when rotation is due and another is idle, else
// the one most recently idle; false when none is idle.
func (p *vuPool[V]) pick(now time.Time, gap time.Duration) (V, bool) {
	var v V
	switch n := len(p.idle); {
	case n > 1 && p.rotating(now, gap):
		v = p.idle[0].v
		p.idle[0] = idleVU[V]{}
		p.idle = p.idle[1:]
	case n > 0:
		v = p.idle[n-1].v
		p.idle[n-1] = idleVU[V]{}
		p.idle = p.idle[:n-1]
	default:
		return v, false
	}
	return v, true
}

// push makes v idle from now on, on top of the idle stack.
func (p *vuPool[V]) push(v V, now time.Time) {
	p.idle = append(p.idle, idleVU[V]{v, now})
}

// spawn counts a new VU alive and returns its identity: the one retired
// last, if any is parked, else a new id.
func (p *vuPool[V]) spawn() (id, iter uint64) {
	if n := len(p.parked); n > 0 {
		id, iter = p.parked[n-1].id, p.parked[n-1].iter
		p.parked = p.parked[:n-1]
	} else {
		id = p.newID()
	}
	p.alive++
	p.high.grew(p.alive)
	return id, iter
}

// park keeps a retired VU's identity for reuse; the VU must have let go of
// what the Iteration held for it (see VUReleaser).
func (p *vuPool[V]) park(id, iter uint64) {
	p.parked = append(p.parked, parkedVU{id, iter})
}

// retire retires the VUs idle for longer than limit (0: never), longest
// idle first, while more than the pre-allocated ones are alive, and hands
// them to letGo. At most retireBatch per call: after a long stall
// thousands of VUs become idle together, and the next start must not wait
// for all of them. Once the pool has fallen far below its peak, its slices
// shrink and onShrink is told.
func (p *vuPool[V]) retire(now time.Time, limit time.Duration) {
	if limit <= 0 {
		return
	}
	gone := p.gone[:0]
	for len(gone) < retireBatch && p.alive > p.pre && len(p.idle) > 0 && now.Sub(p.idle[0].since) > limit {
		gone = append(gone, p.idle[0].v)
		p.idle[0] = idleVU[V]{}
		p.idle = p.idle[1:]
		p.alive--
	}
	if len(gone) == 0 {
		return
	}
	p.letGo(gone)
	clear(gone)
	p.gone = gone[:0]
	p.idle = shrink(p.idle)
	p.parked = shrink(p.parked)
	if p.high.shrunk(p.alive) {
		p.onShrink()
	}
}

// handOver empties the pool, none of whose VUs is busy, and returns the
// identities of its VUs (identity says what a VU's is) for another pool to
// adopt: its parked ones, then its idle ones from the top down, so that
// the other pool's first VUs take the idle ones' ids from the bottom up, in
// the order they were made.
func (p *vuPool[V]) handOver(identity func(V) parkedVU) []parkedVU {
	ids := p.parked
	for i := len(p.idle) - 1; i >= 0; i-- {
		ids = append(ids, identity(p.idle[i].v))
	}
	p.idle, p.parked, p.alive = nil, nil, 0
	return ids
}

// adopt parks identities another pool handed over, for this pool's VUs to
// take over, the last first.
func (p *vuPool[V]) adopt(ids []parkedVU) { p.parked = append(p.parked, ids...) }
