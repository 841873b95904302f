package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/rundir"
)

// Markdown writes in as a report in the article's template: Goal, Load,
// Environment, Result, Bottleneck, Action. A part that was not measured
// says so instead of disappearing, so a reader can tell "fine" from "unknown".
func Markdown(w io.Writer, in Input) error {
	p := &printer{w: w}
	p.f("# %s\n\n", reportTitle(in))
	p.f("%s\n", statusLine(in))
	mdGoal(p, in)
	mdLoad(p, in)
	mdEnvironment(p, in.Meta.Env, in.Summary)
	mdResult(p, in)
	mdRepetitions(p, in)
	mdCurve(p, in.Curve)
	mdBottleneck(p, in.USE)
	p.f("\n## Action\n\n%s\n", orNotStated(in.Action, "say what changes next and how the next run verifies it"))
	return p.err
}

func reportTitle(in Input) string {
	if in.Title != "" {
		return in.Title
	}
	if in.Meta.ID != "" {
		return "knee report: " + in.Meta.ID
	}
	return "knee report"
}

// statusLine is the one line a reader in a hurry needs: verdict, model, length.
func statusLine(in Input) string {
	parts := []string{thresholdVerdict(in.Thresholds)}
	parts = append(parts, modelName(in.Summary.Model)+" model")
	parts = append(parts, measuredText(in.Summary))
	if h := analyze.FailureHeadline(in.Summary); h != "" {
		parts = append(parts, "**"+h+"**")
	}
	if in.Summary.Interrupted || in.Meta.Interrupted {
		parts = append(parts, "**INTERRUPTED: partial results**")
	}
	if in.CO != nil && in.CO.Verdict == analyze.VerdictLikelyCO {
		parts = append(parts, "**likely coordinated omission**")
	}
	return strings.Join(parts, " · ")
}

// thresholdVerdict counts passes; no thresholds is neither a pass nor a fail.
func thresholdVerdict(rs []analyze.ThresholdResult) string {
	if len(rs) == 0 {
		return "No thresholds"
	}
	passed := 0
	for _, r := range rs {
		if r.Pass {
			passed++
		}
	}
	if analyze.ThresholdsPass(rs) {
		return fmt.Sprintf("**PASS** (%d of %d thresholds)", passed, len(rs))
	}
	return fmt.Sprintf("**FAIL** (%d of %d thresholds passed)", passed, len(rs))
}

func orNotStated(s, hint string) string {
	if strings.TrimSpace(s) == "" {
		return "_Not stated: " + hint + "._"
	}
	return strings.TrimSpace(s)
}

func mdGoal(p *printer, in Input) {
	p.f("\n## Goal\n\n%s\n\n", orNotStated(in.Goal, "say which question this run answers"))
	if len(in.Thresholds) == 0 {
		p.f("_No thresholds were set: the run was neither accepted nor rejected._\n")
		return
	}
	p.f("| Threshold | Measured | Result |\n|---|---|---|\n")
	for _, t := range in.Thresholds {
		result := "pass"
		if !t.Pass {
			result = "**FAIL**"
		}
		p.f("| `%s` | %s | %s |\n", strings.ReplaceAll(t.Expr, "`", "'"), mdCell(thresholdValue(t)), result)
	}
}

// thresholdValue prints a threshold's measured value in its unit.
func thresholdValue(t analyze.ThresholdResult) string {
	var v string
	switch t.Unit {
	case "ms":
		v = Ms(t.Value)
	case "req/s":
		v = fmt.Sprintf("%.1f req/s", t.Value)
	case "fraction":
		v = fmt.Sprintf("%.2f %%", 100*t.Value)
	default:
		v = fmt.Sprintf("%.0f", t.Value)
	}
	if t.Note != "" {
		v += " (" + t.Note + ")"
	}
	return v
}

