package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/knee-dev/knee/analyze"
)

// htmlView is Input formatted for the page template: strings for the
// tables, numbers for the charts (Data, embedded as JSON).
type htmlView struct {
	Title       string
	Badges      []badge
	Goal        string
	Data        string
	Action      string
	Thresholds  []thresholdRow
	Load        []fact
	Scenarios   []scenarioRow
	Env         []fact
	Rows        []resultCells
	SharedNote  bool
	Facts       []fact
	Warnings    []string
	CO          *analyze.COSignals
	Correction  []correctionRow
	Intervals   []string
	Repetitions []repetitionRow
	RepRuns     string
	RepWarnings []string
	Steps       []stepRow
	Curve       []fact
	USE         *USETable
	Notes       []string
	Charts      int    // charts the script must draw
	ChartWindow string // the windows of the charts over time
	ChartData   chartData
}

type badge struct {
	Text string
	Bad  bool
}

type fact struct{ Name, Value string }

type thresholdRow struct {
	Expr, Value string
	Pass        bool
}

type scenarioRow struct{ Name, Executor, Model, Load, Think, Requests, Settings string }

type resultCells struct{ Label, Requests, Rate, P50, P95, P99, P999, Max, Errors, Dropped string }

type correctionRow struct{ Label, Requests, Slow, P50, P95, P99, Max string }

type stepRow struct{ Offered, Rate, P50, P95, P99, Dropped, Errors string }

// chartData is what the page's script draws; JSON names are the script's.
type chartData struct {
	Palette       map[string]PaletteEntry `json:"palette"`
	Time          *timeChart              `json:"time,omitempty"`
	Distributions []distChart             `json:"distributions,omitempty"`
	Curve         *curveChart             `json:"curve,omitempty"`
}

// timeChart is the run in chart windows (analyze.Timeline) and the
// percentiles of every request, drawn as reference lines.
type timeChart struct {
	analyze.Timeline
	Merged [3]float64 `json:"merged"` // p50, p95, p99 of every request
}

// distChart is one percentile distribution: pct in [0, 100] against ms.
type distChart struct {
	Label string    `json:"label"`
	Pct   []float64 `json:"pct"`
	MS    []float64 `json:"ms"`
}

type curveChart struct {
	Offered        []float64 `json:"offered"`
	Rate           []float64 `json:"rate"`
	P50            []float64 `json:"p50"`
	P95            []float64 `json:"p95"`
	P99            []float64 `json:"p99"`
	LastHealthy    float64   `json:"last_healthy"`
	FirstUnhealthy float64   `json:"first_unhealthy"`
	CollapseAt     float64   `json:"collapse_at"`
}

func newHTMLView(in Input) htmlView {
	v := htmlView{
		Title: reportTitle(in), Badges: badges(in), Goal: in.Goal, Data: in.Data, Action: in.Action,
		Load: loadFacts(in), Env: envFacts(in), USE: in.USE, CO: in.CO, Notes: in.Notes,
		Repetitions: repetitionRows(in.Repetitions, in.Summary.Model), RepWarnings: in.Repetitions.Warnings,
	}
	for _, t := range in.Thresholds {
		v.Thresholds = append(v.Thresholds, thresholdRow{Expr: t.Expr, Value: thresholdValue(t), Pass: t.Pass})
	}
	for _, sc := range in.Meta.Scenarios {
		v.Scenarios = append(v.Scenarios, scenarioRow{Name: sc.Name, Executor: orDash(sc.Executor), Model: orDash(sc.Model),
			Load: scenarioLoad(sc), Think: thinkLabel(sc.Think), Requests: orDash(strings.Join(sc.Requests, ", ")),
			Settings: strings.Trim(scenarioSettings(sc), "`")})
	}
	for _, r := range resultRows(in) {
		l := latencyCells(r)
		v.Rows = append(v.Rows, resultCells{Label: r.label, Requests: fmt.Sprint(r.s.Requests), Rate: rateText(r),
			P50: l[0], P95: l[1], P99: l[2], P999: l[3], Max: l[4],
			Errors: errorsText(r.s, r.shared), Dropped: droppedText(r.s, r.shared)})
		v.SharedNote = v.SharedNote || r.shared
	}
	v.Facts = resultFacts(in)
	for _, w := range append(append([]string(nil), in.Summary.Warnings...), in.Windows.All.Warning) {
		if w != "" {
			v.Warnings = append(v.Warnings, w)
		}
	}
	if c := in.Correction; c != nil {
		v.Correction = []correctionRow{
			{"raw", fmt.Sprint(c.RawCount), fmt.Sprint(c.RawSlowerThan1s), Ms(c.RawMS.P50), Ms(c.RawMS.P95), Ms(c.RawMS.P99), Ms(c.RawMS.Max)},
			{"corrected", fmt.Sprint(c.CorrectedCount), fmt.Sprint(c.CorrectedSlowerThan1s), Ms(c.CorrectedMS.P50), Ms(c.CorrectedMS.P95), Ms(c.CorrectedMS.P99), Ms(c.CorrectedMS.Max)},
		}
		for _, sc := range c.Scenarios {
			v.Intervals = append(v.Intervals, fmt.Sprintf("Scenario %s: expected interval %s (%s).", sc.Scenario, Ms(sc.IntervalMS), sc.Source))
		}
	}
	if in.Repetitions.Runs > 0 {
		v.RepRuns = fmt.Sprintf("%d run(s): %s.", in.Repetitions.Runs, strings.Join(in.RunIDs, ", "))
	}
	curveView(&v, in.Curve)
	v.ChartData = chartsOf(in)
	v.Charts = chartCount(v.ChartData)
	if t := in.Timeline; len(t.Points) > 0 {
		v.ChartWindow = fmt.Sprintf("%g s", t.WindowS)
	}
	return v
}

