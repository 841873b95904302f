package report

import (
	"fmt"
	"image/color"
	"io"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/knee-dev/knee/analyze"
)

// WriteTimelinePlot draws p50/p95/p99 of every window on a log axis
// against time since the run's start; pass one window per interval,
// analyze.Windows(r, time.Second, nil).All.Windows, to see every second. When steps are given, each step's
// start is a dotted line labelled with its offered rate and its warmup
// (the part the curve leaves out) is shaded.
func WriteTimelinePlot(w io.Writer, f Format, windows []analyze.Window, steps []analyze.Step) error {
	if len(windows) == 0 {
		return fmt.Errorf("report: latency-over-time plot: no windows")
	}
	title := "Latency over time (log scale)"
	if d := windows[0].EndS - windows[0].StartS; d > 0 {
		title = fmt.Sprintf("Latency over time (per %v window, log scale)", time.Duration(d*float64(time.Second)))
	}
	p := newPlotPanel(title, "time since start (s)", "latency")
	var p50, p95, p99 plotter.XYs
	var all []float64
	for _, win := range windows {
		if win.Requests == 0 { // nothing to place on a log axis
			continue
		}
		x := (win.StartS + win.EndS) / 2 // each point sits in the middle of its window
		l := win.LatencyMS
		p50 = append(p50, plotter.XY{X: x, Y: l.P50})
		p95 = append(p95, plotter.XY{X: x, Y: l.P95})
		p99 = append(p99, plotter.XY{X: x, Y: l.P99})
		all = append(all, l.P50, l.P95, l.P99)
	}
	lo, hi, ok := plotLogRange(all...)
	if !ok {
		lo, hi = 0.1, 1000
	}
	// Two decades of headroom: the step labels sit in the lower one, the
	// legend in the upper, both off the data.
	hi *= 100
	plotLogY(p, lo, hi)
	p.X.Min, p.X.Max = windows[0].StartS, windows[len(windows)-1].EndS
	if err := plotStepMarks(p, steps, lo, hi); err != nil {
		return err
	}
	for _, l := range []struct {
		name string
		xys  plotter.XYs
		c    color.Color
	}{{"p99", p99, plotColorP99}, {"p95", p95, plotColorP95}, {"p50", p50, plotColorP50}} {
		if err := plotAddLine(p, l.name, l.xys, l.c, false); err != nil {
			return err
		}
	}
	return renderPlot(w, f, 10*vg.Inch, 5.5*vg.Inch, p)
}

// plotStepMarks shades each step's warmup, draws its start and labels it
// with the offered rate two decades under the top of the [y0, y1] axis.
func plotStepMarks(p *plot.Plot, steps []analyze.Step, y0, y1 float64) error {
	if len(steps) == 0 {
		return nil
	}
	labels := plotter.XYLabels{}
	for i, st := range steps {
		b, err := plotBand(st.Begin.Seconds(), st.From.Seconds(), y0, y1, plotColorWarmup)
		if err != nil {
			return err
		}
		l, err := plotVLine(st.Begin.Seconds(), y0, y1, plotColorGuide, vg.Points(2), vg.Points(2))
		if err != nil {
			return err
		}
		p.Add(b, l)
		if i == 0 {
			p.Legend.Add("warmup (not measured)", b)
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: (st.Begin + 200*time.Millisecond).Seconds(), Y: y1 / 60})
		labels.Labels = append(labels.Labels, fmt.Sprintf("%.4g req/s", st.OfferedRate))
	}
	text, err := plotter.NewLabels(labels)
	if err != nil {
		return fmt.Errorf("report: step labels: %w", err)
	}
	p.Add(text)
	return nil
}
