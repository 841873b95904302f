package analyze_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// closedStallRun is the article's closed test built by hand: 20 VUs, 100 ms
// think, 1 ms responses, 60 s. Each VU's period is 101 ms, so ~198 requests
// finish per second. At 30 s the target freezes for 5 s: nothing finishes
// in 30..34, and at 35 s the 20 waiting requests finish after ~5 s.
// withInterval also records the Interval metric (response + think per VU).
func closedStallRun(withInterval bool) *rundir.Dir {
	f := newFakeRun("closed", 60, rundir.Scenario{Name: "closed", Executor: "constant-vus", Model: "closed",
		VUs: 20, Think: 100 * time.Millisecond})
	for sec := range 60 {
		if sec >= 30 && sec < 35 {
			continue
		}
		f.add(sec, key(record.Latency, "closed"), time.Millisecond, 198)
		if withInterval {
			f.add(sec, key(record.Interval, "closed"), 101*time.Millisecond, 198)
		}
	}
	f.add(35, key(record.Latency, "closed"), slow5s, 20)
	if withInterval {
		f.add(35, key(record.Interval, "closed"), slow5s+100*time.Millisecond, 20)
	}
	return f.r
}

// openStallRun is the same freeze under the open model at 200 req/s: the
// 1,000 requests that arrived during the freeze finish at 35 s, late
// (200 each at ~1, 2, 3, 4 and 5 s) but not missing.
func openStallRun() *rundir.Dir {
	f := newFakeRun("open", 60, rundir.Scenario{Name: "open", Executor: "constant-arrival-rate", Model: "open",
		TargetRate: 200})
	k := key(record.Latency, "open")
	for sec := range 60 {
		if sec < 30 || sec >= 35 {
			f.add(sec, k, time.Millisecond, 200)
		}
	}
	for i := 1; i <= 5; i++ {
		f.add(35, k, time.Duration(i)*time.Second, 200)
	}
	return f.r
}

func signal(t *testing.T, s analyze.COSignals, name string) analyze.COSignal {
	t.Helper()
	for _, sig := range s.Signals {
		if sig.Name == name {
			return sig
		}
	}
	t.Fatalf("no %s signal in %+v", name, s.Signals)
	return analyze.COSignal{}
}

func TestDetectCOClosedStall(t *testing.T) {
	got := analyze.DetectCO(closedStallRun(false), analyze.COOptions{}) // VUs and think from run.json
	if got.Verdict != analyze.VerdictLikelyCO || len(got.Evidence) != 4 {
		t.Fatalf("verdict %q with evidence %q; want %q from three signals and the correction", got.Verdict, got.Evidence, analyze.VerdictLikelyCO)
	}
	// The correction's effect (see TestCorrect): p99 1 ms → ~4495 ms, far
	// over 2× and 100 ms.
	if len(got.Scenarios) != 1 || got.Scenarios[0].Effect == nil || got.Scenarios[0].Effect.Percentile != 99 ||
		!got.Scenarios[0].Effect.Material || !closeTo(got.Scenarios[0].Effect.CorrectedMS, 4495, 9) {
		t.Errorf("scenarios %+v; want one whose correction moves p99 to ~4495 ms", got.Scenarios)
	}
	// Throughput: 55·198 + 20 = 10,910 requests in 60 s = 181.8333/s against
	// 20 VUs / (1 ms median + 100 ms think) = 198.0198/s.
	tp := signal(t, got, analyze.SignalThroughput)
	if !tp.Fired || !closeTo(tp.Observed, 10910.0/60, 1e-9) || !closeTo(tp.Expected, 20/0.101, 1e-9) {
		t.Errorf("throughput %+v; want fired, 181.83 against 198.02", tp)
	}
	// Gap: max 5001.215 ms against p99 1 ms (rank round(0.99·10,910) = 10,801 ≤ 10,890 fast).
	gap := signal(t, got, analyze.SignalGap)
	if !gap.Fired || gap.Observed != 5001.215 || gap.Expected != 1 || !closeTo(gap.Ratio, 5001.215, 1e-9) {
		t.Errorf("gap %+v; want fired, 5001.215 ms / 1 ms", gap)
	}
	if !strings.HasPrefix(gap.Evidence, "max 5.00 s next to p99 1.00 ms: 5001×") {
		t.Errorf("gap evidence %q", gap.Evidence)
	}
	// Stall: seconds 30..34 have 0 requests against a neighbour median of 198:
	// 990 missing; second 35 brings 218, 20 above 198: 970 never sent.
	st := signal(t, got, analyze.SignalStall)
	want := analyze.Stall{StartS: 30, EndS: 35, Requests: 0, ReferenceRate: 198, Missing: 990, MadeUp: 20}
	if !st.Fired || len(st.Stalls) != 1 || st.Stalls[0] != want || st.Observed != 970 || st.Expected != 990 {
		t.Errorf("stall %+v; want fired, one stall %+v, 970 of 990 never sent", st, want)
	}
}

