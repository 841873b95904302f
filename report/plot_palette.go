package report

import "github.com/knee-dev/knee/palette"

// SeriesStyle is one meaning drawn in knee's views (package palette).
type SeriesStyle = palette.SeriesStyle

// Series keys of Palette.
const (
	SeriesP50      = palette.SeriesP50
	SeriesP95      = palette.SeriesP95
	SeriesP99      = palette.SeriesP99
	SeriesAchieved = palette.SeriesAchieved
	SeriesTarget   = palette.SeriesTarget
	SeriesErrors   = palette.SeriesErrors
	SeriesDropped  = palette.SeriesDropped
	SeriesBusyVUs  = palette.SeriesBusyVUs
	SeriesVUs      = palette.SeriesVUs
	SeriesSendLag  = palette.SeriesSendLag
	SeriesCollapse = palette.SeriesCollapse
)

// Palette is every series knee draws, in legend order (palette.All).
func Palette() []SeriesStyle { return palette.All() }

// Style is the palette entry for key (palette.Style).
func Style(key string) SeriesStyle { return palette.Style(key) }

// PaletteJSON is the palette as the pages' script reads it: key -> {name, color}.
func PaletteJSON() map[string]PaletteEntry {
	out := map[string]PaletteEntry{}
	for _, s := range Palette() {
		out[s.Key] = PaletteEntry{Name: s.Name, Color: s.Hex()}
	}
	return out
}

// PaletteEntry is one series style as the page sees it.
type PaletteEntry struct {
	Name  string `json:"name"`
	Color string `json:"color"`
}

// PaletteCSS is the palette as CSS custom properties (--p50: #1f77b4; ...),
// for the pages' legends and warnings.
func PaletteCSS() string {
	css := ":root {"
	for _, s := range Palette() {
		css += " --" + s.Key + ": " + s.Hex() + ";"
	}
	return css + " }\n"
}
