package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// Summary writes the end-of-run summary for a terminal. It states the model
// first, because every number below means something different in each, and
// puts percentiles before the mean, because the mean describes no request.
func Summary(w io.Writer, s rundir.Summary) error {
	p := newPrinter(w)
	if h := analyze.FailureHeadline(s); h != "" {
		p.f("%s\n", h)
	}
	if len(s.Scenarios) > 1 {
		// Each scenario gets its own block: their models, targets and
		// latencies mean different things, so only counts add up.
		p.f("%s model · %d scenarios", modelName(s.Model), len(s.Scenarios))
		if s.Interrupted {
			p.f(" · INTERRUPTED (partial results)")
		}
		p.f("\n")
		p.f("  all scenarios       %d requests%s, errors %d (%.2f %%)%s\n", s.Requests, spanText(s),
			s.Errors, pct(float64(s.Errors), float64(s.Requests)), classes(s.ErrorsByClass))
		for _, sc := range s.Scenarios {
			p.f("scenario %s · %s model · %s\n", sc.Scenario, modelName(sc.Model), orDash(sc.Executor))
			summaryBlock(p, sc.Summary)
			for _, warn := range sc.Warnings {
				if !slices.Contains(s.Warnings, warn) {
					p.f("  WARNING: %s\n", warn)
				}
			}
		}
		generatorLine(p, s)
	} else {
		p.f("%s model · %s", modelName(s.Model), orDash(s.Executor))
		if s.Interrupted {
			p.f(" · INTERRUPTED (partial results)")
		}
		p.f("\n")
		summaryBlock(p, s)
		generatorLine(p, s)
		if s.Model == "open" {
			p.f("  (open model: latency counts from each request's intended start)\n")
		} else if s.Model == "closed" {
			p.f("  (closed model: latency counts from the actual send; a stalled target hides its stall — see knee analyze)\n")
		}
	}
	for _, warn := range s.Warnings {
		p.f("  WARNING: %s\n", warn)
	}
	return p.err
}

// summaryBlock prints the lines of one scenario's (or a one-scenario run's) summary.
func summaryBlock(p *printer, s rundir.Summary) {
	p.f("  requests            %d", s.Requests)
	if s.NoTimestamps {
		p.f(" (no timestamps: no rate, no duration)")
	} else {
		p.f(" in %.1f s = %.1f/s", s.DurationS, s.Rate)
	}
	if s.TargetRate > 0 {
		p.f(" (target %.1f/s, %.1f %%)", s.TargetRate, pct(s.Rate, s.TargetRate))
	}
	p.f("\n")
	if s.Model != "closed" {
		if s.DroppedLate > 0 {
			p.f("  dropped_iterations  %d (%d of them knee's: behind its schedule)\n", s.DroppedIterations, s.DroppedLate)
		} else {
			p.f("  dropped_iterations  %d\n", s.DroppedIterations)
		}
	}
	p.f("  errors              %d (%.2f %%)%s\n", s.Errors, pct(float64(s.Errors), float64(s.Requests)), classes(s.ErrorsByClass))
	if n := s.ErrorsByClass[record.GeneratorClass]; n > 0 {
		// knee's own failures, apart from the target's errors above.
		p.f("  not sent by knee    %d (%.2f %%): no descriptor, port or memory; the generator was the limit\n", n, pct(float64(n), float64(s.Requests)))
	}
	p.f("  latency             %s\n", Latencies(s.LatencyMS))
	p.f("  slower than 1 s     %d\n", s.SlowerThan1s)
	if s.ServiceMS != nil {
		p.f("  service time        %s\n", Latencies(*s.ServiceMS))
	}
	if s.SendLagMS != nil {
		p.f("  send lag            %s\n", Latencies(*s.SendLagMS))
		if f := s.WakeFloor; f != nil {
			p.f("  machine's floor     p50=%s p99=%s (%d timed waits of %s)\n",
				Ms(f.P50MS), Ms(f.P99MS), f.Waits, analyze.FloorWaits(*f))
		}
	}
}

func generatorLine(p *printer, s rundir.Summary) {
	if s.GeneratorCPUS > 0 && s.Requests > 0 {
		p.f("  generator CPU       %.2f s (%.1f µs per request)\n", s.GeneratorCPUS, s.GeneratorCPUS/float64(s.Requests)*1e6)
	}
}

// spanText is " in D s", or nothing when the run has no timestamps.
func spanText(s rundir.Summary) string {
	if s.NoTimestamps {
		return " (no timestamps: no duration)"
	}
	return fmt.Sprintf(" in %.1f s", s.DurationS)
}

// Latencies formats a percentile summary, percentiles first.
func Latencies(l record.Latencies) string {
	return fmt.Sprintf("p50=%s p90=%s p95=%s p99=%s p99.9=%s max=%s | mean=%s min=%s",
		Ms(l.P50), Ms(l.P90), Ms(l.P95), Ms(l.P99), Ms(l.P999), Ms(l.Max), Ms(l.Mean), Ms(l.Min))
}

// Ms formats milliseconds with a unit that keeps 3-4 significant digits.
func Ms(ms float64) string {
	switch {
	case ms == 0:
		return "0"
	case ms < 1:
		return fmt.Sprintf("%.0fµs", ms*1000)
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fs", ms/1000)
	}
}

func modelName(m string) string {
	switch m {
	case "open":
		return "Open"
	case "closed":
		return "Closed"
	case "":
		return "Unknown"
	}
	return strings.ToUpper(m[:1]) + m[1:]
}

func classes(by map[string]int64) string {
	var parts []string
	for _, c := range record.ErrorClasses {
		if n := by[c]; n > 0 && c != record.GeneratorClass { // not the target's: printed apart
			parts = append(parts, fmt.Sprintf("%s=%d", c, n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " [" + strings.Join(parts, " ") + "]"
}

func pct(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b * 100
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printer remembers the first write error so callers check once.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}
