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
	waitFor(t, "6 runtimes", func() bool { return len(s.pool) == 6 })
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
	waitFor(t, "the spares", func() bool { return len(s.pool) == Spares })
	for id := uint64(1); id <= 3; id++ {
		if _, fresh, _ := s.vuFor(context.Background(), id, nil); fresh {
			t.Fatalf("VU %d ran its init code itself", id)
		}
	}
	waitFor(t, "the spares again", func() bool { return len(s.pool) == Spares && s.runtimes.Load() == Spares+3 })
}
