package analyze

import (
	"fmt"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// Verdicts of DetectCO, per scenario and for the run (the worst of its
// scenarios', in this order from worst).
const (
	VerdictLikelyCO  = "likely coordinated omission"
	VerdictWeak      = "weak sign of coordinated omission"
	VerdictNoSign    = "no sign"
	VerdictOpenModel = "no sign — open model"
)

// Names of the coordinated-omission signals.
const (
	SignalThroughput = "throughput"  // achieved rate well below what the load should have produced
	SignalGap        = "max_p99_gap" // a max far above p99: a few requests saw a stall the rest never did
	SignalStall      = "stall"       // seconds with far fewer requests than their neighbours, never made up
	SignalServer     = "server"      // the server saw a heavier tail than the client measured
)

// Limits at which the signals fire, chosen so that the article's closed run
// (178/s against ~198/s, 4.98 s max next to an 8.1 ms p99) fires them all
// and its open run (same freeze, no omission) fires none.
const (
	COThroughputShortfall = 0.95 // fire when achieved < 95 % of expected
	COGapRatio            = 50   // fire when max >= 50 × p99
	COStallFraction       = 0.5  // an interval is quiet below 50 % of its neighbours' median rate
	COStallMinRequests    = 10   // ... if its neighbours would have sent at least this many in it
	COStallNotMadeUp      = 0.5  // fire when over half of a quiet spell's missing requests never came
	COServerRatio         = 1.5  // fire when the server's p99 >= 1.5 × the client's
	coNeighbourSpan       = 10   // intervals on each side whose median rate is the reference
	coEdge                = 50 * time.Millisecond
)

// A fired signal says the VUs may have waited; whether that matters is what
// the correction says. LIKELY needs the correction to change a tail
// percentile (p90, p95 or p99) by COEffectRatio AND by COEffectMinDelta:
//   - 2×: run-to-run spread of a tail percentile on the same machine stays
//     well inside it (bench/co-corpus: the healthy runs' corrected/raw ratio
//     is 1.0 at every percentile), and a tail twice as long changes any
//     conclusion drawn from it (an SLO, a capacity figure);
//   - 100 ms: a ratio between small numbers is noise (0.4 ms → 0.9 ms is 2×
//     and means nothing), the shared 2-core machine shows scheduling
//     hiccups of tens of ms in healthy runs, and a tail that grows by less
//     than 100 ms — about the smallest delay a person notices — changes no
//     conclusion a load test is run for.
//
// Signals without that effect make the verdict "weak", with their numbers.
const (
	COEffectRatio    = 2.0
	COEffectMinDelta = 100 * time.Millisecond
)

// COOptions says what DetectCO may compare against. Zero fields are taken
// from run.json, per scenario (its model, plan, think time, VUs and target
// rate); VUs or TargetRate given judge the selection as one unit with them.
type COOptions struct {
	Select           Selector
	Think            time.Duration // closed model: pause between a response and the next request
	ExpectedInterval time.Duration // one VU's iteration period; overrides median response + Think
	VUs              int
	TargetRate       float64           // open model: offered req/s
	ServerHistogram  *record.Histogram // the target's own latency histogram, if it has one
}

// Stall is a spell of consecutive quiet intervals.
type Stall struct {
	StartS        float64 `json:"start_s"`
	EndS          float64 `json:"end_s"`
	Requests      int64   `json:"requests"`       // measured during the spell
	ReferenceRate float64 `json:"reference_rate"` // neighbours' median req/s
	Missing       float64 `json:"missing"`        // requests the reference rate predicts but the spell lacks
	MadeUp        float64 `json:"made_up"`        // surplus requests right after the spell
}

// COSignal is one piece of evidence with its numbers: Observed against
// Expected, their Ratio (Observed/Expected) and the Limit at which it fires.
type COSignal struct {
	Scenario string  `json:"scenario,omitempty"` // "" for the run (the server's record) or a run judged as one
	Name     string  `json:"name"`
	Fired    bool    `json:"fired"`
	Observed float64 `json:"observed"`
	Expected float64 `json:"expected"`
	Ratio    float64 `json:"ratio"`
	Limit    float64 `json:"limit"`
	Unit     string  `json:"unit"` // "req/s", "ms" or "requests"
	Evidence string  `json:"evidence"`
	Stalls   []Stall `json:"stalls,omitempty"`
}

// COEffect is what the correction does to one closed scenario's tail: the
// percentile it moves most (by ratio) among p90, p95 and p99.
type COEffect struct {
	IntervalMS  float64 `json:"interval_ms"` // the expected interval the correction used
	Percentile  float64 `json:"percentile"`
	RawMS       float64 `json:"raw_ms"`
	CorrectedMS float64 `json:"corrected_ms"`
	Ratio       float64 `json:"ratio"`    // corrected / raw
	Material    bool    `json:"material"` // Ratio >= COEffectRatio and the delta >= COEffectMinDelta
}

// ScenarioCO is the verdict on one scenario (or on the selection judged as
// one unit, Scenario ""), with the reason in one sentence.
type ScenarioCO struct {
	Scenario string    `json:"scenario"`
	Model    string    `json:"model"` // "open", "closed" or "unknown"
	Verdict  string    `json:"verdict"`
	Reason   string    `json:"reason"`
	Effect   *COEffect `json:"correction_effect,omitempty"`
}

// COSignals is DetectCO's answer, exported as "co_signals".
type COSignals struct {
	Verdict   string       `json:"verdict"`
	Evidence  []string     `json:"evidence,omitempty"` // the sentences of the signals that fired
	Scenarios []ScenarioCO `json:"scenarios,omitempty"`
	Signals   []COSignal   `json:"signals"`
}

// coUnit is what DetectCO judges at once: one scenario, or the selection
// when the caller gave the load (VUs, TargetRate) itself.
type coUnit struct {
	name       string
	sel        Selector
	model      string // "open", "closed" or "unknown"
	executor   string
	knee       bool          // knee generated it: an open schedule that knee kept
	from, to   time.Duration // when the plan started iterations; to 0: the run's end
	vus        int
	countedVUs bool // counters.jsonl gives the VUs per interval
	target     float64
	think      time.Duration
}

// DetectCO looks for the marks coordinated omission leaves in each
// scenario of a run, where its plan held the load steady: lower throughput
// than the load predicts, a max far above p99, quiet seconds that are never
// made up, and a server tail heavier than the client's. An open-model
// scenario knee ran cannot omit ("no sign — open model"); a closed one is
// LIKELY only when the correction changes its tail materially
// (COEffectRatio, COEffectMinDelta) and a signal corroborates it (or no
// throughput can be predicted, as in an import without a VU count), else
// "weak" when either is there; data whose model is unknown is at most "weak". Signals that cannot be
// computed (no expected rate, no server histogram) are left out.
func DetectCO(r *rundir.Dir, opt COOptions) COSignals {
	out := COSignals{Verdict: VerdictNoSign}
	units := coUnits(r, opt)
	var server *COSignal
	if s, ok := serverSignal(r.Merged(opt.Select.Of(record.Latency), 0, 0), opt.ServerHistogram); ok {
		server = &s
	}
	worst := -1
	for _, u := range units {
		sc, sigs := judgeUnit(r, u, opt, server)
		out.Scenarios = append(out.Scenarios, sc)
		out.Signals = append(out.Signals, sigs...)
		if rank := verdictRank(sc.Verdict); rank > worst {
			worst, out.Verdict = rank, sc.Verdict
		}
		if sc.Verdict == VerdictLikelyCO || sc.Verdict == VerdictWeak {
			prefix := ""
			if len(units) > 1 {
				prefix = "scenario " + u.name + ": "
			}
			for _, s := range sigs {
				if s.Fired {
					out.Evidence = append(out.Evidence, prefix+s.Evidence)
				}
			}
			out.Evidence = append(out.Evidence, prefix+sc.Reason)
		}
	}
	if server != nil {
		out.Signals = append(out.Signals, *server)
	}
	// Open scenarios beside closed ones with no sign: the run has no sign.
	if out.Verdict == VerdictOpenModel {
		for _, sc := range out.Scenarios {
			if sc.Verdict == VerdictNoSign {
				out.Verdict = VerdictNoSign
			}
		}
	}
	return out
}

// verdictRank orders verdicts from the mildest.
func verdictRank(v string) int {
	switch v {
	case VerdictLikelyCO:
		return 3
	case VerdictWeak:
		return 2
	case VerdictNoSign:
		return 1
	}
	return 0
}

// coUnits lists what DetectCO judges: each selected scenario with
// latencies, from run.json, or the selection as one unit when the caller
// gave VUs or a target rate.
func coUnits(r *rundir.Dir, opt COOptions) []coUnit {
	knee := r.Meta.Source == "knee" || r.Meta.Source == "merge"
	if opt.VUs > 0 || opt.TargetRate > 0 {
		u := coUnit{name: opt.Select.Scenario, sel: opt.Select, model: "closed", vus: opt.VUs, think: opt.Think}
		if opt.TargetRate > 0 {
			u.model, u.target, u.vus = "open", opt.TargetRate, 0
		}
		if opt.Select.Scenario != "" {
			if sc, ok := scenarioMeta(r, opt.Select.Scenario); ok {
				u.from, u.to = sc.StartTime, spanEnd(sc)
			}
		}
		return []coUnit{u}
	}
	var out []coUnit
	for _, name := range latencyScenarios(r) {
		if opt.Select.Scenario != "" && name != opt.Select.Scenario {
			continue
		}
		sc, _ := scenarioMeta(r, name)
		u := coUnit{name: name, sel: Selector{Scenario: name, Name: opt.Select.Name}, model: scenarioModel(r, name),
			executor: sc.Executor, knee: knee, from: sc.StartTime, to: spanEnd(sc), vus: sc.VUs, target: sc.TargetRate, think: sc.Think}
		if u.think == 0 {
			u.think = opt.Think
		}
		if u.model != "open" && u.model != "closed" {
			u.model = "unknown"
		}
		u.countedVUs = u.model == "closed" && countsVUs(r, name)
		out = append(out, u)
	}
	return out
}

// scenarioMeta is scenario name's entry in run.json.
func scenarioMeta(r *rundir.Dir, name string) (rundir.Scenario, bool) {
	for _, s := range r.Meta.Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return rundir.Scenario{}, false
}

// spanEnd is when a scenario stopped starting iterations; 0 when unknown.
func spanEnd(sc rundir.Scenario) time.Duration {
	if sc.Span <= 0 {
		return 0
	}
	return sc.StartTime + sc.Span
}

// countsVUs reports whether counters.jsonl gives scenario name's VUs.
func countsVUs(r *rundir.Dir, name string) bool {
	for _, iv := range r.Intervals {
		if iv.Counters[name].VUs > 0 {
			return true
		}
	}
	return false
}

// judgeUnit computes u's signals and verdict.
func judgeUnit(r *rundir.Dir, u coUnit, opt COOptions, server *COSignal) (ScenarioCO, []COSignal) {
	out := ScenarioCO{Scenario: u.name, Model: u.model}
	lat := r.Merged(u.sel.Of(record.Latency), 0, 0)
	rates := unitRates(r, u)
	var sigs []COSignal
	add := func(s COSignal, ok bool) {
		if ok {
			s.Scenario = u.name
			sigs = append(sigs, s)
		}
	}
	if u.model == "open" && u.knee {
		// knee's open schedule never waits for replies: a quiet spell is
		// the target's stall, and its requests are in the latency already.
		if s, ok := stallSignal(rates); ok && len(s.Stalls) > 0 {
			s.Fired = false
			s.Evidence += fmt.Sprintf("; knee's open schedule kept sending, so this is the target's stall, "+
				"in the latency already (max %s)", humanDuration(lat.Max()))
			add(s, true)
		}
		out.Verdict, out.Reason = VerdictOpenModel, "knee ran it in the open model: its schedule does not wait for replies"
		return out, sigs
	}
	add(throughputSignal(r, u, rates, lat, opt))
	add(gapSignal(lat, u.model == "open"))
	add(stallSignal(rates))
	// Any fired signal corroborates the correction; without a throughput
	// signal (no VU count, as in an import) the correction is the evidence.
	fired, throughputKnown := server != nil && server.Fired, false
	for _, s := range sigs {
		fired = fired || s.Fired
		throughputKnown = throughputKnown || s.Name == SignalThroughput
	}
	switch u.model {
	case "closed":
		if eff, ok := correctionEffect(r, u, lat, opt.ExpectedInterval); ok {
			out.Effect = &eff
		}
	case "open":
		out.Reason = "imported as open-model data: the correction does not apply; a quiet spell never made up " +
			"says the tool that made it did not keep its schedule"
	default:
		out.Reason = "the model is unknown (an import): if VUs waited for replies (constant-vus, ramping-vus, iterations), give --model closed with --think or --vus to test the signals with the correction; if an arrival-rate executor sent the load, give --model open: it cannot omit"
	}
	material := out.Effect != nil && out.Effect.Material
	if out.Effect != nil {
		out.Reason = "the correction " + out.Effect.sentence()
	}
	switch {
	case material && (fired || !throughputKnown):
		out.Verdict = VerdictLikelyCO
		if !fired {
			out.Reason += "; no VU count to predict the throughput from, so the correction is the evidence"
		}
	case fired || material:
		out.Verdict = VerdictWeak
		if !fired {
			out.Reason += ", but the VUs sent what they predict and no interval went quiet"
		}
	default:
		out.Verdict = VerdictNoSign
	}
	if out.Reason == "" {
		out.Reason = "no correction could be computed"
	}
	return out, sigs
}

// sentence says what the correction did to the tail, with its numbers.
func (e COEffect) sentence() string {
	s := fmt.Sprintf("moves p%g from %s to %s (%.2f×, expected interval %s)", e.Percentile,
		humanDuration(msDuration(e.RawMS)), humanDuration(msDuration(e.CorrectedMS)), e.Ratio,
		humanDuration(msDuration(e.IntervalMS)))
	if !e.Material {
		s += fmt.Sprintf(": not material (LIKELY needs ≥ %g× and ≥ %s)", COEffectRatio, humanDuration(COEffectMinDelta))
	}
	return s
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// correctionEffect corrects u's latencies as Correct does and finds the
// tail percentile the correction moves most.
func correctionEffect(r *rundir.Dir, u coUnit, lat *record.Histogram, given time.Duration) (COEffect, bool) {
	if lat.Count() == 0 {
		return COEffect{}, false
	}
	if given <= 0 && u.think > 0 && scenarioThink(r, u.name) == 0 {
		given = lat.Percentile(50) + u.think
	}
	i, _, err := expectedInterval(r, u.sel.Scenario, lat, given)
	if err != nil {
		return COEffect{}, false
	}
	c := lat.Corrected(i)
	var best COEffect
	for _, pct := range []float64{90, 95, 99} {
		raw, cor := lat.Percentile(pct), c.Percentile(pct)
		ratio := 1.0
		if raw > 0 {
			ratio = float64(cor) / float64(raw)
		}
		e := COEffect{IntervalMS: durationMS(i), Percentile: pct, RawMS: durationMS(raw), CorrectedMS: durationMS(cor),
			Ratio: ratio, Material: ratio >= COEffectRatio && cor-raw >= COEffectMinDelta}
		if best.Percentile == 0 || (e.Material && !best.Material) || (e.Material == best.Material && e.Ratio > best.Ratio) {
			best = e
		}
	}
	return best, true
}

// throughputSignal compares what u achieved, over the intervals its plan
// held steady, with what its load predicts there: the target (open) or
// VUs / (median response + think) per interval (closed): a closed
// generator that waits during a stall sends less than its VUs should.
func throughputSignal(r *rundir.Dir, u coUnit, rates []intervalRate, lat *record.Histogram, opt COOptions) (COSignal, bool) {
	var seconds, weighted float64
	var n int64
	for _, ir := range rates {
		d := ir.endS - ir.startS
		seconds += d
		weighted += d * ir.vus
		n += ir.requests
	}
	if seconds <= 0 {
		return COSignal{}, false
	}
	var expected float64 // req/s over the steady intervals
	var basis string
	switch {
	case u.model == "open" && u.target > 0:
		expected, basis = u.target, "the target rate"
	case u.model != "open" && (u.vus > 0 || u.countedVUs):
		vus := float64(u.vus)
		if u.countedVUs {
			vus = weighted / seconds // the plan's VUs, averaged over the steady intervals
		}
		period := opt.ExpectedInterval
		basis = fmt.Sprintf("%.0f VUs / interval %s", vus, humanDuration(period))
		perIteration := 1.0
		if iv := r.Merged(u.sel.Of(record.Interval), 0, 0); period <= 0 && iv.Count() > 0 {
			// The recorded iteration interval is the period (a script may
			// sleep inside its iteration), and an iteration may send
			// several requests.
			period, perIteration = iv.Percentile(50), float64(lat.Count())/float64(iv.Count())
			basis = fmt.Sprintf("%.0f VUs × %.2g requests per iteration / median iteration interval %s", vus, perIteration, humanDuration(period))
		}
		if period <= 0 {
			period = lat.Percentile(50) + u.think
			basis = fmt.Sprintf("%.0f VUs / (median %s + think %s)",
				vus, humanDuration(lat.Percentile(50)), humanDuration(u.think))
		}
		if period <= 0 {
			return COSignal{}, false
		}
		expected = vus * perIteration / period.Seconds()
	default:
		return COSignal{}, false
	}
	achieved := float64(n) / seconds
	s := COSignal{Name: SignalThroughput, Observed: achieved, Expected: expected,
		Ratio: achieved / expected, Limit: COThroughputShortfall, Unit: "req/s"}
	s.Fired = s.Ratio < COThroughputShortfall
	s.Evidence = fmt.Sprintf("achieved %.1f req/s against %.1f req/s predicted by %s (%.0f%%) over the %.0f s "+
		"the plan held steady", achieved, expected, basis, 100*s.Ratio, seconds)
	if s.Fired {
		s.Evidence += fmt.Sprintf(": about %.0f requests were never sent", (expected-achieved)*seconds)
	}
	return s, true
}

// gapSignal compares max with p99. Only a stall that a handful of requests
// sat through, while no new ones were sent, puts a max hundreds of times
// above p99: in an open run the requests arriving during it fill the tail,
// so there a gap is one slow outlier, never omission, and does not fire.
func gapSignal(lat *record.Histogram, open bool) (COSignal, bool) {
	p99, mx := lat.Percentile(99), lat.Max()
	if lat.Count() == 0 || p99 <= 0 {
		return COSignal{}, false
	}
	s := COSignal{Name: SignalGap, Observed: durationMS(mx), Expected: durationMS(p99),
		Ratio: float64(mx) / float64(p99), Limit: COGapRatio, Unit: "ms"}
	s.Fired = s.Ratio >= COGapRatio && !open
	s.Evidence = fmt.Sprintf("max %s next to p99 %s: %.0f×", humanDuration(mx), humanDuration(p99), s.Ratio)
	switch {
	case s.Fired:
		s.Evidence += "; the slow moment was seen by few requests, as when waiting VUs stop sending"
	case open && s.Ratio >= COGapRatio:
		s.Evidence += "; an outlier: the open model keeps sending through a stall, so it is not omission"
	}
	return s, true
}

// serverSignal compares the client's p99 with the server's. Every request's
// client latency includes its server time, so a server tail heavier than the
// client's means the client missed slow requests. The reverse (client far
// above server) is queueing before the application, not omission.
func serverSignal(client, server *record.Histogram) (COSignal, bool) {
	if server == nil || server.Count() == 0 || client.Count() == 0 {
		return COSignal{}, false
	}
	c, sv := client.Percentile(99), server.Percentile(99)
	if c <= 0 {
		return COSignal{}, false
	}
	s := COSignal{Name: SignalServer, Observed: durationMS(sv), Expected: durationMS(c),
		Ratio: float64(sv) / float64(c), Limit: COServerRatio, Unit: "ms"}
	s.Fired = s.Ratio >= COServerRatio
	switch {
	case s.Fired:
		s.Evidence = fmt.Sprintf("server p99 %s above client p99 %s (%.1f×): the client did not measure "+
			"requests the server found slow", humanDuration(sv), humanDuration(c), s.Ratio)
	case float64(c) >= COServerRatio*float64(sv):
		s.Evidence = fmt.Sprintf("client p99 %s above server p99 %s (%.1f×): time spent queueing before the "+
			"application, which the server's histogram cannot see", humanDuration(c), humanDuration(sv), 1/s.Ratio)
	default:
		s.Evidence = fmt.Sprintf("client p99 %s and server p99 %s agree", humanDuration(c), humanDuration(sv))
	}
	return s, true
}
