package importer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/knee-dev/knee/record"
)

// importHlog reads an HdrHistogram interval log. Every interval keeps its
// tag (record.ParseTag: knee's own "latency|scenario|name" tags come back
// as they were written) and its times; lines of one interval (same start
// and length) become one run interval. The log's errors are not
// recoverable, so Lenient does not apply to it.
func importHlog(src source) (Result, error) {
	unitNanos, why, err := hlogUnit(src.r, src.opt.Unit)
	if err != nil {
		return Result{}, err
	}
	lr := record.NewLogReader(src.r, src.name, float64(unitNanos))
	b := newBuilder(src, FormatHlog)
	b.explicit = true
	b.notes = append(b.notes, why)
	var cur *bucket
	var rows int64
	for {
		li, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, fmt.Errorf("import: %w", err)
		}
		if err := src.ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("import: %s: %w", src.name, err)
		}
		rows++
		if !b.started {
			b.started, b.t0 = true, hlogStart(lr.Header(), src).UnixNano()
		}
		end := li.Start + li.Length
		if cur != nil && (cur.start != li.Start || cur.end != end) {
			if err := b.flush(cur); err != nil {
				return Result{}, err
			}
			cur = nil
		}
		if cur == nil {
			cur = b.newBucket(0)
			cur.start, cur.end = li.Start, end
		}
		b.addLogInterval(cur, li)
	}
	if cur != nil && b.requests > 0 {
		if err := b.flush(cur); err != nil {
			return Result{}, err
		}
	}
	return b.finish(&badRows{file: src.name}, rows)
}

// addLogInterval merges one log line's histogram into the interval.
func (b *builder) addLogInterval(bk *bucket, li record.LogInterval) {
	k := record.ParseTag(li.Tag)
	if b.opt.Scenario != "" {
		k.Scenario = b.opt.Scenario
	} else if k.Scenario == "" {
		k.Scenario = defaultScenario
	}
	if b.opt.Name != "" {
		k.Name = b.opt.Name
	}
	id := b.series.id(k)
	for len(bk.hists) <= id {
		bk.hists = append(bk.hists, nil)
	}
	if bk.hists[id] == nil {
		bk.hists[id] = record.NewHistogram()
	}
	bk.hists[id].Merge(li.Histogram)
	if k.Metric == record.Latency {
		b.total.Merge(li.Histogram)
		n := li.Histogram.Count()
		bk.counters(k.Scenario).Requests += n
		b.requests += n
	}
}

// hlogStart is when the log's timestamps count from.
func hlogStart(h record.LogHeader, src source) time.Time {
	switch {
	case !h.BaseTime.IsZero():
		return h.BaseTime
	case !h.StartTime.IsZero():
		return h.StartTime
	}
	return src.modTime
}

// hlogUnit settles the size of one raw value: the user's --unit, else µs
// for knee's own logs (their comments name knee), else ns as jHiccup and
// most Java tools write. why says which, for run.json.
func hlogUnit(r *bufio.Reader, u Unit) (int64, string, error) {
	if u != "" {
		n, err := u.Nanos()
		return n, fmt.Sprintf("hlog values read as %s (--unit)", u), err
	}
	head, _ := r.Peek(64 << 10) // a short peek just means a short file
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if len(line) == 0 || line[0] != '#' {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			break // the header is over
		}
		if bytes.Contains(bytes.ToLower(line), []byte("knee")) {
			return 1e3, "hlog values read as µs (knee's own log)", nil
		}
	}
	return 1, "hlog values read as ns (foreign log; give --unit if they are not)", nil
}
