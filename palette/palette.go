// Package palette is the one list of the series knee shows, with the name
// and colour of each: the terminal's words, the PNG/SVG plots, the HTML
// report and the live dashboard all take them from here, so a series reads
// and looks the same everywhere. It imports no knee package, so the runner's
// progress line can use it as the report does.
package palette

import (
	"fmt"
	"image/color"
)

// SeriesStyle is one meaning drawn in knee's views: the PNG/SVG plots, the
// HTML report and the live dashboard all take a series' name and colour
// from this palette, so p50 is one colour with one name everywhere.
type SeriesStyle struct {
	Key   string     // the name the pages' script looks the style up by
	Name  string     // the legend label
	Color color.RGBA // opaque
}

// Hex is the colour as #rrggbb, as CSS and SVG want it.
func (s SeriesStyle) Hex() string {
	return fmt.Sprintf("#%02x%02x%02x", s.Color.R, s.Color.G, s.Color.B)
}

// Series keys of Palette.
const (
	SeriesP50      = "p50"
	SeriesP95      = "p95"
	SeriesP99      = "p99"
	SeriesAchieved = "achieved"
	SeriesTarget   = "target"
	SeriesErrors   = "errors"
	SeriesDropped  = "dropped"
	SeriesBusyVUs  = "busy_vus"
	SeriesVUs      = "vus"
	SeriesSendLag  = "send_lag"
	SeriesCollapse = "collapse"
	SeriesMax      = "max"
	SeriesFailed   = "failed"
	Series1xx      = "status_1xx"
	Series2xx      = "status_2xx"
	Series3xx      = "status_3xx"
	Series4xx      = "status_4xx"
	Series5xx      = "status_5xx"
	SeriesReceived = "data_received"
	SeriesSent     = "data_sent"
	SeriesChecksOK = "checks_pass"
	SeriesChecksNo = "checks_fail"
	SeriesIters    = "iterations"
	// The phases of a request, k6's http_req_blocked .. http_req_receiving.
	SeriesBlocked    = "phase_blocked"
	SeriesConnecting = "phase_connecting"
	SeriesTLS        = "phase_tls_handshaking"
	SeriesSending    = "phase_sending"
	SeriesWaiting    = "phase_waiting"
	SeriesReceiving  = "phase_receiving"
	SeriesFault      = "fault"
)

// All is every series knee draws, in legend order. The colours are
// the category10 set, picked so neighbours differ for colour-blind readers.
func All() []SeriesStyle {
	rgb := func(r, g, b uint8) color.RGBA { return color.RGBA{R: r, G: g, B: b, A: 0xff} }
	return []SeriesStyle{
		{SeriesP50, "p50", rgb(0x1f, 0x77, 0xb4)},                 // blue
		{SeriesP95, "p95", rgb(0xff, 0x7f, 0x0e)},                 // orange
		{SeriesP99, "p99", rgb(0xd6, 0x27, 0x28)},                 // red
		{SeriesAchieved, "achieved", rgb(0x2c, 0xa0, 0x2c)},       // green
		{SeriesTarget, "offered (target)", rgb(0x88, 0x88, 0x88)}, // grey
		{SeriesErrors, "errors", rgb(0x94, 0x67, 0xbd)},           // purple
		{SeriesDropped, "dropped iterations", rgb(0xe3, 0x77, 0xc2)},
		{SeriesBusyVUs, "busy VUs", rgb(0x8c, 0x56, 0x4b)}, // brown
		{SeriesVUs, "allocated VUs", rgb(0xbc, 0xbd, 0x22)},
		{SeriesSendLag, "send lag", rgb(0x17, 0xbe, 0xcf)},
		{SeriesCollapse, "collapse", rgb(0x99, 0x00, 0x00)},
		{SeriesMax, "max", rgb(0x44, 0x44, 0x44)},                            // dark grey
		{SeriesFailed, "failed (k6 http_req_failed)", rgb(0xc4, 0x9c, 0x94)}, // light brown
		// Status classes in the light tones of the category20 set: success
		// green, redirects blue, client errors orange, server errors red.
		{Series1xx, "1xx", rgb(0x9e, 0xda, 0xe5)},
		{Series2xx, "2xx", rgb(0x98, 0xdf, 0x8a)},
		{Series3xx, "3xx", rgb(0xae, 0xc7, 0xe8)},
		{Series4xx, "4xx", rgb(0xff, 0xbb, 0x78)},
		{Series5xx, "5xx", rgb(0xff, 0x98, 0x96)},
		{SeriesReceived, "data received", rgb(0x39, 0x3b, 0x79)}, // indigo
		{SeriesSent, "data sent", rgb(0x9c, 0x9e, 0xde)},         // light indigo
		{SeriesChecksOK, "checks passed", rgb(0x63, 0x79, 0x39)}, // olive
		{SeriesChecksNo, "checks failed", rgb(0x84, 0x3c, 0x39)}, // dark red
		{SeriesIters, "iterations", rgb(0x00, 0x79, 0x6b)},       // teal
		// The phases, in the darker tones of the category20b/c sets.
		{SeriesBlocked, "blocked", rgb(0x7b, 0x41, 0x73)},                      // plum
		{SeriesConnecting, "connecting", rgb(0xbd, 0x9e, 0x39)},                // mustard
		{SeriesTLS, "TLS handshaking", rgb(0xad, 0x49, 0x4a)},                  // brick
		{SeriesSending, "sending", rgb(0x52, 0x54, 0xa3)},                      // slate
		{SeriesWaiting, "waiting (time to first byte)", rgb(0xe6, 0x55, 0x0d)}, // dark orange
		{SeriesReceiving, "receiving", rgb(0x31, 0x82, 0xbd)},                  // steel blue
		{SeriesFault, "fault", rgb(0xe0, 0xa1, 0x00)},                          // amber: shaded spans
	}
}

// Style is the palette entry for key; an unknown key is a programming
// error and gets black so it shows.
func Style(key string) SeriesStyle {
	for _, s := range All() {
		if s.Key == key {
			return s
		}
	}
	return SeriesStyle{Key: key, Name: key, Color: color.RGBA{A: 0xff}}
}