func badges(in Input) []badge {
	out := []badge{{Text: strings.ReplaceAll(thresholdVerdict(in.Thresholds), "**", ""), Bad: !analyze.ThresholdsPass(in.Thresholds)}}
	out = append(out, badge{Text: modelName(in.Summary.Model) + " model"})
	out = append(out, badge{Text: measuredText(in.Summary)})
	if h := analyze.FailureHeadline(in.Summary); h != "" {
		out = append(out, badge{Text: h, Bad: true})
	}
	if in.Summary.Interrupted || in.Meta.Interrupted {
		out = append(out, badge{Text: "INTERRUPTED: partial results", Bad: true})
	}
	if in.CO != nil && in.CO.Verdict == analyze.VerdictLikelyCO {
		out = append(out, badge{Text: "likely coordinated omission", Bad: true})
	}
	return out
}

func loadFacts(in Input) []fact {
	m, s := in.Meta, in.Summary
	fs := []fact{{"Model", modelExplained(s.Model)}}
	dur := measuredText(s)
	if !m.Started.IsZero() {
		dur += ", started " + m.Started.UTC().Format(time.RFC3339)
	}
	fs = append(fs, fact{"Duration", dur})
	fs = append(fs, fact{"Rate", offeredText(s)})
	fs = append(fs, fact{"Data", orPlain(in.Data, "not stated")})
	if m.Source != "" && m.Source != "knee" {
		fs = append(fs, fact{"Source", "imported from " + m.Source + " " + m.SourceFile})
	}
	for _, f := range m.Faults {
		fs = append(fs, fact{"Fault", faultLine(f)})
	}
	return fs
}

func orPlain(s, missing string) string {
	if strings.TrimSpace(s) == "" {
		return missing
	}
	return s
}

func envFacts(in Input) []fact {
	e := in.Meta.Env
	knee := orDash(e.KneeVersion)
	if e.TargetCommit != "" {
		knee += ", target commit " + e.TargetCommit
	}
	return []fact{
		{"knee", knee},
		{"Host", fmt.Sprintf("%s, %s × %d CPUs, kernel %s, %s", orDash(e.Host), orDash(e.CPUModel), e.CPUs, orDash(e.Kernel), orDash(e.GoVersion))},
		{"Target limits", strings.ReplaceAll(limitsText(e.TargetLimits), "`", "")},
		{"Load average", fmt.Sprintf("before %s, after %s (1/5/15 min)", loadText(e.LoadBefore), loadText(e.LoadAfter))},
		{"Other processes before", topText(e.TopBefore)},
		{"Other processes after", topText(e.TopAfter)},
		{"Generator", generatorText(e.Generator, in.Summary.Requests)},
	}
}

