package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/knee-dev/knee/record"
)

// importList reads plain latency lists: one value per line in Options.Unit
// (default ms), blank lines and # comments skipped. A second column
// (whitespace or comma separated) is the time of the sample — unix time in
// s/ms/µs/ns, seconds since the start, or RFC 3339 — and spreads the
// samples over intervals; without it the whole list is one interval of
// Options.Duration, since nothing says when the samples were taken.
func importList(src source) (Result, error) {
	unit := src.opt.Unit
	if unit == "" {
		unit = UnitMillis
	}
	scale, err := unit.Nanos()
	if err != nil {
		return Result{}, err
	}
	lr := newLineReader(src.r, src.name)
	bad := &badRows{file: src.name, lenient: src.opt.Lenient}
	l := &listImporter{b: newBuilder(src, FormatList), bad: bad, lr: lr, scale: scale}
	scen, name := src.opt.Scenario, src.opt.Name
	if scen == "" {
		scen = defaultScenario
	}
	l.id = l.b.series.latencyID([]byte(scen), []byte(name))
	for {
		line, err := lr.scan(src.ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, err
		}
		if err := l.line(line, src); err != nil {
			return Result{}, err
		}
	}
	if l.whole != nil && l.b.requests > 0 {
		if src.opt.untimedDuration {
			// Nothing says how long the list took: no rate and no duration,
			// rather than one invented from the interval length.
			l.b.noTimes = true
			l.b.notes = append(l.b.notes, "the list has no timestamps: no rate and no duration (latencies only)")
		} else {
			l.b.notes = append(l.b.notes, fmt.Sprintf("the list has no timestamps: one interval of %v (the duration given), started at the file's modification time", src.opt.Duration))
		}
		if err := l.b.flush(l.whole); err != nil {
			return Result{}, err
		}
	}
	return l.b.finish(bad, l.rows)
}

type listImporter struct {
	b     *builder
	bad   *badRows
	lr    *lineReader
	times timeParser
	scale int64
	id    int
	rows  int64
	timed int     // 0 undecided, 1 with timestamps, -1 without
	whole *bucket // the one interval of an untimed list
}

func (l *listImporter) line(line []byte, src source) error {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	value, rest := line, []byte(nil)
	if i := bytes.IndexAny(line, " \t,;"); i >= 0 {
		value, rest = line[:i], bytes.TrimLeft(line[i+1:], " \t,;")
	}
	ns, ok := parseScaled(value, l.scale)
	if !ok {
		return l.bad.bad(l.lr.n, "each line holds one latency in "+unitWord(l.scale)+", optionally followed by a timestamp; "+fixLenient,
			"%q is not a latency", clip(value))
	}
	timed := 1
	if len(rest) == 0 {
		timed = -1
	}
	if l.timed == 0 {
		l.timed = timed
	}
	if timed != l.timed {
		return l.bad.bad(l.lr.n, "give every line a timestamp or none; "+fixLenient, "timestamp column appears or disappears")
	}
	bk, err := l.bucket(rest, src)
	if bk == nil {
		return err
	}
	l.b.request(bk, l.id, time.Duration(ns), -1, false, "")
	l.rows++
	return nil
}

func (l *listImporter) bucket(ts []byte, src source) (*bucket, error) {
	if l.timed < 0 {
		if l.whole == nil {
			l.b.explicit, l.b.started = true, true
			l.b.t0 = hlogStart(record.LogHeader{}, src).UnixNano()
			l.whole = l.b.newBucket(0)
			l.whole.end = src.opt.Duration
		}
		return l.whole, nil
	}
	t, ok := l.times.parse(bytes.TrimSpace(ts))
	if !ok {
		return nil, l.bad.bad(l.lr.n, "timestamps are unix time (s, ms, µs or ns), seconds since the start, or RFC 3339; "+fixLenient,
			"timestamp %q is not a time", clip(ts))
	}
	bk, ok, err := l.b.at(t)
	if err != nil || ok {
		return bk, err
	}
	return nil, l.bad.bad(l.lr.n, fixLenient, "timestamp %q jumps more than %v past the rows before it", clip(ts), maxJump)
}

func unitWord(scale int64) string {
	switch scale {
	case 1:
		return "ns"
	case 1e3:
		return "µs"
	case 1e6:
		return "ms"
	}
	return "s"
}
