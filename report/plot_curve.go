package report

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/knee-dev/knee/analyze"
)

// WriteCurvePlot draws the throughput-latency curve of a stepped run: on
// top, achieved against offered throughput beside the y = x line it should
// follow; below, p50/p95/p99 per step on a log axis. Both share the
// offered-rate axis, with the knee band shaded and the collapse marked.
func WriteCurvePlot(w io.Writer, f Format, s analyze.CurveSummary) error {
	if len(s.Steps) == 0 {
		return fmt.Errorf("report: curve plot: %w", analyze.ErrNoSteps)
	}
	top, err := plotThroughputPanel(s)
	if err != nil {
		return err
	}
	bottom, err := plotLatencyPanel(s)
	if err != nil {
		return err
	}
	xmax := s.Steps[len(s.Steps)-1].OfferedRate
	rates := make([]float64, len(s.Steps))
	for i, st := range s.Steps {
		rates[i] = st.OfferedRate
	}
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Min, p.X.Max = 0, xmax*1.05
		p.X.Tick.Marker = plotRateTicks(rates)
	}
	top.Y.Tick.Marker = plotRateTicks(append([]float64{0}, rates...))
	return renderPlot(w, f, 8*vg.Inch, 9*vg.Inch, top, bottom)
}

func plotKneeTitle(k analyze.Knee) string {
	switch {
	case k.LastHealthyRate > 0 && k.FirstUnhealthyRate > 0:
		return fmt.Sprintf("knee between %.4g and %.4g req/s", k.LastHealthyRate, k.FirstUnhealthyRate)
	case k.LastHealthyRate > 0:
		return fmt.Sprintf("no knee up to %.4g req/s", k.LastHealthyRate)
	case k.FirstUnhealthyRate > 0:
		return fmt.Sprintf("unhealthy from %.4g req/s", k.FirstUnhealthyRate)
	}
	return "no knee found"
}

func plotThroughputPanel(s analyze.CurveSummary) (*plot.Plot, error) {
	p := newPlotPanel("Throughput: "+plotKneeTitle(s.Knee), "offered rate (req/s)", "achieved throughput (req/s)")
	xmax := s.Steps[len(s.Steps)-1].OfferedRate
	ymax := xmax
	achieved := make(plotter.XYs, len(s.Steps))
	for i, st := range s.Steps {
		achieved[i] = plotter.XY{X: st.OfferedRate, Y: st.Rate}
		ymax = max(ymax, st.Rate)
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.1
	if err := plotCurveMarks(p, s, 0, ymax*1.1); err != nil {
		return nil, err
	}
	ideal, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: xmax * 1.05, Y: xmax * 1.05}})
	if err != nil {
		return nil, fmt.Errorf("report: y = x line: %w", err)
	}
	ideal.Color, ideal.Dashes = plotColorGuide, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(ideal)
	p.Legend.Add("offered (y = x)", ideal)
	if err := plotAddLine(p, "achieved", achieved, plotColorAchieved, true); err != nil {
		return nil, err
	}
	return p, nil
}

func plotLatencyPanel(s analyze.CurveSummary) (*plot.Plot, error) {
	p := newPlotPanel("Latency per step (log scale)", "offered rate (req/s)", "latency")
	var p50, p95, p99 plotter.XYs
	var all []float64
	for _, st := range s.Steps {
		l := st.LatencyMS
		for _, v := range []struct {
			xys *plotter.XYs
			y   float64
		}{{&p50, l.P50}, {&p95, l.P95}, {&p99, l.P99}} {
			if v.y > 0 { // an empty step has no latency to place on a log axis
				*v.xys = append(*v.xys, plotter.XY{X: st.OfferedRate, Y: v.y})
				all = append(all, v.y)
			}
		}
	}
	lo, hi, ok := plotLogRange(all...)
	if !ok {
		lo, hi = 0.1, 1000
	}
	plotLogY(p, lo, hi)
	if err := plotCurveMarks(p, s, lo, hi); err != nil {
		return nil, err
	}
	for _, l := range []struct {
		name string
		xys  plotter.XYs
		c    color.Color
	}{{"p99", p99, plotColorP99}, {"p95", p95, plotColorP95}, {"p50", p50, plotColorP50}} {
		if err := plotAddLine(p, l.name, l.xys, l.c, true); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// plotCurveMarks shades the knee band and draws the collapse line over [y0, y1].
func plotCurveMarks(p *plot.Plot, s analyze.CurveSummary, y0, y1 float64) error {
	k := s.Knee
	if k.LastHealthyRate > 0 && k.FirstUnhealthyRate > 0 {
		b, err := plotBand(k.LastHealthyRate, k.FirstUnhealthyRate, y0, y1, plotColorKnee)
		if err != nil {
			return err
		}
		p.Add(b)
		p.Legend.Add(fmt.Sprintf("knee (%.4g-%.4g req/s)", k.LastHealthyRate, k.FirstUnhealthyRate), b)
	}
	if c := s.Collapse; c != nil {
		l, err := plotVLine(c.AtRate, y0, y1, plotColorCollapse, vg.Points(6), vg.Points(3))
		if err != nil {
			return err
		}
		l.Width = vg.Points(2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("collapse at %.4g req/s (%.4g req/s achieved)", c.AtRate, c.Rate), l)
	}
	return nil
}