func resultFacts(in Input) []fact {
	s := in.Summary
	fs := []fact{{"Error rate", fmt.Sprintf("%d of %d requests (%.2f %%)%s", s.Errors, s.Requests,
		pct(float64(s.Errors), float64(s.Requests)), classes(s.ErrorsByClass))}}
	if s.Model == "closed" {
		fs = append(fs, fact{"Dropped iterations", "not applicable (closed model: a VU waits instead of dropping)"})
	} else {
		fs = append(fs, fact{"Dropped iterations", fmt.Sprint(s.DroppedIterations)})
	}
	fs = append(fs, fact{"Slower than 1 s", fmt.Sprint(s.SlowerThan1s)})
	if s.ServiceMS != nil {
		fs = append(fs, fact{"Service time", Latencies(*s.ServiceMS)})
	}
	if s.SendLagMS != nil {
		fs = append(fs, fact{"Send lag", Latencies(*s.SendLagMS)})
	}
	if len(in.Windows.All.Windows) > 0 {
		fs = append(fs, fact{"Over time (ms)", in.Windows.Line()})
	}
	return fs
}

func curveView(v *htmlView, c *analyze.CurveSummary) {
	if c == nil {
		return
	}
	for _, s := range c.Steps {
		v.Steps = append(v.Steps, stepRow{Offered: fmt.Sprintf("%.4g/s", s.OfferedRate), Rate: fmt.Sprintf("%.4g/s", s.Rate),
			P50: Ms(s.LatencyMS.P50), P95: Ms(s.LatencyMS.P95), P99: Ms(s.LatencyMS.P99),
			Dropped: fmt.Sprint(s.DroppedIterations), Errors: fmt.Sprint(s.Errors)})
	}
	v.Curve = append(v.Curve, fact{"Knee", kneeText(c.Knee)})
	if c.Collapse != nil {
		v.Curve = append(v.Curve, fact{"Collapse", fmt.Sprintf("at %.4g req/s offered only %.4g req/s completed", c.Collapse.AtRate, c.Collapse.Rate)})
	}
	if u := c.USL; u != nil {
		v.Curve = append(v.Curve, fact{"USL fit", USLText(*u)})
	}
	v.Curve = append(v.Curve, fact{"Capacity", orDash(c.Capacity)})
}

// chartsOf copies the numbers the charts need, converting units only.
func chartsOf(in Input) chartData {
	d := chartData{Palette: PaletteJSON()}
	if len(in.Timeline.Points) > 0 {
		l := in.Summary.LatencyMS
		d.Time = &timeChart{Timeline: in.Timeline, Merged: [3]float64{l.P50, l.P95, l.P99}}
	}
	for _, dist := range in.Distributions {
		dc := distChart{Label: dist.Label}
		for _, p := range dist.Points {
			dc.Pct = append(dc.Pct, p.Pct)
			dc.MS = append(dc.MS, msOf(p.Value))
		}
		if len(dc.Pct) > 0 {
			d.Distributions = append(d.Distributions, dc)
		}
	}
	if c := in.Curve; c != nil && len(c.Steps) > 0 {
		cc := &curveChart{LastHealthy: c.Knee.LastHealthyRate, FirstUnhealthy: c.Knee.FirstUnhealthyRate}
		if c.Collapse != nil {
			cc.CollapseAt = c.Collapse.AtRate
		}
		for _, s := range c.Steps {
			cc.Offered, cc.Rate = append(cc.Offered, s.OfferedRate), append(cc.Rate, s.Rate)
			cc.P50 = append(cc.P50, s.LatencyMS.P50)
			cc.P95 = append(cc.P95, s.LatencyMS.P95)
			cc.P99 = append(cc.P99, s.LatencyMS.P99)
		}
		d.Curve = cc
	}
	return d
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// chartCount is how many charts the script must draw for d: the page
// carries it so a test can tell "drew everything" from "drew something".
func chartCount(d chartData) int {
	n := 0
	if t := d.Time; t != nil {
		n += timeCharts(t.Timeline)
	}
	if len(d.Distributions) > 0 {
		n++
	}
	if d.Curve != nil {
		n += 2 // throughput and latency against the offered rate
	}
	return n
}

// timeCharts is how many charts over time the script draws for t: latency,
// throughput, errors, status codes, VUs and data always; send lag when it
// was measured; checks when a k6 script counted some; iteration rate and
// duration when a k6 script finished some; its requests' phases when they
// were timed; latency and throughput per scenario when there are several.
func timeCharts(t analyze.Timeline) int {
	n := 6
	for _, p := range t.Points {
		if p.SendLagMS != nil {
			n++
			break
		}
	}
	for _, p := range t.Points {
		if p.ChecksPassed+p.ChecksFailed > 0 {
			n++
			break
		}
	}
	for _, p := range t.Points {
		if p.Iterations > 0 {
			n += 2
			break
		}
	}
	for _, p := range t.Points {
		if p.PhasesMS != nil {
			n++
			break
		}
	}
	if len(t.Scenarios) > 1 {
		n += 2
	}
	return n
}
