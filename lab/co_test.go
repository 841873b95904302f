package lab_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/cli"
	"github.com/knee-dev/knee/lab"
)

// asKnee makes the test binary act as knee when the lab starts it as the
// Bookstore (`knee lab serve`).
const asKnee = "KNEE_TEST_AS_KNEE"

func TestMain(m *testing.M) {
	if os.Getenv(asKnee) == "1" {
		os.Exit(cli.Main(cli.OSEnv()))
	}
	os.Exit(m.Run())
}

// The experiment end to end, shortened: the closed model hides the freeze
// (at most one slow request per VU), the open model does not (about rate ×
// the freeze's first second), and the correction moves the closed p99 up.
func TestCOShape(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the experiment takes about 15 s")
	}
	t.Setenv(asKnee, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := lab.CO(ctx, lab.COOptions{
		Duration: 6 * time.Second, FreezeAt: 2 * time.Second, FreezeFor: 2 * time.Second,
		VUs: 5, Think: 50 * time.Millisecond, Rate: 100, MaxVUs: 1000,
		Out: t.TempDir(), Executable: exe,
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Closed.SlowerThan1s; n > 5 {
		t.Errorf("closed model: %d requests slower than 1 s; its 5 VUs can be caught at most once each", n)
	}
	// Requests due in the freeze's first second wait more than 1 s: about 100.
	if n := res.Open.SlowerThan1s; n < 50 {
		t.Errorf("open model: %d requests slower than 1 s, want about 100 (rate × 1 s)", n)
	}
	if res.Open.Requests+res.Open.DroppedIterations != 600 {
		t.Errorf("open model: %d requests + %d dropped, want the 600 scheduled", res.Open.Requests, res.Open.DroppedIterations)
	}
	// The raw closed p95 is fast (a handful of slow requests); the correction
	// adds the requests the VUs would have sent during the freeze, which pull
	// p95 up to the order of the freeze.
	if res.ClosedCorrected.LatencyMS.P95 < 500 || res.Closed.LatencyMS.P95 > 500 || res.ClosedCorrected.Requests <= res.Closed.Requests {
		t.Errorf("raw %d requests p95 %.1f ms, corrected %d p95 %.1f ms: want raw p95 fast and the corrected one of the order of the freeze",
			res.Closed.Requests, res.Closed.LatencyMS.P95, res.ClosedCorrected.Requests, res.ClosedCorrected.LatencyMS.P95)
	}
	if res.Signals.Closed.Verdict != "likely coordinated omission" {
		t.Errorf("closed run verdict %q", res.Signals.Closed.Verdict)
	}
}
