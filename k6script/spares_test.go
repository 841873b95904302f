package k6script

import (
	"context"
	"testing"
	"time"
)

// waitFor polls cond for up to 30 s: the spares are made by a goroutine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// KeepSpares makes runtimes ahead, never more than the limit in all: with
// one prepared and a limit of 6, six VUs take runtimes whose init code
// already ran, and the seventh (beyond the limit, which load never asks
// for) makes its own.
func TestKeepSparesUpToTheLimit(t *testing.T) {
	s := loadScript(t, "export default function () {}\n", nil)
	if err := s.Prepare(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.KeepSpares(ctx, 6)
	defer wait()
	defer cancel()
	waitFor(t, "6 runtimes", func() bool { return s.ready.count() == 6 })
	for id := uint64(1); id <= 6; id++ {
		if _, fresh, err := s.vuFor(context.Background(), id, nil); err != nil || fresh {
			t.Fatalf("VU %d: fresh %v, err %v; want a runtime made ahead", id, fresh, err)
		}
	}
	if _, fresh, err := s.vuFor(context.Background(), 7, nil); err != nil || !fresh {
		t.Errorf("VU 7: fresh %v, err %v; want its own runtime, the limit being 6", fresh, err)
	}
	if n := s.runtimes.Load(); n != 7 {
		t.Errorf("%d runtimes made, want 7", n)
	}
}

// Taking spares makes more: the pool is back to Spares after three are
// taken, and the VUs that took them did not run the init code.
func TestKeepSparesRefills(t *testing.T) {
	s := loadScript(t, "export default function () {}\n", nil)
	if err := s.Prepare(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := s.KeepSpares(ctx, 1000)
	defer wait()
	defer cancel()
	waitFor(t, "the spares", func() bool { return s.ready.count() == Spares })
	for id := uint64(1); id <= 3; id++ {
		if _, fresh, _ := s.vuFor(context.Background(), id, nil); fresh {
			t.Fatalf("VU %d ran its init code itself", id)
		}
	}
	waitFor(t, "the spares again", func() bool { return s.ready.count() == Spares && s.runtimes.Load() == Spares+3 })
}

// Each VU's init code sees its own id in __VU, as k6's (internal/js/
// bundle.go:415, the id set before the init code runs): the runtimes made
// before the test, the spares made ahead, and those a VU makes itself,
// whichever order the VUs take them in.
func TestInitCodeSeesItsVU(t *testing.T) {
	for _, tt := range []struct {
		name     string
		prepared int
		spares   int64 // KeepSpares' limit; 0 for none
		order    []uint64
	}{
		{"prepared, in order", 3, 0, []uint64{1, 2, 3}},
		{"prepared, taken out of order", 3, 0, []uint64{3, 1, 2}},
		{"beyond the prepared", 1, 0, []uint64{2, 1, 3}},
		{"spares", 1, 5, []uint64{1, 2, 4, 3, 5, 6}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, "export const initVU = __VU;\nexport default function () {}\n", nil)
			if err := s.Prepare(context.Background(), tt.prepared); err != nil {
				t.Fatal(err)
			}
			if tt.spares > 0 {
				ctx, cancel := context.WithCancel(context.Background())
				wait := s.KeepSpares(ctx, tt.spares)
				defer wait()
				defer cancel()
				waitFor(t, "the spares", func() bool { return s.runtimes.Load() == tt.spares })
			}
			for _, id := range tt.order {
				v, _, err := s.vuFor(context.Background(), id, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := v.exports.Get("initVU").ToInteger(); got != int64(id) {
					t.Errorf("VU %d's init code saw __VU %d", id, got)
				}
			}
		})
	}
}
