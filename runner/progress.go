package runner

import (
	"fmt"
	"time"
)

// plainEvery is how often a non-terminal progress line is printed.
const plainEvery = 5 * time.Second

// progress prints the state after an interval: elapsed/total, target vs
// achieved rate, busy VUs, the last interval's p99, errors and drops. On a
// terminal it rewrites one line every interval; otherwise it prints a line
// every plainEvery.
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
	snap := e.last
	e.mu.Unlock()
	reqs, errs, p99 := intervalStats(snap)
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
	secs := (snap.End - snap.Start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(reqs) / secs
	}
	line := fmt.Sprintf("%5.0fs/%.0fs", elapsed.Seconds(), e.total.Seconds())
	if target > 0 {
		line += fmt.Sprintf("  target %.0f/s", target)
	}
	line += fmt.Sprintf("  achieved %.0f/s  VUs busy %d/%d (max %d)  p99 %s  errors %d  dropped %d",
		rate, busy, vus, peak, shortDuration(p99), errs, dropped)
	if e.opt.Live {
		e.printf("\r\x1b[K%s", line)
		return
	}
	e.printf("%s\n", line)
}

func (e *engine) printf(format string, a ...any) {
	fmt.Fprintf(e.opt.Progress, format, a...)
}