// mdCell makes s safe inside a Markdown table cell: a pipe would end the
// cell, and HTML in it (a request name "<script>" or "<img onerror=...>")
// would be HTML to the renderers people use (GitHub, GitLab, CommonMark),
// so <, > and & become entities, shown as the characters themselves.
func mdCell(s string) string {
	s = mdHTML.Replace(s)
	return mdCode(s)
}

var mdHTML = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// mdCode is mdCell for text inside a code span, where HTML is shown as
// text already and an entity would be shown as written.
func mdCode(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func mdLoad(p *printer, in Input) {
	m := in.Meta
	p.f("\n## Load\n\n")
	p.f("- Model: %s\n", modelExplained(in.Summary.Model))
	p.f("- Duration: %s", measuredText(in.Summary))
	if !m.Started.IsZero() {
		p.f(", started %s", m.Started.UTC().Format(time.RFC3339))
	}
	if !m.Ended.IsZero() {
		p.f(", ended %s", m.Ended.UTC().Format(time.RFC3339))
	}
	p.f("\n")
	switch s := in.Summary; {
	case s.NoTimestamps || len(s.Scenarios) > 1:
		p.f("- Rate: %s\n", offeredText(s))
	case s.TargetRate > 0:
		p.f("- Offered rate: %.1f req/s; achieved %.1f req/s\n", s.TargetRate, s.Rate)
	default:
		p.f("- Achieved rate: %.1f req/s\n", s.Rate)
	}
	p.f("- Data: %s\n", orNotStated(in.Data, "say which test data the requests used"))
	if m.Source != "" && m.Source != "knee" {
		p.f("- Source: imported from %s %s\n", m.Source, m.SourceFile)
	}
	for _, f := range m.Faults {
		p.f("- Fault: %s\n", faultLine(f))
	}
	if len(m.Scenarios) == 0 {
		return
	}
	p.f("\n| Scenario | Executor | Model | Rate / VUs | Think | Endpoints | Settings |\n|---|---|---|---|---|---|---|\n")
	for _, sc := range m.Scenarios {
		p.f("| %s | %s | %s | %s | %s | %s | %s |\n", mdCell(sc.Name), mdCell(orDash(sc.Executor)), mdCell(orDash(sc.Model)),
			scenarioLoad(sc), thinkLabel(sc.Think), mdCell(orDash(strings.Join(sc.Requests, ", "))), scenarioSettings(sc))
	}
}

// modelExplained says what each model's latency means, since it differs.
func modelExplained(model string) string {
	switch model {
	case "open":
		return "open: requests arrive on a schedule whatever the target does; latency counts from each request's intended start"
	case "closed":
		return "closed: each VU waits for its response before the next request, so a slow target is sent less work " +
			"and latency counts from the actual send (see coordinated omission below)"
	}
	return orDash(model)
}

func scenarioLoad(sc rundir.Scenario) string {
	switch {
	case sc.TargetRate > 0 && sc.VUs > 0:
		return fmt.Sprintf("%.4g req/s, %d VUs", sc.TargetRate, sc.VUs)
	case sc.TargetRate > 0:
		return fmt.Sprintf("%.4g req/s", sc.TargetRate)
	}
	if r := rampLoad(sc); r != "" {
		return r
	}
	if sc.VUs > 0 {
		return fmt.Sprintf("%d VUs", sc.VUs)
	}
	return "-"
}

// rampLoad is a ramping executor's load as asked: its start and its peak,
// read from the settings run.json keeps (the rate per second, as the
// constant executors show it); "" for any other executor.
func rampLoad(sc rundir.Scenario) string {
	var c struct {
		StartRate *float64 `json:"startRate"`
		StartVUs  *int     `json:"startVUs"`
		TimeUnit  string   `json:"timeUnit"`
		Stages    []struct {
			Target float64 `json:"target"`
		} `json:"stages"`
	}
	if len(sc.Config) == 0 || json.Unmarshal(sc.Config, &c) != nil || len(c.Stages) == 0 {
		return ""
	}
	switch {
	case c.StartRate != nil:
		unit := time.Second
		if d, err := time.ParseDuration(c.TimeUnit); err == nil && d > 0 {
			unit = d
		}
		peak := *c.StartRate
		for _, st := range c.Stages {
			peak = max(peak, st.Target)
		}
		return fmt.Sprintf("ramping %.4g → %.4g req/s (peak), %d stages", *c.StartRate/unit.Seconds(), peak/unit.Seconds(), len(c.Stages))
	case c.StartVUs != nil:
		peak := float64(*c.StartVUs)
		for _, st := range c.Stages {
			peak = max(peak, st.Target)
		}
		return fmt.Sprintf("ramping %d → %.0f VUs (peak), %d stages", *c.StartVUs, peak, len(c.Stages))
	}
	return ""
}

func thinkLabel(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.String()
}

// settings shows the executor's settings as given, compact.
func scenarioSettings(sc rundir.Scenario) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, sc.Config); err != nil || buf.Len() == 0 || buf.String() == "null" {
		return "-" // rundir.Open has parsed it, so invalid JSON only comes from a hand-filled Input
	}
	return "`" + mdCode(strings.ReplaceAll(buf.String(), "`", "'")) + "`"
}

