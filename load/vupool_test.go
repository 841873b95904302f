package load

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// poolVU is a VU for vuPool's own tests: just its identity.
type poolVU struct{ id, iter uint64 }

// testPool is a pool with pre pre-allocated VUs and max at most, whose
// idle stack holds a VU per entry of idleFor (bottom first, ids from 1),
// idle for that long at now; parked are retired identities; busy VUs are
// alive but not idle. New ids count on from 100. Retired VUs go to gone.
func testPool(pre, max int, idleMax time.Duration, now time.Time, idleFor []time.Duration, parked []parkedVU, busy int, gone *[]uint64) *vuPool[*poolVU] {
	next := uint64(100)
	p := &vuPool[*poolVU]{
		pre: pre, max: max, idleMax: idleMax, parked: parked,
		alive:    len(idleFor) + busy,
		newID:    func() uint64 { next++; return next },
		onShrink: func() {},
		letGo: func(vs []*poolVU) {
			for _, v := range vs {
				*gone = append(*gone, v.id)
			}
		},
	}
	for i, d := range idleFor {
		p.push(&poolVU{id: uint64(i + 1)}, now.Add(-d))
	}
	return p
}

// The pool's rules for a scheduler's start, worked out by hand from
// vuPool's doc: retire (idle over max(idleMax, 2×gap), beyond pre, longest
// idle first), then rotation (the bottom VU idle over the limit, when
// another is idle), else the top, else a new VU below max (a parked
// identity first), else a drop.
func TestVUPoolAssign(t *testing.T) {
	now := time.Unix(1000, 0)
	s := time.Second
	tests := []struct {
		name     string
		pre, max int
		idleMax  time.Duration
		idleFor  []time.Duration // bottom first; ids 1, 2, ...
		parked   []parkedVU
		busy     int
		gap      time.Duration
		reaped   []uint64 // VUs the reap makes idle, if it is asked

		want       taker
		wantID     uint64 // the idle VU picked, or the new VU's id
		wantIter   uint64 // the new VU's iteration count
		wantGone   []uint64
		wantAlive  int
		wantReaped bool
	}{
		// 3 idle for 1 s < 2 s: the top one (3), nothing retires.
		{"most recently idle", 3, 5, 2 * s, []time.Duration{s, s, s}, nil, 0, 10 * ms, nil,
			takerIdle, 3, 0, nil, 3, false},
		// The bottom one idle 2.5 s > 2 s: rotation; all pre-allocated, none retires.
		{"rotation to the one idle longest", 3, 5, 2 * s, []time.Duration{2500 * ms, s, s}, nil, 0, 10 * ms, nil,
			takerIdle, 1, 0, nil, 3, false},
		// Rotation is for the default limit too when VUs never retire (idleMax 0).
		{"rotation when VUs never retire", 3, 5, 0, []time.Duration{2500 * ms, s, s}, nil, 0, 10 * ms, nil,
			takerIdle, 1, 0, nil, 3, false},
		// A gap of 1.5 s makes the limit 3 s: 2.5 s is not over it.
		{"a slow rate's longer limit", 3, 5, 2 * s, []time.Duration{2500 * ms, s, s}, nil, 0, 1500 * ms, nil,
			takerIdle, 3, 0, nil, 3, false},
		// Rotation needs a second idle VU: alone, the one idle VU is the top.
		{"one idle VU", 1, 5, 2 * s, []time.Duration{3 * s}, nil, 0, 10 * ms, nil,
			takerIdle, 1, 0, nil, 1, false},
		// pre 1, 4 alive: VU 1 (3 s) and VU 2 (2.5 s) retire, VU 3 (2 s, not
		// over) stays; then VU 3 is at the bottom, not over the limit: the top (4).
		{"retire beyond the pre-allocated", 1, 5, 2 * s, []time.Duration{3 * s, 2500 * ms, 2 * s, ms}, nil, 0, 10 * ms, nil,
			takerIdle, 4, 0, []uint64{1, 2}, 2, false},
		// pre 3 of 4 alive: only VU 1 retires; VU 2, idle 2.5 s, then rotates in.
		{"retire stops at the pre-allocated", 3, 5, 2 * s, []time.Duration{3 * s, 2500 * ms, 2500 * ms, ms}, nil, 0, 10 * ms, nil,
			takerIdle, 2, 0, []uint64{1}, 3, false},
		// None idle, 2 busy of 3: a new VU with the identity parked last.
		{"new VU takes a parked identity", 1, 3, 2 * s, nil, []parkedVU{{7, 4}, {9, 2}}, 2, 10 * ms, nil,
			takerNew, 9, 2, nil, 2, true},
		// None idle, none parked: a new id.
		{"new VU with a new id", 1, 3, 2 * s, nil, nil, 2, 10 * ms, nil,
			takerNew, 101, 0, nil, 2, true},
		// None idle, 3 busy of 3: dropped.
		{"every VU busy at max", 1, 3, 2 * s, nil, nil, 3, 10 * ms, nil,
			takerNone, 0, 0, nil, 3, true},
		// None idle, but the reap finds VU 8 ended: it takes the start.
		{"reap before a new VU", 1, 3, 2 * s, nil, nil, 3, 10 * ms, []uint64{8},
			takerIdle, 8, 0, nil, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gone []uint64
			p := testPool(tt.pre, tt.max, tt.idleMax, now, tt.idleFor, tt.parked, tt.busy, &gone)
			reaped := false
			reap := func() bool {
				reaped = true
				for _, id := range tt.reaped {
					p.push(&poolVU{id: id}, now)
				}
				return len(tt.reaped) > 0
			}
			p.prev = 5 * s
			v, by := p.assign(now, 5*s+tt.gap, reap)
			if by == takerNew {
				id, iter := p.spawn()
				v = &poolVU{id, iter}
			}
			if by != tt.want || (v == nil) != (tt.want == takerNone) || v != nil && (v.id != tt.wantID || v.iter != tt.wantIter) {
				t.Errorf("assign: %v taker %d, want VU %d (iter %d) taker %d", v, by, tt.wantID, tt.wantIter, tt.want)
			}
			if !slices.Equal(gone, tt.wantGone) {
				t.Errorf("retired %v, want %v", gone, tt.wantGone)
			}
			if want := tt.wantAlive + btoi(by == takerNew); p.alive != want {
				t.Errorf("%d alive, want %d", p.alive, want)
			}
			if reaped != tt.wantReaped {
				t.Errorf("reap asked: %v, want %v", reaped, tt.wantReaped)
			}
			if p.prev != 5*s+tt.gap {
				t.Errorf("prev %v, want the start's offset %v", p.prev, 5*s+tt.gap)
			}
		})
	}
}

