package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Format is an image format plots are written in.
type Format string

// Plot formats.
const (
	PNG Format = "png"
	SVG Format = "svg"
)

// ErrFormat is returned for a plot format knee does not write.
var ErrFormat = errors.New("report: unknown plot format (want .png or .svg)")

// FormatOf picks the plot format from a file name's extension.
func FormatOf(path string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))); f {
	case PNG, SVG:
		return f, nil
	}
	return "", fmt.Errorf("%w: %q", ErrFormat, path)
}

// plotPNGDPI makes PNGs sharp enough to read on a laptop screen without being huge.
const plotPNGDPI = 110

// renderPlot draws panels stacked top to bottom on one canvas of w x h and
// writes it in format f. Stacked panels share their left edge (plot.Align),
// so panels over the same x axis line up.
func renderPlot(out io.Writer, f Format, w, h vg.Length, panels ...*plot.Plot) error {
	var (
		c      vg.CanvasWriterTo
		canvas draw.Canvas
	)
	switch f {
	case PNG:
		img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotPNGDPI), vgimg.UseBackgroundColor(color.White))
		c, canvas = vgimg.PngCanvas{Canvas: img}, draw.New(img)
	case SVG:
		svg := vgsvg.New(w, h)
		c, canvas = svg, draw.New(svg)
	default:
		return fmt.Errorf("%w: %q", ErrFormat, f)
	}
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(14), PadY: vg.Points(18)}
	for i, row := range plot.Align(grid, tiles, canvas) {
		panels[i].Draw(row[0])
	}
	if _, err := c.WriteTo(out); err != nil {
		return fmt.Errorf("report: write %s plot: %w", f, err)
	}
	return nil
}

// Colours come from Palette, so a series reads the same in every view;
// the translucent bands are the plots' own.
var (
	plotColorP50      = Style(SeriesP50).Color
	plotColorP95      = Style(SeriesP95).Color
	plotColorP99      = Style(SeriesP99).Color
	plotColorAchieved = Style(SeriesAchieved).Color
	plotColorGuide    = Style(SeriesTarget).Color
	plotColorKnee     = color.NRGBA{R: 0xff, G: 0xc8, B: 0x00, A: 0x50} // translucent yellow
	plotColorWarmup   = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x30} // translucent grey
	plotColorCollapse = Style(SeriesCollapse).Color
)

// newPlotPanel returns a plot with a title, axis labels and a light grid.
func newPlotPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.ThumbnailWidth = vg.Points(22)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(2)
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), -vg.Points(4)
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xe0}
	g.Horizontal.Color = color.Gray{Y: 0xe0}
	p.Add(g)
	return p
}

// plotLogY puts p's y axis (milliseconds) on a log scale spanning [lo, hi]
// (lo > 0), with ticks labelled as durations: "1ms", "10s".
func plotLogY(p *plot.Plot, lo, hi float64) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plotMSTicks{}
	p.Y.Min, p.Y.Max = lo, hi
}

// plotMSTicks labels the decades of a log axis of milliseconds as durations.
type plotMSTicks struct{}

// Ticks returns the log ticks of [lo, hi] with duration labels.
func (plotMSTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = plotMSLabel(t.Value)
		}
	}
	return ticks
}

// plotMSLabel writes milliseconds as "0.1ms", "10ms", "1s" or "100s".
func plotMSLabel(ms float64) string {
	if ms < 1000 {
		return strconv.FormatFloat(ms, 'f', -1, 64) + "ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', -1, 64) + "s"
}

// plotRateTicks puts a labelled tick at every offered rate of a stepped run.
func plotRateTicks(rates []float64) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(rates))
	for i, r := range rates {
		ticks[i] = plot.Tick{Value: r, Label: strconv.FormatFloat(r, 'g', 4, 64)}
	}
	return ticks
}

// plotLogRange widens the positive values of ys to whole decades for a log
// axis; ok is false when none is positive.
func plotLogRange(ys ...float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), 0
	for _, y := range ys {
		if y > 0 {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}
	if hi == 0 {
		return 0, 0, false
	}
	return math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)+1e-9)), true
}

// plotAddLine adds a line in colour c, named in the legend, with a marker
// on every point when marked (few points, each a measurement worth seeing).
func plotAddLine(p *plot.Plot, name string, xys plotter.XYs, c color.Color, marked bool) error {
	if len(xys) == 0 {
		return nil
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("report: %s line: %w", name, err)
	}
	line.Color, line.Width = c, vg.Points(1.8)
	p.Add(line)
	if !marked {
		p.Legend.Add(name, line)
		return nil
	}
	points.Color, points.Radius = c, vg.Points(2.5)
	points.Shape = draw.CircleGlyph{}
	p.Add(points)
	p.Legend.Add(name, line, points)
	return nil
}

// plotBand shades the x range [x0, x1] over the y range [y0, y1].
func plotBand(x0, x1, y0, y1 float64, c color.Color) (*plotter.Polygon, error) {
	poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	if err != nil {
		return nil, fmt.Errorf("report: band: %w", err)
	}
	poly.Color = c
	poly.LineStyle = draw.LineStyle{} // no outline
	return poly, nil
}

// plotVLine is a vertical line at x from y0 to y1.
func plotVLine(x, y0, y1 float64, c color.Color, dashes ...vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}})
	if err != nil {
		return nil, fmt.Errorf("report: vertical line: %w", err)
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.2), dashes
	return l, nil
}