func TestDetectCOOpenStall(t *testing.T) {
	got := analyze.DetectCO(openStallRun(), analyze.COOptions{})
	if got.Verdict != analyze.VerdictNoSign {
		t.Fatalf("verdict %q (%q); want %q", got.Verdict, got.Evidence, analyze.VerdictNoSign)
	}
	// 12,000 requests in 60 s = the 200/s target.
	if tp := signal(t, got, analyze.SignalThroughput); tp.Fired || tp.Observed != 200 || tp.Expected != 200 {
		t.Errorf("throughput %+v; want 200 against 200, not fired", tp)
	}
	// p99 (rank 11,880 > 11,800) and max are both the 5 s bucket: ratio 1.
	if gap := signal(t, got, analyze.SignalGap); gap.Fired || gap.Ratio != 1 {
		t.Errorf("gap %+v; want ratio 1", gap)
	}
	// The quiet 5 s miss 1,000 requests and second 35 brings 1,000 extra.
	st := signal(t, got, analyze.SignalStall)
	if st.Fired || len(st.Stalls) != 1 || st.Stalls[0].Missing != 1000 || st.Stalls[0].MadeUp != 1000 {
		t.Errorf("stall %+v; want one stall, 1000 missing, all made up", st)
	}
}

func TestDetectCOServer(t *testing.T) {
	client := closedStallRun(false)
	tests := []struct {
		name   string
		fill   func(h *record.Histogram)
		fired  bool
		phrase string
	}{
		// The server saw 2 % of its requests take 5 s; the client's p99 is 1 ms.
		{"server tail heavier", func(h *record.Histogram) {
			h.RecordN(time.Millisecond, 98)
			h.RecordN(slow5s, 2)
		}, true, "did not measure"},
		{"agree", func(h *record.Histogram) { h.RecordN(time.Millisecond, 100) }, false, "agree"},
		// The client's p99 far above the server's: queueing, not omission.
		{"client tail heavier", func(h *record.Histogram) { h.RecordN(100*time.Microsecond, 100) }, false, "queueing"},
	}
	for _, tt := range tests {
		h := record.NewHistogram()
		tt.fill(h)
		s := signal(t, analyze.DetectCO(client, analyze.COOptions{ServerHistogram: h}), analyze.SignalServer)
		if s.Fired != tt.fired || !strings.Contains(s.Evidence, tt.phrase) {
			t.Errorf("%s: %+v; want fired=%v and %q", tt.name, s, tt.fired, tt.phrase)
		}
	}
}

func TestDetectCOOptionsOverride(t *testing.T) {
	// An explicit 202 ms interval predicts 20 / 0.202 = 99.0099/s: above the
	// achieved 181.83/s, so the throughput signal stays quiet.
	got := analyze.DetectCO(closedStallRun(false), analyze.COOptions{VUs: 20, ExpectedInterval: 202 * time.Millisecond})
	tp := signal(t, got, analyze.SignalThroughput)
	if tp.Fired || !closeTo(tp.Expected, 20/0.202, 1e-9) {
		t.Errorf("throughput %+v; want expected 99.01/s, not fired", tp)
	}
}

