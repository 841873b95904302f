package probe

import (
	"bytes"
	"context"
	"github.com/knee-dev/knee/use"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A scan samples every second for its duration, then summarizes and judges:
// ticks at 0, 1, 2 and 3 s in 3.5 s, the counter's rate measured from the
// second tick on (three samples of 10/s), the failing probe reported as a
// problem, the machine sampled beside the given probes, nothing saturated.
func TestScanSamplesSummarizesAndJudges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var progress bytes.Buffer
		root := t.TempDir() // no /proc: the machine is not measured, and says why
		res, err := Scan(context.Background(), ScanOptions{
			Probes: []Probe{&countingProbe{}, failingProbe{}}, Duration: 3500 * time.Millisecond,
			Progress: &progress, Root: root,
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := "sampling 3 probes every 1s for 3.5s...\n"; progress.String() != want {
			t.Errorf("progress %q, want %q", progress.String(), want)
		}
		if res.USE.Label != "USE table over 3.5s" {
			t.Errorf("label %q", res.USE.Label)
		}
		row, ok := res.USE.Row(use.HTTPServer)
		if !ok {
			t.Fatal("no HTTP server row")
		}
		var hits use.Stat
		for _, s := range row.Info {
			if s.Metric == "hits" {
				hits = s
			}
		}
		if hits.N != 3 || hits.Mean != 10 || hits.Max != 10 {
			t.Errorf("hits %+v; want 3 samples of 10/s", hits)
		}
		if len(res.USE.Problems) == 0 || !strings.Contains(strings.Join(res.USE.Problems, "\n"), "broken") {
			t.Errorf("problems %q; want the failing probe named", res.USE.Problems)
		}
		// The machine probe ran, on the given root: its readings say what it
		// could not read there.
		m, _ := res.USE.Row(use.Machine)
		if st := m.Utilization.Stats; len(st) == 0 || !strings.Contains(st[0].NotMeasured, root) {
			t.Errorf("machine utilization %+v; want the machine probe sampled under %s", st, root)
		}
		if res.Bottleneck.Bottleneck != "" {
			t.Errorf("bottleneck %q; nothing saturated", res.Bottleneck.Bottleneck)
		}
	})
}

// A scan shorter than two intervals cannot measure a rate: refused, naming
// the flag, before any sampling.
func TestScanRefusesTooShort(t *testing.T) {
	for _, tc := range []struct {
		d, every time.Duration
		ok       bool
	}{
		{1999 * time.Millisecond, 0, false},
		{2 * time.Second, 0, true},
		{time.Second, 500 * time.Millisecond, true},
		{0, 0, false},
	} {
		opt := ScanOptions{Duration: tc.d, Interval: tc.every}
		err := opt.Validate()
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "--duration") {
			t.Errorf("duration %s every %s: %v; want ok=%v", tc.d, tc.every, err, tc.ok)
		}
		if !tc.ok {
			if _, err := Scan(context.Background(), opt); err == nil {
				t.Errorf("Scan of %s ran", tc.d)
			}
		}
	}
}

// A run's resources.jsonl read back: a missing file holds no samples; a bad
// line is an error naming the file.
func TestReadSamplesFile(t *testing.T) {
	dir := t.TempDir()
	if s, _, err := ReadSamplesFile(filepath.Join(dir, "resources.jsonl")); s != nil || err != nil {
		t.Errorf("missing file: %v, %v; want no samples and no error", s, err)
	}
	want := use.Sample{At: time.Second, Probe: "count", Readings: []use.Reading{measured(use.HTTPServer, "hits", use.Info, 10, use.UnitPerSec)}}
	var buf bytes.Buffer
	if err := use.WriteSample(&buf, want); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, torn, err := ReadSamplesFile(good)
	if err != nil || torn || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("read back %+v, torn %v, %v; want %+v", got, torn, err, want)
	}
	// A last line cut short (a full disk) is dropped and reported, not an error.
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, append(bytes.Repeat(buf.Bytes(), 2), buf.Bytes()[:buf.Len()/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, torn, err := ReadSamplesFile(cut); err != nil || !torn || len(got) != 2 {
		t.Errorf("torn last line: %d samples, torn %v, %v; want 2, true, nil", len(got), torn, err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, append(buf.Bytes(), "{not json\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadSamplesFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad line: %v; want an error naming %s", err, bad)
	}
}
