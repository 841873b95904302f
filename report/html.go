package report

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
)

// The page is one file that works offline: its stylesheet and chart script
// (knee's own, a few hundred lines drawing SVG) are embedded, and the numbers
// travel as JSON in a <script type="application/json"> block, which
// html/template escapes so a request name holding "</script>" cannot end it.
//
//go:embed assets/report.html.tmpl assets/report.css assets/report.js
var assets embed.FS

// HTML writes in as a self-contained page: the report's tables plus charts
// of latency over time, the percentile distribution and, for stepped runs,
// the throughput-latency curve. The page fetches nothing.
func HTML(w io.Writer, in Input) error {
	tmpl, err := parsePage()
	if err != nil {
		return err
	}
	css, err := assets.ReadFile("assets/report.css")
	if err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	js, err := assets.ReadFile("assets/report.js")
	if err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	page := struct {
		htmlView
		Style  template.CSS
		Script template.JS
	}{newHTMLView(in), template.CSS(PaletteCSS() + string(css)), template.JS(js)} // #nosec: our own embedded files
	if err := tmpl.Execute(w, page); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	return nil
}

// parsePage parses the embedded template; it is parsed per call because
// packages here keep no globals, and a report is written once per run.
func parsePage() (*template.Template, error) {
	tmpl, err := template.New("report.html.tmpl").ParseFS(assets, "assets/report.html.tmpl")
	if err != nil {
		return nil, fmt.Errorf("report: html template: %w", err)
	}
	return tmpl, nil
}

// PageAssets are the report's stylesheet (with the palette) and chart
// script, for another self-contained page drawn with the same code (the
// live dashboard): its script calls window.kneeCharts.drawAll(ChartJSON(...)).
func PageAssets() (css, js string, err error) {
	c, err := assets.ReadFile("assets/report.css")
	if err != nil {
		return "", "", fmt.Errorf("report: assets: %w", err)
	}
	j, err := assets.ReadFile("assets/report.js")
	if err != nil {
		return "", "", fmt.Errorf("report: assets: %w", err)
	}
	return PaletteCSS() + string(c), string(j), nil
}

// ChartJSON is the chart data of in as the page's script reads it.
func ChartJSON(in Input) ([]byte, error) {
	b, err := json.Marshal(chartsOf(in))
	if err != nil {
		return nil, fmt.Errorf("report: chart data: %w", err)
	}
	return b, nil
}
