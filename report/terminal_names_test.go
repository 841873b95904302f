package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/knee-dev/knee/analyze"
)

// The terminal tables name the series they share with the plots, the HTML
// report and the dashboard by the palette's words: offered, achieved, p50,
// p95, p99, busy VUs.
func TestTerminalTablesUsePaletteNames(t *testing.T) {
	word := func(key string) string { return strings.Fields(Style(key).Name)[0] }
	var win, curve bytes.Buffer
	if err := WindowTable(&win, analyze.WindowReport{WindowS: 10, All: analyze.WindowSeries{Windows: []analyze.Window{{Requests: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if err := CurveTable(&curve, []analyze.Step{{OfferedRate: 10}}); err != nil {
		t.Fatal(err)
	}
	winHeader := strings.Fields(strings.Split(win.String(), "\n")[1])
	curveHeader := strings.Split(curve.String(), "\n")[0]
	for _, col := range []string{word(SeriesAchieved) + "/s", word(SeriesTarget) + "/s", Style(SeriesP50).Name, Style(SeriesP95).Name, Style(SeriesP99).Name} {
		if !slices.Contains(winHeader, col) {
			t.Errorf("window table header %q lacks %q", winHeader, col)
		}
		if !strings.Contains(curveHeader, col) {
			t.Errorf("curve table header %q lacks %q", curveHeader, col)
		}
	}
	if busy := Style(SeriesBusyVUs).Name; !strings.Contains(curveHeader, busy) {
		t.Errorf("curve table header %q lacks %q", curveHeader, busy)
	}
	// The words themselves, so a palette rename is seen here too.
	if word(SeriesAchieved) != "achieved" || word(SeriesTarget) != "offered" || Style(SeriesBusyVUs).Name != "busy VUs" {
		t.Errorf("palette names changed: %q %q %q", Style(SeriesAchieved).Name, Style(SeriesTarget).Name, Style(SeriesBusyVUs).Name)
	}
}
