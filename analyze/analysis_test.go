package analyze_test

import (
	"errors"
	"testing"

	"github.com/knee-dev/knee/analyze"
)

// Analyze is the one rule for every reader: a closed run is corrected, an
// open one is not, a plan that finds no step is said, an invalid one fails.
func TestAnalyze(t *testing.T) {
	closed, err := analyze.Analyze(closedStallRun(true), analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 55 seconds of 198 requests and the 20 that waited out the freeze.
	if closed.Summary.Requests != 55*198+20 || closed.Correction == nil || closed.Corrected == nil {
		t.Fatalf("closed: %d requests, correction %v; want 10910 and a correction", closed.Summary.Requests, closed.Correction)
	}
	// The correction adds the requests the 20 VUs would have sent during
	// the 5 s freeze at one per 101 ms: about 20 × 5 s / 101 ms ≈ 990.
	if added := closed.Corrected.Requests - closed.Summary.Requests; added < 900 || added > 1000 {
		t.Errorf("corrected adds %d requests, want about 990", added)
	}
	if closed.CO.Verdict != "likely coordinated omission" {
		t.Errorf("closed verdict %q", closed.CO.Verdict)
	}

	open, err := analyze.Analyze(openStallRun(), analyze.Options{Plan: &analyze.StepPlan{}})
	if err != nil {
		t.Fatal(err)
	}
	if open.Correction != nil || open.Corrected != nil || open.CorrectionNote != "" {
		t.Errorf("open run corrected: %+v %q", open.Correction, open.CorrectionNote)
	}
	if open.Steps != nil || !errors.Is(open.NoSteps, analyze.ErrNoSteps) {
		t.Errorf("a constant run as a stepped one: steps %v, note %v; want ErrNoSteps", open.Steps, open.NoSteps)
	}
	if open.Summary.Requests != 55*200+1000 {
		t.Errorf("open: %d requests, want 12000", open.Summary.Requests)
	}

	// Asked for with an interval, the correction of an open-model run says why there is none.
	forced, err := analyze.Analyze(openStallRun(), analyze.Options{CO: analyze.COOptions{ExpectedInterval: 5e6}})
	if err != nil || forced.Correction != nil || forced.CorrectionNote == "" {
		t.Errorf("forced on an open run: %v, correction %v, note %q", err, forced.Correction, forced.CorrectionNote)
	}

	if _, err := analyze.Analyze(openStallRun(), analyze.Options{Plan: &analyze.StepPlan{Steps: -1}}); err == nil {
		t.Error("an invalid plan was accepted")
	}
}
