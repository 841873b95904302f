// Command merge measures what knee merge costs as runners, run length and
// request names grow, on synthetic parts written as real run directories,
// and how many bytes a runner pushes to Prometheus per second
// (--out prometheus-rw). See bench/merge/README.md.
//
//	go run ./bench/merge -runners 4,16,64 -intervals 60,600 -names 1,10
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/knee-dev/knee/merge"
	"github.com/knee-dev/knee/promrw"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

func main() {
	runners := flag.String("runners", "4,16,64", "runner counts")
	intervals := flag.String("intervals", "60,600", "run lengths in 1 s intervals")
	names := flag.String("names", "1,10", "request names per runner")
	perInterval := flag.Int("values", 250, "latencies recorded per name per interval per runner")
	dir := flag.String("dir", "", "where to write the parts (default: a temporary directory, removed)")
	whole := flag.Bool("whole", false, "read every part whole first (rundir.Open, merge.Merge), as knee merge did before it streamed")
	flag.Parse()
	if err := run(ints(*runners), ints(*intervals), ints(*names), *perInterval, *dir, *whole); err != nil {
		fmt.Fprintln(os.Stderr, "merge bench:", err)
		os.Exit(1)
	}
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "merge bench: %q is not a positive count\n", f)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

func run(runners, intervals, names []int, values int, base string, whole bool) error {
	if base == "" {
		tmp, err := os.MkdirTemp("", "knee-merge-bench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		base = tmp
	}
	pushed := map[[2]int]float64{} // push rate by (intervals, names): it does not depend on the runners
	fmt.Printf("%8s %9s %6s %12s %10s %12s %14s %12s %14s\n", "runners", "intervals", "names", "parts MB", "merge s", "peak heap MB", "merge held MB", "alloc MB", "push B/s/runner")
	for _, n := range names {
		for _, l := range intervals {
			for _, r := range runners {
				row, err := measure(filepath.Join(base, fmt.Sprintf("r%d-l%d-n%d", r, l, n)), r, l, n, values, whole, pushed)
				if err != nil {
					return err
				}
				fmt.Println(row)
			}
		}
	}
	return nil
}

// measure writes r parts of l intervals with n names each, merges them as
// knee merge does (stream every part, merge, write, read the merge back; or,
// with whole, open every part whole first) and pushes one part's intervals
// to a counting remote-write receiver. "merge held" is the heap still in use
// after the merge, which is the merged run read back (Result.Run).
func measure(dir string, r, l, n, values int, whole bool, pushed map[[2]int]float64) (string, error) {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	var parts []string
	var bytesOnDisk int64
	for i := range r {
		p := filepath.Join(dir, fmt.Sprintf("part-%d", i))
		if err := writePart(p, i, r, l, n, values, t0); err != nil {
			return "", err
		}
		parts = append(parts, p)
		for _, f := range []string{rundir.LatencyFile, rundir.CountersFile, rundir.MetaFile} {
			if st, err := os.Stat(filepath.Join(p, f)); err == nil {
				bytesOnDisk += st.Size()
			}
		}
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() { // sample the heap while merging
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	}()
	start := time.Now()
	res, err := mergeParts(parts, filepath.Join(dir, "merged"), whole)
	if err != nil {
		return "", err
	}
	took := time.Since(start)
	close(stop)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.HeapInuse > peak.Load() {
		peak.Store(after.HeapInuse)
	}
	runtime.GC()
	var held runtime.MemStats
	runtime.ReadMemStats(&held)
	heldMB := (float64(held.HeapInuse) - float64(before.HeapInuse)) / 1e6
	runtime.KeepAlive(res)
	push, err := pushRate(l, n, values, pushed)
	if err != nil {
		return "", err
	}
	os.RemoveAll(dir)
	return fmt.Sprintf("%8d %9d %6d %12.1f %10.2f %12.0f %14.0f %12.0f %14.0f", r, l, n, float64(bytesOnDisk)/1e6, took.Seconds(),
		float64(peak.Load())/1e6, heldMB, float64(after.TotalAlloc-before.TotalAlloc)/1e6, push), nil
}

// mergeParts merges as knee merge does (streaming), or reading every part
// whole first as it did before.
func mergeParts(parts []string, out string, whole bool) (*merge.Result, error) {
	if !whole {
		return merge.MergeDirs(parts, out, merge.Options{})
	}
	var dirs []*rundir.Dir
	for _, p := range parts {
		d, err := rundir.Open(p)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, d)
	}
	return merge.Merge(dirs, out, merge.Options{})
}

// writePart writes runner i's run directory: lognormal latencies around
// 20 ms with a tail, different per runner, interval and name.
func writePart(dir string, i, r, l, n, values int, t0 time.Time) error {
	meta := rundir.Meta{ID: fmt.Sprintf("part-%d", i), Source: "knee", Started: t0, Ended: t0.Add(time.Duration(l) * time.Second),
		Model: "open", Finished: true,
		Part: &rundir.Part{TestID: "bench", Segment: segment(i, r), Sequence: sequence(r), Runner: fmt.Sprintf("r%d", i),
			Interval: time.Second, T0: t0}}
	w, err := rundir.Create(dir, meta)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(i), 1))
	hs := make([]*record.Histogram, n) // reused: writing parts is not what is measured
	for j := range hs {
		hs[j] = record.NewHistogram()
	}
	for k := range l {
		snap := record.IntervalSnapshot{Start: time.Duration(k) * time.Second, End: time.Duration(k+1) * time.Second,
			Histograms: map[record.Key]*record.Histogram{}, Counters: map[string]record.Counters{}}
		for j := range n {
			h := hs[j]
			h.Reset()
			for range values {
				h.Record(time.Duration(20e6 * math.Exp(0.5*rng.NormFloat64())))
			}
			snap.Histograms[record.Key{Metric: record.Latency, Scenario: "s", Name: fmt.Sprintf("GET /api/%d", j)}] = h
		}
		snap.Counters["s"] = record.Counters{Requests: int64(values * n), ByStatus: map[string]int64{"2xx": int64(values * n)}}
		if err := w.WriteInterval(snap, nil); err != nil {
			return err
		}
	}
	return w.Close(meta)
}

