package importer

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// memSink keeps an import in memory, in the order the calls came.
type memSink struct {
	first  *rundir.Meta
	snaps  []record.IntervalSnapshot
	extras []map[string]rundir.IntervalCounters
	final  *rundir.Meta
}

func (m *memSink) open(meta rundir.Meta) error { m.first = &meta; return nil }
func (m *memSink) write(s record.IntervalSnapshot, e map[string]rundir.IntervalCounters) error {
	m.snaps = append(m.snaps, s)
	m.extras = append(m.extras, e)
	return nil
}
func (m *memSink) close(meta rundir.Meta) error { m.final = &meta; return nil }

// merged merges every histogram whose key passes keep.
func (m *memSink) merged(keep func(record.Key) bool) *record.Histogram {
	h := record.NewHistogram()
	for _, s := range m.snaps {
		for k, kh := range s.Histograms {
			if keep(k) {
				h.Merge(kh)
			}
		}
	}
	return h
}

func latencyOf(scenario, name string) func(record.Key) bool {
	return func(k record.Key) bool {
		return k.Metric == record.Latency && (scenario == "" || k.Scenario == scenario) && (name == "" || k.Name == name)
	}
}

// importString imports content (named name) into a memSink.
func importString(t testing.TB, name, content string, opt Options) (*Result, *memSink, error) {
	t.Helper()
	return importReader(t, name, strings.NewReader(content), opt)
}

func importFile(t testing.TB, path string, opt Options) (*Result, *memSink, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return importReader(t, path, f, opt)
}

func importReader(t testing.TB, name string, r interface{ Read([]byte) (int, error) }, opt Options) (*Result, *memSink, error) {
	t.Helper()
	opt, err := opt.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	res, err := importFrom(context.Background(), r, name, time.Unix(1e9, 0).UTC(), opt, sink)
	return res, sink, err
}

// near reports whether got is within HdrHistogram's precision (3 significant
// digits: 0.1 %) of want, plus the microsecond record keeps.
func near(got, want time.Duration) bool {
	return math.Abs(float64(got-want)) <= 0.001*float64(want)+float64(time.Microsecond)
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