func TestCorrect(t *testing.T) {
	// Corrected by hand: each of the 20 values of ~5 s adds d−kI for k = 1..48
	// (d/I ≈ 49.5, and values stop at I): 960 synthetic values, 11,870 in all.
	// p99 is rank round(0.99·11,870) = 11,751; 10,890 values are 1 ms, so it is
	// the 861st slow value. Ascending, the slow values come in groups of 20
	// per k (k = 48 first): 861 = 43·20 + 1 is the first of the 44th group,
	// k = 49 − 44 = 5: 5000 − 5·101 = 4495 ms. Bucket precision (0.1 %) and
	// the interval's own bucket move it by a few ms; the next group is 101 ms away.
	// Slower than 1 s: k ≤ 39 (5000 − 39·101 = 1061 ms), 20·39 + 20 = 800.
	tests := []struct {
		name     string
		r        *rundir.Dir
		interval time.Duration
		source   string
	}{
		{"given", closedStallRun(false), 101 * time.Millisecond, analyze.IntervalGiven},
		{"interval metric", closedStallRun(true), 0, analyze.IntervalMetric},
		{"median response + think", closedStallRun(false), 0, analyze.IntervalResponse},
	}
	for _, tt := range tests {
		c, err := analyze.Correct(tt.r, tt.interval)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(c.Scenarios) != 1 || c.Scenarios[0].Source != tt.source || !closeTo(c.Scenarios[0].IntervalMS, 101, 0.101) {
			t.Errorf("%s: scenarios %+v; want one, %q, ~101 ms", tt.name, c.Scenarios, tt.source)
		}
		if c.RawMS.P99 != 1 || c.RawCount != 10910 || c.RawSlowerThan1s != 20 {
			t.Errorf("%s: raw p99 %v count %d slow %d; want 1 ms, 10910, 20", tt.name, c.RawMS.P99, c.RawCount, c.RawSlowerThan1s)
		}
		if !closeTo(c.CorrectedMS.P99, 4495, 9) || c.CorrectedCount != 11870 || c.CorrectedSlowerThan1s != 800 {
			t.Errorf("%s: corrected p99 %v count %d slow %d; want ~4495 ms, 11870, 800",
				tt.name, c.CorrectedMS.P99, c.CorrectedCount, c.CorrectedSlowerThan1s)
		}
		if c.Raw.Count() != c.RawCount || c.Corrected.Count() != c.CorrectedCount {
			t.Errorf("%s: histograms disagree with the counts", tt.name)
		}
	}
}

func TestCorrectOpenRun(t *testing.T) {
	_, err := analyze.Correct(openStallRun(), 0)
	if !errors.Is(err, analyze.ErrNoCorrection) {
		t.Errorf("Correct(open run) error = %v; want ErrNoCorrection", err)
	}
}

func TestDetectCOOpenOutlier(t *testing.T) {
	// An open run at 100/s with one 5 s request among 999 of 1 ms: max/p99 =
	// 5001×, but the open model does not omit; the gap is an outlier.
	f := newFakeRun("open", 10, rundir.Scenario{Name: "o", Model: "open", TargetRate: 100})
	for sec := range 10 {
		f.add(sec, key(record.Latency, "o"), time.Millisecond, 100)
	}
	f.add(9, key(record.Latency, "o"), slow5s, 1)
	got := analyze.DetectCO(f.r, analyze.COOptions{})
	gap := signal(t, got, analyze.SignalGap)
	if gap.Fired || !strings.Contains(gap.Evidence, "outlier") || got.Verdict != analyze.VerdictNoSign {
		t.Errorf("verdict %q, gap %+v; want an unfired outlier", got.Verdict, gap)
	}
}

// The corrected summary keeps the raw run's identity and duration and takes
// counts and latencies from the corrected histogram: 300 requests over 10 s.
func TestCorrectionSummary(t *testing.T) {
	raw := rundir.Summary{Model: "closed", Executor: "constant-vus", Requests: 200, Rate: 20, DurationS: 10,
		LatencyMS: record.Latencies{P99: 8}, SlowerThan1s: 2, ServiceMS: &record.Latencies{}, Warnings: []string{"w"}}
	c := analyze.Correction{CorrectedCount: 300, CorrectedMS: record.Latencies{P99: 4000}, CorrectedSlowerThan1s: 90}
	got := c.Summary(raw)
	if got.Requests != 300 || got.Rate != 30 || got.LatencyMS.P99 != 4000 || got.SlowerThan1s != 90 ||
		got.Model != "closed" || got.Executor != "constant-vus" || got.ServiceMS != nil || got.Warnings != nil {
		t.Errorf("corrected summary %+v", got)
	}
	if raw.Requests != 200 || raw.LatencyMS.P99 != 8 {
		t.Errorf("the raw summary was changed: %+v", raw)
	}
}

