package analyze_test

import (
	"errors"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
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

// A think time given for data that does not say its model (an import)
// makes it a closed run with that think: 20 latencies of 1 ms and one of
// 1 s with 99 ms think give an expected interval of 1 + 99 = 100 ms, so the
// 1 s value adds 900, 800, ..., 100 ms: 9 values, 30 in all. The run
// itself is left as it was; without the think nothing is corrected.
func TestAnalyzeThinkMakesAnImportClosed(t *testing.T) {
	f := newFakeRun("", 1, rundir.Scenario{Name: "imported"})
	f.add(0, key(record.Latency, "imported"), time.Millisecond, 20)
	f.add(0, key(record.Latency, "imported"), time.Second, 1)
	a, err := analyze.Analyze(f.r, analyze.Options{CO: analyze.COOptions{Think: 99 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Summary.Requests != 21 || a.Corrected == nil || a.Corrected.Requests != 30 {
		t.Fatalf("raw %d requests, corrected %+v; want 21 and 30", a.Summary.Requests, a.Corrected)
	}
	if sc := f.r.Meta.Scenarios[0]; sc.Think != 0 || sc.Model != "" {
		t.Errorf("the caller's run was changed: %+v", sc)
	}
	plain, err := analyze.Analyze(f.r, analyze.Options{})
	if err != nil || plain.Correction != nil || plain.Corrected != nil {
		t.Errorf("without a think: %v, correction %v; want none", err, plain.Correction)
	}
}

// The target's own record, given as a run, is merged and compared with the
// client's: a server that saw 2 % of its requests take 5 s beside a client
// whose p99 is 1 ms fires the server signal; without it there is none.
func TestAnalyzeComparesTheServersRecord(t *testing.T) {
	srv := newFakeRun("", 2, rundir.Scenario{Name: "server"})
	srv.add(0, key(record.Latency, "server"), time.Millisecond, 49)
	srv.add(1, key(record.Latency, "server"), time.Millisecond, 49)
	srv.add(1, key(record.Latency, "server"), 5*time.Second, 2)
	srv.add(1, key(record.Service, "server"), time.Hour, 1000) // not latency: left out
	a, err := analyze.Analyze(closedStallRun(false), analyze.Options{Server: srv.r})
	if err != nil {
		t.Fatal(err)
	}
	s := signal(t, a.CO, analyze.SignalServer)
	if !s.Fired || !closeTo(s.Observed, 5000, 5000*0.01) {
		t.Errorf("server signal %+v; want fired with the server's p99 at 5 s", s)
	}
	plain, err := analyze.Analyze(closedStallRun(false), analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range plain.CO.Signals {
		if sig.Name == analyze.SignalServer {
			t.Errorf("a server signal without a server record: %+v", sig)
		}
	}
}
