package record

import (
	"runtime"
	"testing"
	"time"
)

func TestStripeCount(t *testing.T) {
	for _, tt := range []struct{ procs, want int }{
		{1, 4}, {2, 4}, {3, 6}, {4, 8}, {8, 8}, {64, 8}, {512, 8},
	} {
		if got := stripeCount(tt.procs); got != tt.want {
			t.Errorf("stripeCount(%d) = %d, want %d", tt.procs, got, tt.want)
		}
	}
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestRecorderMemoryPerNameOn64Cores records one request name from 256
// shards (a VU pool) over two intervals on GOMAXPROCS=64 and checks that the
// recorder's memory for that name stays under 10 MB (MaxStripes × 2
// intervals × 3 metrics × ~188 KB ≈ 9 MB), where 2 × 64 uncapped stripes
// took ~146 MB, and that what it recorded is exact.
func TestRecorderMemoryPerNameOn64Cores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(64))
	const bound = 10 << 20
	t0 := time.Unix(1000, 0)

	before := heapInUse()
	r := NewRecorder(t0)
	if len(r.stripes) != MaxStripes {
		t.Fatalf("%d stripes on 64 CPUs, want the cap %d", len(r.stripes), MaxStripes)
	}
	shards := make([]*Shard, 256)
	for i := range shards {
		shards[i] = r.Shard()
	}
	key := Key{Scenario: "open", Name: "get"}
	// Interval 1: the first 64 shards (every stripe) record 1..1000 µs
	// each. Interval 2: all shards record once. Values below 2048 µs are
	// exact in knee's histograms.
	for _, sh := range shards[:64] {
		for us := 1; us <= 1000; us++ {
			d := time.Duration(us) * time.Microsecond
			sh.Record(Sample{Key: key, Latency: d, Service: d, SendLag: d, Status: 200})
		}
	}
	first := r.Rotate(t0.Add(time.Second))
	for i, sh := range shards {
		d := time.Duration(i+1) * time.Millisecond // 1..256 ms
		sh.Record(Sample{Key: key, Latency: d, Service: d, SendLag: d, Status: 200})
	}
	second := r.Rotate(t0.Add(2 * time.Second))

	// Hand values. Interval 1: 64 copies of 1..1000 µs, so the p50 is 500 µs,
	// the p99 990 µs and the max 1000 µs. Interval 2: 1..256 ms once each,
	// p50 the 128th value, 128 ms. Above 2048 µs a percentile is its
	// bucket's highest equivalent value: 128000 µs starts a bucket 64 µs
	// wide (65536..131071 µs), so the p50 reads 128.063 ms; 256000 µs
	// starts one 128 µs wide, so the max reads 256.127 ms.
	lat := func(s IntervalSnapshot) *Histogram { k := key; k.Metric = Latency; return s.Histograms[k] }
	checks := []struct {
		name     string
		h        *Histogram
		count    int64
		p50, max time.Duration
		p99      time.Duration
	}{
		{"interval 1", lat(first), 64000, 500 * time.Microsecond, 1000 * time.Microsecond, 990 * time.Microsecond},
		{"interval 2", lat(second), 256, 128063 * time.Microsecond, 256127 * time.Microsecond, 0},
	}
	for _, c := range checks {
		if c.h == nil {
			t.Fatalf("%s: no latency histogram", c.name)
		}
		if got := c.h.Count(); got != c.count {
			t.Errorf("%s: count %d, want %d", c.name, got, c.count)
		}
		if got := c.h.Percentile(50); got != c.p50 {
			t.Errorf("%s: p50 %v, want %v", c.name, got, c.p50)
		}
		if c.p99 != 0 {
			if got := c.h.Percentile(99); got != c.p99 {
				t.Errorf("%s: p99 %v, want %v", c.name, got, c.p99)
			}
		}
		if got := c.h.Max(); got != c.max {
			t.Errorf("%s: max %v, want %v", c.name, got, c.max)
		}
	}
	if got := first.Counters["open"].Requests; got != 64000 {
		t.Errorf("interval 1: %d requests, want 64000", got)
	}
	if got := second.Counters["open"].Requests; got != 256 {
		t.Errorf("interval 2: %d requests, want 256", got)
	}
	first, second = IntervalSnapshot{}, IntervalSnapshot{} // only the recorder's own memory counts

	used := heapInUse() - before
	t.Logf("recorder memory for one request name on GOMAXPROCS=64: %.1f MB (bound %.0f MB)", float64(used)/(1<<20), float64(bound)/(1<<20))
	if used > bound {
		t.Errorf("one request name costs %.1f MB on 64 CPUs, want under %.0f MB", float64(used)/(1<<20), float64(bound)/(1<<20))
	}
	runtime.KeepAlive(r)
	runtime.KeepAlive(shards)
}