// segment and sequence name runner i's share of r equal parts, as knee does.
func segment(i, r int) string {
	return frac(i, r) + ":" + frac(i+1, r)
}

func sequence(r int) string {
	pts := make([]string, r+1)
	for i := range pts {
		pts[i] = frac(i, r)
	}
	return strings.Join(pts, ",")
}

func frac(a, b int) string {
	g := gcd(a, b)
	if a == 0 {
		return "0"
	}
	if a/g == b/g {
		return "1"
	}
	return fmt.Sprintf("%d/%d", a/g, b/g)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// pushRate is the compressed bytes per second one runner pushes with n
// names, over l one-second intervals (at most 120: the rate is steady),
// measured once per (l, n) and kept in done.
func pushRate(l, n, values int, done map[[2]int]float64) (float64, error) {
	l = min(l, 120)
	if b, ok := done[[2]int{l, n}]; ok {
		return b, nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	p, err := promrw.New(srv.URL, "bench", "r0")
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(7, 7))
	t0 := time.Now()
	for k := range l {
		snap := record.IntervalSnapshot{Histograms: map[record.Key]*record.Histogram{}, Counters: map[string]record.Counters{}}
		for j := range n {
			h := record.NewHistogram()
			for range values {
				h.Record(time.Duration(20e6 * math.Exp(0.5*rng.NormFloat64())))
			}
			snap.Histograms[record.Key{Metric: record.Latency, Scenario: "s", Name: fmt.Sprintf("GET /api/%d", j)}] = h
		}
		snap.Counters["s"] = record.Counters{Requests: int64(values * n), ByStatus: map[string]int64{"2xx": int64(values * n)}}
		p.Interval(t0.Add(time.Duration(k+1)*time.Second), snap)
	}
	st := p.Close(context.Background(), time.Minute)
	if st.LastError != nil || st.Dropped > 0 {
		return 0, fmt.Errorf("push: %v, %d dropped", st.LastError, st.Dropped)
	}
	done[[2]int{l, n}] = float64(st.Bytes) / float64(l)
	return done[[2]int{l, n}], nil
}