// closedRun is a closed scenario of vus VUs, 100 ms think and 1 ms
// responses (a period of 101 ms: 9.9 requests per VU per second) from
// second start to second end.
func closedRun(f *fakeRun, name string, vus, start, end int) {
	for sec := start; sec < end; sec++ {
		f.add(sec, key(record.Latency, name), time.Millisecond, int64(vus*99/10))
	}
}

// What the run's plan explains is never a sign; a scenario knee ran in the
// open model has none; data of unknown model is at most weak.
func TestDetectCOPlan(t *testing.T) {
	tests := []struct {
		name string
		run  func() *rundir.Dir
		want string
	}{
		{"two open scenarios, the second from 6 s", func() *rundir.Dir {
			// The case: 3–6 s is the plan's gap, not a stall.
			f := newFakeRun("open", 9,
				rundir.Scenario{Name: "a", Model: "open", TargetRate: 100, Span: 3 * time.Second},
				rundir.Scenario{Name: "b", Model: "open", TargetRate: 100, StartTime: 6 * time.Second, Span: 3 * time.Second})
			f.r.Meta.Source = "knee"
			for sec := range 3 {
				f.add(sec, key(record.Latency, "a"), time.Millisecond, 100)
				f.add(sec+6, key(record.Latency, "b"), time.Millisecond, 100)
			}
			return f.r
		}, analyze.VerdictOpenModel},
		{"knee's open run through a freeze", func() *rundir.Dir {
			r := openStallRun()
			r.Meta.Source = "knee"
			return r
		}, analyze.VerdictOpenModel},
		{"two closed scenarios, the second from 6 s", func() *rundir.Dir {
			// 20 VUs for 0–6 s, then 10 VUs for 6–12 s: each meets its own
			// prediction (198/s and 99/s); together, against 30 VUs over
			// 12 s, they would look 50 % short.
			f := newFakeRun("closed", 12,
				rundir.Scenario{Name: "a", Model: "closed", VUs: 20, Think: 100 * time.Millisecond, Span: 6 * time.Second},
				rundir.Scenario{Name: "b", Model: "closed", VUs: 10, Think: 100 * time.Millisecond,
					StartTime: 6 * time.Second, Span: 6 * time.Second})
			f.r.Meta.Source = "knee"
			closedRun(f, "a", 20, 0, 6)
			closedRun(f, "b", 10, 6, 12)
			return f.r
		}, analyze.VerdictNoSign},
		{"closed ramp up, hold, ramp down", func() *rundir.Dir {
			// ramping-vus 0→20 in 5 s, 20 for 5 s, 20→0 in 5 s: the rate
			// follows the VUs the counters give; only 5–10 s is steady.
			f := newFakeRun("closed", 15, rundir.Scenario{Name: "r", Executor: "ramping-vus", Model: "closed",
				VUs: 20, Think: 100 * time.Millisecond, Span: 15 * time.Second})
			f.r.Meta.Source = "knee"
			vus := []int{4, 8, 12, 16, 20, 20, 20, 20, 20, 20, 16, 12, 8, 4, 1}
			for sec, v := range vus {
				closedRun(f, "r", v, sec, sec+1)
				ic := f.r.Intervals[sec].Counters["r"]
				ic.VUs = v
				f.r.Intervals[sec].Counters["r"] = ic
			}
			return f.r
		}, analyze.VerdictNoSign},
		{"an import of unknown model with a gap", func() *rundir.Dir {
			// Quiet 3–6 s and no plan to explain it: evidence, never LIKELY.
			f := newFakeRun("unknown", 9, rundir.Scenario{Name: "default", Model: "unknown"})
			f.r.Meta.Source = "k6-csv"
			for _, sec := range []int{0, 1, 2, 6, 7, 8} {
				f.add(sec, key(record.Latency, "default"), time.Millisecond, 100)
			}
			f.add(6, key(record.Latency, "default"), 3*time.Second, 10)
			return f.r
		}, analyze.VerdictWeak},
		{"an import whose scenario ended at 3 s of 9", func() *rundir.Dir {
			// Its last request ends its time: the silence after is not a stall.
			f := newFakeRun("unknown", 9, rundir.Scenario{Name: "a", Model: "unknown"}, rundir.Scenario{Name: "b", Model: "unknown"})
			f.r.Meta.Source = "k6-csv"
			for sec := range 9 {
				if sec < 3 {
					f.add(sec, key(record.Latency, "a"), time.Millisecond, 100)
				}
				f.add(sec, key(record.Latency, "b"), time.Millisecond, 100)
			}
			return f.r
		}, analyze.VerdictNoSign},
		{"closed script's last interval without VUs, then a short one", func() *rundir.Dir {
			// constant-vus: the last full interval's line lacks the VUs and
			// the last 0.1 s holds 3 requests (30/s): neither is a sign.
			f := newFakeRun("closed", 5, rundir.Scenario{Name: "s", Executor: "constant-vus", Model: "closed",
				VUs: 20, Think: 100 * time.Millisecond, Span: 4 * time.Second})
			f.r.Meta.Source = "knee"
			f.r.Intervals[4].End = 4100 * time.Millisecond
			closedRun(f, "s", 20, 0, 4)
			f.add(4, key(record.Latency, "s"), time.Millisecond, 3)
			for sec := range 3 {
				ic := f.r.Intervals[sec].Counters["s"]
				ic.VUs = 20
				f.r.Intervals[sec].Counters["s"] = ic
			}
			return f.r
		}, analyze.VerdictNoSign},
	}
	for _, tt := range tests {
		got := analyze.DetectCO(tt.run(), analyze.COOptions{})
		if got.Verdict != tt.want {
			t.Errorf("%s: verdict %q (%q); want %q", tt.name, got.Verdict, got.Evidence, tt.want)
		}
		for _, s := range got.Signals {
			if s.Fired && tt.want != analyze.VerdictWeak {
				t.Errorf("%s: signal %+v fired", tt.name, s)
			}
		}
	}
}

