package analyze

import (
	"fmt"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// Verdicts of DetectCO.
const (
	VerdictLikelyCO = "likely coordinated omission"
	VerdictNoSign   = "no sign"
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
)

// COOptions says what DetectCO may compare against. Zero fields are taken
// from run.json (the scenarios' think time, VUs and target rate).
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

// COSignals is DetectCO's answer, exported as "co_signals".
type COSignals struct {
	Verdict  string     `json:"verdict"`
	Evidence []string   `json:"evidence,omitempty"` // the sentences of the signals that fired
	Signals  []COSignal `json:"signals"`
}

// DetectCO looks for the marks coordinated omission leaves in a run: lower
// throughput than the load predicts, a max far above p99, quiet seconds that
// are never made up, and a server tail heavier than the client's. Signals
// that cannot be computed (no expected rate, no server histogram) are left out.
func DetectCO(r *rundir.Dir, opt COOptions) COSignals {
	opt = coDefaults(r, opt)
	lat := r.Merged(opt.Select.Of(record.Latency), 0, 0)
	var sigs []COSignal
	if s, ok := throughputSignal(r, lat, opt); ok {
		sigs = append(sigs, s)
	}
	if s, ok := gapSignal(lat, modelOf(r, opt.Select.Scenario) == "open"); ok {
		sigs = append(sigs, s)
	}
	if s, ok := stallSignal(r, opt.Select); ok {
		sigs = append(sigs, s)
	}
	if s, ok := serverSignal(lat, opt.ServerHistogram); ok {
		sigs = append(sigs, s)
	}
	out := COSignals{Verdict: VerdictNoSign, Signals: sigs}
	for _, s := range sigs {
		if s.Fired {
			out.Verdict = VerdictLikelyCO
			out.Evidence = append(out.Evidence, s.Evidence)
		}
	}
	return out
}

// coDefaults fills zero options from the selected scenarios in run.json.
func coDefaults(r *rundir.Dir, opt COOptions) COOptions {
	var vus int
	var target float64
	var think time.Duration
	for _, sc := range r.Meta.Scenarios {
		if opt.Select.Scenario != "" && sc.Name != opt.Select.Scenario {
			continue
		}
		if sc.Model == "open" {
			target += sc.TargetRate
			continue
		}
		vus += sc.VUs
		think = max(think, sc.Think)
	}
	if opt.VUs == 0 && opt.TargetRate == 0 {
		opt.VUs, opt.TargetRate = vus, target
	}
	if opt.Think == 0 {
		opt.Think = think
	}
	return opt
}

// throughputSignal compares the achieved rate with the target (open) or with
// VUs / (median response + think) (closed): a closed generator that waits
// during a stall sends less than its VUs should.
func throughputSignal(r *rundir.Dir, lat *record.Histogram, opt COOptions) (COSignal, bool) {
	span := measuredSpan(r)
	if span <= 0 {
		return COSignal{}, false
	}
	var expected float64
	var basis string
	switch {
	case opt.TargetRate > 0:
		expected, basis = opt.TargetRate, "the target rate"
	case opt.VUs > 0:
		period := opt.ExpectedInterval
		basis = fmt.Sprintf("%d VUs / interval %s", opt.VUs, humanDuration(period))
		perIteration := 1.0
		if iv := r.Merged(opt.Select.Of(record.Interval), 0, 0); period <= 0 && opt.Think == 0 && iv.Count() > 0 {
			// No think known (a script sleeps inside its iteration): the
			// recorded iteration interval is the period, and an iteration
			// may send several requests.
			period, perIteration = iv.Percentile(50), float64(lat.Count())/float64(iv.Count())
			basis = fmt.Sprintf("%d VUs × %.2g requests per iteration / median iteration interval %s", opt.VUs, perIteration, humanDuration(period))
		}
		if period <= 0 {
			period = lat.Percentile(50) + opt.Think
			basis = fmt.Sprintf("%d VUs / (median %s + think %s)",
				opt.VUs, humanDuration(lat.Percentile(50)), humanDuration(opt.Think))
		}
		if period <= 0 {
			return COSignal{}, false
		}
		expected = float64(opt.VUs) * perIteration / period.Seconds()
	default:
		return COSignal{}, false
	}
	achieved := float64(lat.Count()) / span.Seconds()
	s := COSignal{Name: SignalThroughput, Observed: achieved, Expected: expected,
		Ratio: achieved / expected, Limit: COThroughputShortfall, Unit: "req/s"}
	s.Fired = s.Ratio < COThroughputShortfall
	s.Evidence = fmt.Sprintf("achieved %.1f req/s against %.1f req/s predicted by %s (%.0f%%)",
		achieved, expected, basis, 100*s.Ratio)
	if s.Fired {
		s.Evidence += fmt.Sprintf(": about %.0f requests were never sent", (expected-achieved)*span.Seconds())
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