// ids is from, from+1, ..., to.
func ids(from, to uint64) []uint64 {
	var s []uint64
	for id := from; id <= to; id++ {
		s = append(s, id)
	}
	return s
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// At most retireBatch VUs retire per start, longest idle first; the rest
// at the next.
func TestVUPoolRetiresInBatches(t *testing.T) {
	now := time.Unix(1000, 0)
	idleFor := make([]time.Duration, 40) // ids 1..40, 1 longest idle
	for i := range idleFor {
		idleFor[i] = time.Duration(100-i) * time.Second
	}
	var gone []uint64
	p := testPool(2, 50, 2*time.Second, now, idleFor, nil, 0, &gone)
	// 40 alive, 2 pre-allocated. The first start retires VUs 1 to 32 and
	// rotates VU 33 in (idle 68 s); the second retires 34 to 39, leaving
	// VU 33 (busy) and VU 40.
	want := [][]uint64{ids(1, 32), append(ids(1, 32), ids(34, 39)...)}
	for i := range want {
		v, _ := p.assign(now, time.Duration(i)*ms, nil)
		if !slices.Equal(gone, want[i]) {
			t.Fatalf("start %d: retired %v, want %v", i, gone, want[i])
		}
		if i == 0 && v.id != 33 {
			t.Errorf("start 0 went to VU %d, want 33", v.id)
		}
	}
	if p.alive != 2 {
		t.Errorf("%d alive, want 2", p.alive)
	}
}

// handOver passes a pool's identities to another, whose first VUs take
// the idle ones' ids in the order they were made (bottom first), then the
// parked ones', then new ids.
func TestVUPoolHandOver(t *testing.T) {
	now := time.Unix(1000, 0)
	var gone []uint64
	from := testPool(3, 5, 2*time.Second, now, []time.Duration{0, 0, 0}, []parkedVU{{9, 5}}, 0, &gone)
	ids := from.handOver(func(v *poolVU) parkedVU { return parkedVU{v.id, v.iter} })
	if from.alive != 0 || len(from.idle) != 0 || len(from.parked) != 0 {
		t.Errorf("after handOver: %d alive, %d idle, %d parked; want all 0", from.alive, len(from.idle), len(from.parked))
	}
	to := testPool(3, 5, 2*time.Second, now, nil, nil, 0, &gone)
	to.adopt(ids)
	var got []string
	for range 5 {
		id, iter := to.spawn()
		got = append(got, fmt.Sprint(id, "/", iter))
	}
	// The idle VUs 1, 2, 3 first, then the parked 9 (5 iterations run), then a new id.
	if want := []string{"1/0", "2/0", "3/0", "9/5", "101/0"}; !slices.Equal(got, want) {
		t.Errorf("spawned %v, want %v", got, want)
	}
}
