package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"

	"github.com/knee-dev/knee/report"
)

//go:embed assets/dashboard.html.tmpl assets/dashboard.js
var assets embed.FS

// Page is the dashboard's one page: the report's stylesheet, palette and
// chart script, plus the small script that follows the event stream.
func Page() ([]byte, error) {
	css, charts, err := report.PageAssets()
	if err != nil {
		return nil, err
	}
	live, err := assets.ReadFile("assets/dashboard.js")
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	tmpl, err := template.ParseFS(assets, "assets/dashboard.html.tmpl")
	if err != nil {
		return nil, fmt.Errorf("dashboard: page template: %w", err)
	}
	var b bytes.Buffer
	// #nosec: knee's own embedded files
	err = tmpl.Execute(&b, map[string]any{"Style": template.CSS(css), "Charts": template.JS(charts), "Live": template.JS(live)})
	if err != nil {
		return nil, fmt.Errorf("dashboard: page: %w", err)
	}
	return b.Bytes(), nil
}
