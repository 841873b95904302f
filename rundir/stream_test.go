package rundir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
)

// readStream reads every interval of dir through a Stream.
func readStream(t *testing.T, dir string) ([]Interval, error) {
	t.Helper()
	s, err := OpenStream(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []Interval
	for {
		iv, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, iv)
	}
}

// sameIntervals fails unless a and b hold the same intervals: starts, ends,
// counters and, histogram by histogram, the same recorded values.
func sameIntervals(t *testing.T, a, b []Interval) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d intervals, want %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Start != b[i].Start || a[i].End != b[i].End {
			t.Errorf("interval %d: [%v, %v), want [%v, %v)", i, a[i].Start, a[i].End, b[i].Start, b[i].End)
		}
		if !reflect.DeepEqual(a[i].Counters, b[i].Counters) {
			t.Errorf("interval %d: counters %+v, want %+v", i, a[i].Counters, b[i].Counters)
		}
		if len(a[i].Histograms) != len(b[i].Histograms) {
			t.Errorf("interval %d: %d histograms, want %d", i, len(a[i].Histograms), len(b[i].Histograms))
		}
		for k, h := range b[i].Histograms {
			g, ok := a[i].Histograms[k]
			if !ok {
				t.Errorf("interval %d: no %v", i, k)
				continue
			}
			if g.Count() != h.Count() || !reflect.DeepEqual(g.Distribution(5), h.Distribution(5)) {
				t.Errorf("interval %d %v: %d values, want %d, or another distribution", i, k, g.Count(), h.Count())
			}
		}
	}
}

func TestStreamReadsWhatOpenReads(t *testing.T) {
	dir := t.TempDir()
	meta := Meta{KneeVersion: "test", ID: "s1", Source: "knee", Model: "open", Started: time.UnixMilli(1700000000123).UTC()}
	w, err := Create(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		snap := snapshot(i)
		switch i {
		case 2: // no request finished: counters without histograms
			snap.Histograms = map[record.Key]*record.Histogram{}
		case 4: // a short last interval, then more of the same interval: they add up
			snap.End = snap.Start + 300*time.Millisecond
		}
		if err := w.WriteInterval(snap, map[string]IntervalCounters{"s": {TargetRate: 100, VUs: 4}}); err != nil {
			t.Fatal(err)
		}
		if i == 4 {
			if err := w.WriteInterval(snap, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(meta); err != nil {
		t.Fatal(err)
	}
	// A blank line in counters.jsonl is skipped by both.
	f, _ := os.OpenFile(filepath.Join(dir, CountersFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n")
	f.Close()

	whole, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readStream(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	sameIntervals(t, got, whole.Intervals)
	// And what they read is what was written: interval 4 twice, 2 without latencies.
	if n := len(got); n != 6 {
		t.Fatalf("%d intervals, want 6", n)
	}
	if c := got[4].Histograms[getLat].Count(); c != 200 {
		t.Errorf("interval 4 holds %d latencies, want 200 (100 written twice)", c)
	}
	if c := got[4].Counters["s"]; c.Counters.Requests != 200 || c.TargetRate != 100 {
		t.Errorf("interval 4 counters %+v, want 200 requests at target rate 100", c)
	}
	if len(got[2].Histograms) != 0 || got[2].Counters["s"].Counters.Requests != 100 {
		t.Errorf("interval 2: %d histograms, counters %+v; want none and 100 requests", len(got[2].Histograms), got[2].Counters["s"])
	}
}

func TestStreamRefusesOutOfOrder(t *testing.T) {
	for _, file := range []string{LatencyFile, CountersFile} {
		t.Run(file, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, dir, 3, true)
			// Swap the file's last interval before its first.
			p := filepath.Join(dir, file)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(b), "\n")
			var head, body []string
			for _, l := range lines {
				if file == LatencyFile && (l == "" || l[0] == '#' || l[0] == '"') {
					head = append(head, l)
				} else if l != "" {
					body = append(body, l)
				}
			}
			body = append(body[len(body)-1:], body[:len(body)-1]...)
			out := ""
			for _, l := range append(head, body...) {
				out += l + "\n"
			}
			if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = readStream(t, dir)
			if !errors.Is(err, ErrOutOfOrder) {
				t.Fatalf("err %v, want ErrOutOfOrder", err)
			}
			t.Log(err)
		})
	}
}

// FuzzStream: whatever the files hold, a Stream never panics, and when Open
// reads them a Stream reads the same intervals or says they are out of order.
func FuzzStream(f *testing.F) {
	seed := seedRun(f)
	f.Add(seed[0], seed[1])
	f.Add([]byte("#[StartTime: 1700000000.123 (seconds since epoch)]\n2.000,1.000,0.0,HISTFAAAAB14nJNpmSzMwMDAxwABzFCaEUKzMdgzMDAwAAA6YwGo\n0.000,1.000,0.0,HISTFAAAAB14nJNpmSzMwMDAxwABzFCaEUKzMdgzMDAwAAA6YwGo\n"),
		[]byte(`{"scenario":"s","start_s":0.0004,"end_s":1,"counters":{"requests":3}}`+"\n\n"+`{"scenario":"s","start_s":1,"end_s":1.5}`+"\n"))
	f.Fuzz(func(t *testing.T, hlog, counters []byte) {
		dir := t.TempDir()
		meta := `{"format_version":1,"id":"f","started":"2023-11-14T22:13:20.123Z"}`
		for name, b := range map[string][]byte{MetaFile: []byte(meta), LatencyFile: hlog, CountersFile: counters} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, serr := readStream(t, dir)
		whole, oerr := Open(dir)
		switch {
		case oerr != nil && serr == nil:
			t.Fatalf("Open refused (%v), the Stream read %d intervals", oerr, len(got))
		case oerr == nil && serr != nil && !errors.Is(serr, ErrOutOfOrder):
			t.Fatalf("Open read the run, the Stream failed: %v", serr)
		case oerr == nil && serr == nil:
			sameIntervals(t, got, whole.Intervals)
		}
	})
}

// seedRun is a real run's latency.hlog and counters.jsonl, as fuzz seeds.
func seedRun(f *testing.F) [2][]byte {
	dir := f.TempDir()
	meta := Meta{KneeVersion: "test", ID: "r1", Source: "knee", Model: "open", Started: time.UnixMilli(1700000000123).UTC()}
	w, err := Create(dir, meta)
	if err != nil {
		f.Fatal(err)
	}
	for i := range 3 {
		if err := w.WriteInterval(snapshot(i), nil); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(meta); err != nil {
		f.Fatal(err)
	}
	h, _ := os.ReadFile(filepath.Join(dir, LatencyFile))
	c, _ := os.ReadFile(filepath.Join(dir, CountersFile))
	return [2][]byte{h, c}
}