// A shortfall the correction does not confirm is weak, with its numbers:
// 20 VUs, 100 ms think, 10 s; seconds 3–6 answer in 30 ms, so they finish
// 150 requests each instead of 198. 6·198 + 4·150 = 1,788 in 10 s =
// 178.8/s against 20/0.101 = 198.02/s (90.3 %). The median is 1 ms, the
// interval 101 ms: no value reaches it, so the correction adds nothing and
// p90 (rank 1,609 > 1,188 fast values) stays 30 ms: ratio 1.
func TestDetectCOWeak(t *testing.T) {
	f := newFakeRun("closed", 10, rundir.Scenario{Name: "c", Model: "closed", VUs: 20, Think: 100 * time.Millisecond})
	for sec := range 10 {
		if sec >= 3 && sec < 7 {
			f.add(sec, key(record.Latency, "c"), 30*time.Millisecond, 150)
			continue
		}
		f.add(sec, key(record.Latency, "c"), time.Millisecond, 198)
	}
	got := analyze.DetectCO(f.r, analyze.COOptions{})
	if got.Verdict != analyze.VerdictWeak {
		t.Fatalf("verdict %q (%q); want %q", got.Verdict, got.Evidence, analyze.VerdictWeak)
	}
	tp := signal(t, got, analyze.SignalThroughput)
	if !tp.Fired || !closeTo(tp.Observed, 178.8, 1e-9) || !closeTo(tp.Expected, 20/0.101, 1e-9) {
		t.Errorf("throughput %+v; want fired, 178.8 against 198.02", tp)
	}
	e := got.Scenarios[0].Effect
	if e == nil || e.Material || e.Ratio != 1 || !closeTo(e.RawMS, 30, 0.03) {
		t.Errorf("effect %+v; want ratio 1 at 30 ms, not material", e)
	}
	if !strings.Contains(got.Scenarios[0].Reason, "not material") {
		t.Errorf("reason %q does not say the correction is not material", got.Scenarios[0].Reason)
	}
}

