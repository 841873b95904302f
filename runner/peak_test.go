package runner_test

import (
	"context"
	"github.com/knee-dev/knee/internal/kneetest"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
)

// TestPeakRSSPerRun runs twice in one process, as --repeat and knee lab co
// do. During the first run the (in-process) target holds 128 MiB; the
// second run allocates nothing big. Each run directory must hold its own
// peak: the second's well under the first's, which getrusage's process
// peak would have repeated.
func TestPeakRSSPerRun(t *testing.T) {
	kneetest.SkipUnderRace(t)
	var mu sync.Mutex
	var ballast []byte
	big := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if big && ballast == nil {
			ballast = make([]byte, 128<<20)
			for i := 0; i < len(ballast); i += 4096 {
				ballast[i] = 1 // resident, not just reserved
			}
		}
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ex := load.ConstantArrivalRate{Rate: 20, TimeUnit: time.Second, Duration: time.Second, PreAllocatedVUs: 2, MaxVUs: 10}
	peak := func() float64 {
		res, err := runner.Execute(context.Background(), config(srv.URL, ex), opts(t))
		if err != nil {
			t.Fatal(err)
		}
		back, err := rundir.Open(res.Run.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range back.Meta.Notes {
			t.Logf("note: %s", n)
		}
		return back.Meta.Env.Generator.PeakRSSMB
	}
	first := peak()
	mu.Lock()
	big, ballast = false, nil
	mu.Unlock()
	second := peak()
	t.Logf("first run's peak RSS %.1f MB, second's %.1f MB", first, second)
	if first < 128 {
		t.Errorf("first run's peak %.1f MB, want at least the 128 MiB held during it", first)
	}
	if second <= 0 || second > first-100 {
		t.Errorf("second run's peak %.1f MB, want its own, well under the first's %.1f MB", second, first)
	}
}