func faultLine(f rundir.Fault) string {
	s := fmt.Sprintf("%s of %s at %s", f.Kind, f.Target, f.At.Round(time.Millisecond))
	if f.For > 0 {
		s += fmt.Sprintf(" for %s", f.For)
	}
	if f.Method != "" {
		s += fmt.Sprintf(" (%s)", f.Method)
	}
	if f.Error != "" {
		s += ": FAILED: " + f.Error
	}
	return s
}

func mdEnvironment(p *printer, e rundir.Environment, s rundir.Summary) {
	p.f("\n## Environment\n\n")
	p.f("- knee %s", orDash(e.KneeVersion))
	if e.TargetCommit != "" {
		p.f(", target commit %s", e.TargetCommit)
	}
	p.f("\n")
	p.f("- Host: %s, %s × %d CPUs, kernel %s, %s\n", orDash(e.Host), orDash(e.CPUModel), e.CPUs, orDash(e.Kernel), orDash(e.GoVersion))
	p.f("- Target limits: %s\n", limitsText(e.TargetLimits))
	p.f("- Load average (1/5/15 min): before %s, after %s\n", loadText(e.LoadBefore), loadText(e.LoadAfter))
	p.f("- Other processes before: %s\n", topText(e.TopBefore))
	p.f("- Other processes after: %s\n", topText(e.TopAfter))
	p.f("- Generator: %s\n", generatorText(e.Generator, s.Requests))
}

func limitsText(m map[string]string) string {
	if len(m) == 0 {
		return "none recorded"
	}
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("`%s` = `%s`", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func loadText(l [3]float64) string {
	if l == [3]float64{} {
		return "not recorded"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2])
}

func topText(ps []rundir.Process) string {
	if len(ps) == 0 {
		return "not recorded"
	}
	parts := make([]string, 0, len(ps))
	for _, pr := range ps {
		parts = append(parts, fmt.Sprintf("%s (pid %d) %.2f cores", pr.Comm, pr.PID, pr.CPU))
	}
	return strings.Join(parts, ", ")
}

func generatorText(g rundir.Generator, requests int64) string {
	if g.CPUSeconds == 0 && g.PeakRSSMB == 0 {
		return "not recorded"
	}
	s := fmt.Sprintf("%.2f s CPU", g.CPUSeconds)
	if requests > 0 {
		s += fmt.Sprintf(" (%.1f µs per request)", g.CPUSeconds/float64(requests)*1e6)
	}
	if g.PeakRSSMB > 0 {
		s += fmt.Sprintf(", peak RSS %.1f MB", g.PeakRSSMB)
	}
	return s
}
