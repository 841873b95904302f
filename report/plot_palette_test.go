package report

import (
	"bytes"
	"encoding/json"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPaletteOneColourPerMeaning: the PNG plots paint p50, p95, p99 and
// achieved in the palette's colours, the page carries the same palette,
// the page's script hard-codes no colour of its own, and in a browser the
// p50 line of the report is the palette's p50.
func TestPaletteOneColourPerMeaning(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Palette() {
		if seen[s.Key] || seen[s.Hex()] {
			t.Errorf("palette repeats %s/%s", s.Key, s.Hex())
		}
		seen[s.Key], seen[s.Hex()] = true, true
	}
	if got := Style(SeriesP50).Hex(); got != "#1f77b4" {
		t.Errorf("p50 is %s, want the plots' blue #1f77b4", got)
	}

	var in Input
	for _, tc := range reportCases(t) {
		if tc.name == "steps" {
			in = tc.in
		}
	}
	// Plots: count pixels of exactly each palette colour.
	var tl, cv bytes.Buffer
	if err := WriteTimelinePlot(&tl, PNG, in.Windows.All.Windows, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteCurvePlot(&cv, PNG, *in.Curve); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{"timeline": {SeriesP50, SeriesP95, SeriesP99}, "curve": {SeriesP50, SeriesP95, SeriesP99, SeriesAchieved}} {
		buf := tl
		if name == "curve" {
			buf = cv
		}
		img, err := png.Decode(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		counts := map[color.RGBA]int{}
		bnd := img.Bounds()
		for y := bnd.Min.Y; y < bnd.Max.Y; y++ {
			for x := bnd.Min.X; x < bnd.Max.X; x++ {
				r, g, b, a := img.At(x, y).RGBA()
				counts[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}]++
			}
		}
		for _, key := range want {
			if n := counts[Style(key).Color]; n < 20 {
				t.Errorf("%s plot: %d pixels of %s's %s, want a line of them", name, n, key, Style(key).Hex())
			}
		}
	}

	// Page: the data block carries the palette as it is in Go.
	page := string(renderHTML(t, in))
	m := regexp.MustCompile(`(?s)<script type="application/json" id="knee-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no data block in the page")
	}
	var data struct {
		Palette map[string]PaletteEntry `json:"palette"`
	}
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatal(err)
	}
	for _, s := range Palette() {
		if got := data.Palette[s.Key]; got.Color != s.Hex() || got.Name != s.Name {
			t.Errorf("page palette %s = %+v, want %s %q", s.Key, got, s.Hex(), s.Name)
		}
		if !strings.Contains(page, "--"+s.Key+": "+s.Hex()+";") {
			t.Errorf("page CSS lacks --%s: %s", s.Key, s.Hex())
		}
	}
	js, err := assets.ReadFile("assets/report.js")
	if err != nil {
		t.Fatal(err)
	}
	if hex := regexp.MustCompile(`#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b`).FindAllString(string(js), -1); len(hex) > 0 {
		t.Errorf("report.js hard-codes colours %v: take them from the palette", hex)
	}

	// In a browser: the p50 line's stroke is the palette's p50, in every chart that has one.
	bin := chromium(t)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := runChromium(t, bin, file, "--dump-dom")
	strokes := regexp.MustCompile(`<path [^>]*stroke="([^"]*)"[^>]*data-series="p50"`).FindAllStringSubmatch(dom, -1)
	if len(strokes) < 2 {
		t.Fatalf("%d p50 lines in the drawn page, want the timeline's and the curve's", len(strokes))
	}
	for _, s := range strokes {
		if s[1] != Style(SeriesP50).Hex() {
			t.Errorf("p50 drawn in %s, want %s", s[1], Style(SeriesP50).Hex())
		}
	}
}
