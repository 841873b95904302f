package runner

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/knee-dev/knee/palette"
)

// fitLine drops the least important fields first and cuts only what no
// dropping can fit.
func TestFitLine(t *testing.T) {
	fields := []progressField{
		{"   12s/60s", 0},
		{"offered (target) 500/s", 1},
		{"achieved 498/s", 1},
		{"busy VUs 3/50", 4},
		{"(max 50)", 6},
		{"p99 1.25ms", 2},
		{"errors 0", 3},
		{"dropped iterations 0", 3},
	}
	full := "   12s/60s  offered (target) 500/s  achieved 498/s  busy VUs 3/50  (max 50)  p99 1.25ms  errors 0  dropped iterations 0"
	for _, tc := range []struct {
		width int
		want  string
	}{
		{0, full},
		{200, full},
		{len(full), full},
		{109, "   12s/60s  offered (target) 500/s  achieved 498/s  busy VUs 3/50  p99 1.25ms  errors 0  dropped iterations 0"},
		{99, "   12s/60s  offered (target) 500/s  achieved 498/s  p99 1.25ms  errors 0  dropped iterations 0"},
		{79, "   12s/60s  offered (target) 500/s  achieved 498/s  p99 1.25ms  errors 0"},
		{60, "   12s/60s  offered (target) 500/s  achieved 498/s"},
		{40, "   12s/60s  offered (target) 500/s"},
		{12, "   12s/60s"},
		{5, "   12"},
	} {
		got := fitLine(append([]progressField(nil), fields...), tc.width)
		if got != tc.want {
			t.Errorf("width %d:\n got %q\nwant %q", tc.width, got, tc.want)
		}
		if tc.width > 0 && utf8.RuneCountInString(got) > tc.width {
			t.Errorf("width %d: %d columns", tc.width, utf8.RuneCountInString(got))
		}
		if strings.HasSuffix(got, " ") {
			t.Errorf("width %d: trailing space in %q", tc.width, got)
		}
	}
}

// The progress line names every series as package palette does (the plots',
// the HTML report's and the dashboard's legends), and shows the figures given.
func TestProgressNamesFromPalette(t *testing.T) {
	st := progressState{elapsed: 12 * time.Second, total: 60 * time.Second, target: 500, rate: 498,
		busy: 3, vus: 50, peak: 50, p99: 1250 * time.Microsecond, errors: 2, dropped: 7}
	var texts []string
	for _, f := range progressFields(st) {
		texts = append(texts, f.text)
	}
	want := []string{"   12s/60s", "offered (target) 500/s", "achieved 498/s", "busy VUs 3/50", "(max 50)", "p99 1.25ms", "errors 2", "dropped iterations 7"}
	if !slices.Equal(texts, want) {
		t.Fatalf("fields %q, want %q", texts, want)
	}
	// Each label is the palette's own name for its series, not a copy.
	pal := map[string]string{}
	for _, s := range palette.All() {
		pal[s.Key] = s.Name
	}
	for i, key := range map[int]string{1: palette.SeriesTarget, 2: palette.SeriesAchieved, 3: palette.SeriesBusyVUs,
		5: palette.SeriesP99, 6: palette.SeriesErrors, 7: palette.SeriesDropped} {
		name, ok := pal[key]
		if !ok || !strings.HasPrefix(texts[i], name+" ") {
			t.Errorf("field %q does not start with the palette's name %q for %s", texts[i], name, key)
		}
	}
	// A closed model has no offered rate: no offered field.
	st.target = 0
	for _, f := range progressFields(st) {
		if strings.HasPrefix(f.text, pal[palette.SeriesTarget]) {
			t.Errorf("closed model shows %q", f.text)
		}
	}
}

// widthBuffer is a terminal of a given width, for say.
type widthBuffer struct {
	strings.Builder
	width int
}

func (w *widthBuffer) Width() int { return w.width }

// A fault's message on an 80-column terminal wraps between its words, one
// column short of the width as the progress line is (79): the 93-column line
// breaks after "at 4.0s" (column 73), and the progress line is drawn again
// below it. To a file or a pipe it stays one line.
func TestSayFitsTheTerminal(t *testing.T) {
	msg := "fault: freeze /sys/fs/cgroup/freezer/knee/bookstore-dnc4core3q9d at 4.0s (cgroup-v1-freezer)"
	for _, tc := range []struct {
		name string
		live bool
		line string // the progress line on screen
		want string
	}{
		{"live", true, "   5s/10s  achieved 200/s", "\r\x1b[Kfault: freeze /sys/fs/cgroup/freezer/knee/bookstore-dnc4core3q9d at 4.0s\n" +
			"  (cgroup-v1-freezer)\n   5s/10s  achieved 200/s"},
		{"live, no line yet", true, "", "fault: freeze /sys/fs/cgroup/freezer/knee/bookstore-dnc4core3q9d at 4.0s\n" +
			"  (cgroup-v1-freezer)\n"},
		{"a file", false, "", msg + "\n"},
	} {
		w := &widthBuffer{width: 80}
		e := &engine{opt: Options{Progress: w, Live: tc.live}, line: tc.line}
		e.say(msg)
		if w.String() != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, w.String(), tc.want)
		}
	}
}
