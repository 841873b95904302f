package report

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/record"
)

// articleCurve is the article's stepped run as read off its figure: flat up
// to 300 req/s, the knee between 300 and 400, collapse at 500.
func articleCurve() analyze.CurveSummary {
	type row struct{ offered, rate, p50, p95, p99 float64 }
	rows := []row{
		{100, 100, 1.4, 4, 6}, {200, 200, 1.6, 7, 89}, {300, 300, 2.2, 5, 12},
		{400, 252, 40, 1600, 3000}, {500, 40, 9000, 20000, 26000}, {600, 10, 15000, 34000, 40000},
	}
	s := analyze.CurveSummary{
		Knee:     analyze.Knee{LastHealthyRate: 300, FirstUnhealthyRate: 400, Reason: "at 400 req/s achieved 252 req/s"},
		Collapse: &analyze.Collapse{AtRate: 500, Rate: 40},
		Capacity: "The knee lies between 300 and 400 req/s; run below 240 req/s.",
	}
	for i, r := range rows {
		begin := time.Duration(i) * 21 * time.Second
		s.Steps = append(s.Steps, analyze.Step{
			Index: i, Begin: begin, From: begin + 6*time.Second, To: begin + 21*time.Second,
			OfferedRate: r.offered, Rate: r.rate,
			LatencyMS: record.Latencies{P50: r.p50, P95: r.p95, P99: r.p99},
		})
	}
	return s
}

// articleTimeline has one 1 s window per second of articleCurve's steps,
// each at its step's percentiles, and one empty window (no requests).
func articleTimeline(s analyze.CurveSummary) []analyze.Window {
	var tl []analyze.Window
	for _, st := range s.Steps {
		l := analyze.WindowLatencies{P50: st.LatencyMS.P50, P95: st.LatencyMS.P95, P99: st.LatencyMS.P99}
		for t := st.Begin; t < st.To; t += time.Second {
			tl = append(tl, analyze.Window{StartS: t.Seconds(), EndS: (t + time.Second).Seconds(), Requests: int64(st.Rate), LatencyMS: l})
		}
	}
	tl[10].Requests, tl[10].LatencyMS = 0, analyze.WindowLatencies{}
	return tl
}

func TestPlotsWrite(t *testing.T) {
	s := articleCurve()
	tl := articleTimeline(s)
	tests := []struct {
		name   string
		write  func(*bytes.Buffer, Format) error
		labels []string // text the SVG must carry
	}{
		{"curve", func(b *bytes.Buffer, f Format) error { return WriteCurvePlot(b, f, s) }, []string{
			"Throughput: knee between 300 and 400 req/s", "offered rate (req/s)", "achieved throughput (req/s)",
			"offered (y = x)", "achieved", "Latency per step (log scale)", "latency", "1ms", "10s", "p50", "p95", "p99",
			"knee (300-400 req/s)", "collapse at 500 req/s (40 req/s achieved)",
		}},
		{"timeline", func(b *bytes.Buffer, f Format) error { return WriteTimelinePlot(b, f, tl, s.Steps) }, []string{
			"Latency over time (per 1s window, log scale)", "time since start (s)", "latency", "1ms", "100s", "1000s",
			"p50", "p95", "p99", "warmup (not measured)", "100 req/s", "600 req/s",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pngBuf, svgBuf bytes.Buffer
			if err := tt.write(&pngBuf, PNG); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(pngBuf.Bytes()))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 400 {
				t.Errorf("PNG is %v, want at least 800x400", b)
			}
			if err := tt.write(&svgBuf, SVG); err != nil {
				t.Fatal(err)
			}
			svg := svgBuf.String()
			if !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg, "<svg") || !strings.HasSuffix(strings.TrimSpace(svg), "</svg>") {
				t.Fatalf("not an SVG document: %.80q", svg)
			}
			for _, l := range tt.labels {
				if !strings.Contains(svg, ">"+l+"<") {
					t.Errorf("SVG lacks the label %q", l)
				}
			}
		})
	}
}

// TestPlotsFiles writes the plots as files named by format, as the CLI
// does. To look at them: KNEE_PLOT_DIR=/tmp/plots go test ./report/
func TestPlotsFiles(t *testing.T) {
	s := articleCurve()
	dir := t.TempDir()
	if d := os.Getenv("KNEE_PLOT_DIR"); d != "" {
		dir = d
	}
	headers := map[Format]string{PNG: "\x89PNG\r\n\x1a\n", SVG: "<?xml"}
	for _, name := range []string{"curve.png", "curve.svg", "timeline.png", "timeline.svg"} {
		path := filepath.Join(dir, name)
		f, err := FormatOf(path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if strings.HasPrefix(name, "curve") {
			err = WriteCurvePlot(&b, f, s)
		} else {
			err = WriteTimelinePlot(&b, f, articleTimeline(s), s.Steps)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b.Bytes(), []byte(headers[f])) {
			t.Errorf("%s starts %.8q, want %q", name, b.Bytes(), headers[f])
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPlotsReject(t *testing.T) {
	var b bytes.Buffer
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"unknown format", WriteCurvePlot(&b, Format("bmp"), articleCurve()), ErrFormat},
		{"no steps", WriteCurvePlot(&b, PNG, analyze.CurveSummary{}), analyze.ErrNoSteps},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if err := WriteTimelinePlot(&b, PNG, nil, nil); err == nil {
		t.Error("timeline of no intervals: no error")
	}
}

func TestFormatOf(t *testing.T) {
	tests := []struct {
		path string
		want Format
		ok   bool
	}{
		{"a/curve.png", PNG, true}, {"curve.SVG", SVG, true}, {"curve.pdf", "", false}, {"curve", "", false},
	}
	for _, tt := range tests {
		got, err := FormatOf(tt.path)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("FormatOf(%q) = %q, %v", tt.path, got, err)
		}
	}
}
