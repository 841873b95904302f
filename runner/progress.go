package runner

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/knee-dev/knee/internal/textwrap"
	"github.com/knee-dev/knee/palette"
)

// plainEvery is how often a non-terminal progress line is printed.
const plainEvery = 5 * time.Second

// defaultWidth is the width assumed for a live line when the terminal's
// own cannot be read.
const defaultWidth = 80

// Widther is a Progress writer that knows its terminal's width in columns
// (read at every line, so a resized window is followed); 0 means unknown.
type Widther interface {
	Width() int
}

// progress prints the state after an interval: elapsed/total, offered vs
// achieved rate, busy VUs, the last interval's p99, errors and drops. On a
// terminal it rewrites one line every interval, fitted to the terminal's
// width; otherwise it prints a whole line every plainEvery.
func (e *engine) progress(elapsed time.Duration) {
	if e.opt.Progress == nil {
		return
	}
	every := max(1, int(plainEvery/e.opt.Interval))
	n := int(elapsed.Round(e.opt.Interval) / e.opt.Interval)
	if !e.opt.Live && n%every != 0 {
		return
	}
	e.mu.Lock()
	last := e.last
	e.mu.Unlock()
	var target float64
	var busy, vus, peak int
	var dropped int64
	for _, st := range e.lr.Stats() {
		target += st.Rate
		busy += st.BusyVUs
		vus += st.VUs
		peak += st.PeakVUs
		dropped += st.Dropped
	}
	rate := 0.0
	if last.secs > 0 {
		rate = float64(last.requests) / last.secs
	}
	fields := progressFields(progressState{elapsed: elapsed, total: e.total, target: target, rate: rate,
		busy: busy, vus: vus, peak: peak, p99: last.p99, errors: last.errs, dropped: dropped})
	if !e.opt.Live {
		e.say(fitLine(fields, 0))
		return
	}
	line := fitLine(fields, e.liveWidth())
	e.pmu.Lock()
	defer e.pmu.Unlock()
	e.line = line
	fmt.Fprintf(e.opt.Progress, "\r\x1b[K%s", line)
}

// liveWidth is the columns a live line may take: the terminal's width
// (Widther, from the terminal behind Progress), or defaultWidth when it
// cannot be read, one column short: a line that fills the last column
// wraps on some terminals, and "\r" then rewrites only the second row.
func (e *engine) liveWidth() int {
	width := defaultWidth
	if w, ok := e.opt.Progress.(Widther); ok && w.Width() > 0 {
		width = w.Width()
	}
	return width - 1
}

// say prints msg on a line of its own. On a live terminal the progress line
// is cleared first and drawn again below msg, so a message never lands in
// the middle of it, and msg is wrapped between its words to the terminal's
// width (the progress line's), its continuation indented by two, so the
// terminal does not break a path or a word (a fault's "(cgroup-v1-freezer)").
func (e *engine) say(msg string) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	if e.opt.Live {
		msg = strings.Join(textwrap.Line(msg, e.liveWidth(), 2), "\n")
	}
	if e.opt.Live && e.line != "" {
		fmt.Fprintf(e.opt.Progress, "\r\x1b[K%s\n%s", msg, e.line)
		return
	}
	fmt.Fprintf(e.opt.Progress, "%s\n", msg)
}

// progressState is what one progress line shows.
type progressState struct {
	elapsed, total  time.Duration
	target, rate    float64 // offered and achieved req/s; target 0: not an open model
	busy, vus, peak int
	p99             time.Duration
	errors, dropped int64
}

// progressFields are the line's fields in display order; rank says which go
// first when the line must shrink (the highest rank is dropped first). Each
// series is named as the plots, the report and the dashboard name it
// (package palette), so a word on the terminal means what it means there.
func progressFields(st progressState) []progressField {
	name := func(key string) string { return palette.Style(key).Name }
	fields := []progressField{
		{fmt.Sprintf("%5.0fs/%.0fs", st.elapsed.Seconds(), st.total.Seconds()), 0},
	}
	if st.target > 0 {
		fields = append(fields, progressField{fmt.Sprintf("%s %.0f/s", name(palette.SeriesTarget), st.target), 1})
	}
	return append(fields,
		progressField{fmt.Sprintf("%s %.0f/s", name(palette.SeriesAchieved), st.rate), 1},
		progressField{fmt.Sprintf("%s %d/%d", name(palette.SeriesBusyVUs), st.busy, st.vus), 4},
		progressField{fmt.Sprintf("(max %d)", st.peak), 6},
		progressField{name(palette.SeriesP99) + " " + shortDuration(st.p99), 2},
		progressField{fmt.Sprintf("%s %d", name(palette.SeriesErrors), st.errors), 3},
		progressField{fmt.Sprintf("%s %d", name(palette.SeriesDropped), st.dropped), 3},
	)
}

type progressField struct {
	text string
	rank int // 0: always kept; higher ranks are dropped first
}

// fitLine joins fields with two spaces, dropping the highest-ranked fields
// until the line is at most width columns (width <= 0: no limit); what still
// does not fit is cut.
func fitLine(fields []progressField, width int) string {
	join := func(fs []progressField) string {
		parts := make([]string, len(fs))
		for i, f := range fs {
			parts[i] = f.text
		}
		return strings.Join(parts, "  ")
	}
	line := join(fields)
	for width > 0 && utf8.RuneCountInString(line) > width {
		worst := -1
		for i, f := range fields {
			if f.rank > 0 && (worst < 0 || f.rank >= fields[worst].rank) {
				worst = i
			}
		}
		if worst < 0 {
			r := []rune(line)
			return string(r[:width])
		}
		fields = append(fields[:worst:worst], fields[worst+1:]...)
		line = join(fields)
	}
	return line
}
