package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/rundir"
)

// Plot file names a stepped run writes into its run directory (or --plots).
const (
	CurvePlotName    = "curve"
	TimelinePlotName = "timeline"
)

// WriteStepPlots writes curve.png/.svg (the throughput-latency curve) and
// timeline.png/.svg (p50/p95/p99 per chart window, analyze.ChartWindow,
// with the steps marked) into dir, and returns the files written.
func WriteStepPlots(dir string, r *rundir.Dir, cs analyze.CurveSummary) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	windows := analyze.Windows(r, analyze.ChartWindow(r), nil).All.Windows
	var written []string
	for _, f := range []Format{PNG, SVG} {
		for _, p := range []struct {
			name string
			draw func(io.Writer) error
		}{
			{CurvePlotName, func(w io.Writer) error { return WriteCurvePlot(w, f, cs) }},
			{TimelinePlotName, func(w io.Writer) error { return WriteTimelinePlot(w, f, windows, cs.Steps) }},
		} {
			path := filepath.Join(dir, p.name+"."+string(f))
			if err := writePlotFile(path, p.draw); err != nil {
				return written, err
			}
			written = append(written, path)
		}
	}
	return written, nil
}

// writePlotFile creates path and fills it with draw, reporting either's error.
func writePlotFile(path string, draw func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := draw(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// PrintSteps prints everything a stepped run says, in reading order: the
// per-step table, the knee, collapse, USL fit and capacity, the USE table of
// the run and per step, the verdict, the plots and the notes.
func PrintSteps(w io.Writer, res *analyze.StepsResult) error {
	p := &errWriter{w: w}
	p.do(func() error { return CurveTable(w, res.Steps) })
	p.line()
	p.do(func() error { return CurveFindings(w, res.CurveSummary) })
	if res.USE != nil {
		p.line()
		p.do(func() error { return USE(w, *res.USE) })
		p.line()
		p.do(func() error { return StepUSE(w, res.StepUSE) })
	}
	if res.Bottleneck != nil {
		p.line()
		p.do(func() error { return Verdict(w, *res.Bottleneck) })
		for _, t := range res.Then {
			p.printf("  then: %s\n", t)
		}
	}
	if len(res.Plots) > 0 || res.Dir != "" || len(res.Notes) > 0 {
		p.line()
	}
	if res.Dir != "" {
		p.printf("run directory: %s\n", res.Dir)
	}
	for _, f := range res.Plots {
		p.printf("plot: %s\n", f)
	}
	for _, n := range res.Notes {
		p.printf("note: %s\n", n)
	}
	return p.err
}

// errWriter keeps the first error of a sequence of writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) do(f func() error) {
	if e.err == nil {
		e.err = f()
	}
}

func (e *errWriter) line() { e.printf("\n") }

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