// The correction is the evidence where nothing else can be: closed data,
// 10 s of 198 requests of 1 ms a second, and in second 5 another 30 that
// took 2 s (30 of 2,010: p99 is rank 1,990 > 1,980 fast values, so 2 s, and
// max/p99 is 1×); no second is quiet. With I = 1 ms + 100 ms think, each
// 2 s value adds 2000 − k·101 ms for k = 1..18: 540 values, 2,550 in all;
// p95 is rank ⌈2,422.5⌉ = 2,423, the 443rd above the 1,980 fast ones: in
// groups of 30 ascending from k = 18, the 15th group, k = 4: 2000 − 404 =
// 1,596 ms (p90, 1,192 ms, moves less from the same 1 ms).
// Without a VU count (an import) nothing else can be computed: LIKELY. With
// 20 VUs the throughput (201/s against 198/s) contradicts it: weak.
func TestDetectCOCorrectionAlone(t *testing.T) {
	run := func(vus int) *rundir.Dir {
		f := newFakeRun("closed", 10, rundir.Scenario{Name: "c", Model: "closed", VUs: vus, Think: 100 * time.Millisecond})
		for sec := range 10 {
			f.add(sec, key(record.Latency, "c"), time.Millisecond, 198)
		}
		f.add(5, key(record.Latency, "c"), 2*time.Second, 30)
		return f.r
	}
	for _, tt := range []struct {
		vus    int
		want   string
		phrase string
	}{
		{0, analyze.VerdictLikelyCO, "no VU count"},
		{20, analyze.VerdictWeak, "the VUs sent what they predict"},
	} {
		got := analyze.DetectCO(run(tt.vus), analyze.COOptions{})
		sc := got.Scenarios[0]
		if got.Verdict != tt.want || !strings.Contains(sc.Reason, tt.phrase) {
			t.Errorf("%d VUs: verdict %q, reason %q; want %q saying %q", tt.vus, got.Verdict, sc.Reason, tt.want, tt.phrase)
		}
		if e := sc.Effect; e == nil || !e.Material || e.Percentile != 95 || !closeTo(e.CorrectedMS, 1596, 3) || !closeTo(e.RawMS, 1, 0.01) {
			t.Errorf("%d VUs: effect %+v; want p95 1 ms → ~1596 ms, material", tt.vus, e)
		}
		for _, s := range got.Signals {
			if s.Fired {
				t.Errorf("%d VUs: signal %+v fired", tt.vus, s)
			}
		}
	}
}

// In a run knee made in the open model, a freeze's quiet spell is shown as
// the target's stall, with the max it left in the latency (5 s), and fires
// nothing.
func TestDetectCOOpenModelShowsTheTargetsStall(t *testing.T) {
	r := openStallRun()
	r.Meta.Source = "knee"
	got := analyze.DetectCO(r, analyze.COOptions{})
	st := signal(t, got, analyze.SignalStall)
	if st.Fired || len(st.Stalls) != 1 || !strings.Contains(st.Evidence, "the target's stall, in the latency already (max 5.00 s)") {
		t.Errorf("stall %+v; want the 30–35 s spell shown as the target's, not fired", st)
	}
	if len(got.Signals) != 1 || got.Scenarios[0].Verdict != analyze.VerdictOpenModel {
		t.Errorf("signals %+v, scenarios %+v; want the stall alone and %q", got.Signals, got.Scenarios, analyze.VerdictOpenModel)
	}
}

// A closed-model stall longer than the neighbourhood the reference rate is
// taken from (coNeighbourSpan, 10 intervals each side): 20 VUs, 100 ms
// think, 1 ms responses, ~198 requests a second, and the target frozen
// for 15 s from 30 s: nothing finishes in 30..44 and the 20 waiting
// requests finish at 45 s. The reference of every quiet second is the
// median of the seconds with requests around it, 198, not the silence:
// by hand, 15·198 = 2,970 missing, second 45 brings 218, 20 above 198, so
// 2,950 were never sent.
func TestDetectCOClosedLongStall(t *testing.T) {
	f := newFakeRun("closed", 75, rundir.Scenario{Name: "closed", Executor: "constant-vus", Model: "closed",
		VUs: 20, Think: 100 * time.Millisecond})
	for sec := range 75 {
		if sec < 30 || sec >= 45 {
			f.add(sec, key(record.Latency, "closed"), time.Millisecond, 198)
		}
	}
	f.add(45, key(record.Latency, "closed"), 15*time.Second, 20)
	got := analyze.DetectCO(f.r, analyze.COOptions{})
	st := signal(t, got, analyze.SignalStall)
	want := analyze.Stall{StartS: 30, EndS: 45, Requests: 0, ReferenceRate: 198, Missing: 2970, MadeUp: 20}
	if !st.Fired || len(st.Stalls) != 1 || st.Stalls[0] != want || st.Observed != 2950 || st.Expected != 2970 {
		t.Errorf("stall %+v; want fired, one stall %+v, 2,950 of 2,970 never sent", st, want)
	}
}
