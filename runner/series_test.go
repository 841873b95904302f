package runner_test

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/runner"
)

// TestUniqueURLsBounded: a k6 script that makes every URL unique (the
// everyday http.get(BASE + '/item/' + __VU + '-' + __ITER)) keeps 200 names
// apart and folds the rest into "(other)", says so naming the first folded
// URL and the name tag, and its heap stays bounded: the heap in use, sampled
// through the run, stays under 150 MB (generous: 36 MB measured; it reached 1.5 GB in 11 s
// when every URL was a series of ~1.7 MB).
func TestUniqueURLsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a 4 s run; skipped in -short")
	}
	kneetest.SkipUnderRace(t)
	addr, _ := startTarget(t)
	src := `import http from 'k6/http';
export const options = { vus: 4, duration: '4s' };
export default function () { http.get(__ENV.BASE + '/item/' + __VU + '-' + __ITER); }
`
	s, plan := loadScript(t, src, "http://"+addr)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	res, err := runner.ExecuteScript(context.Background(), s, plan, runOpts(t))
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	var other int64
	for _, iv := range res.Run.Intervals {
		for k, h := range iv.Histograms {
			if k.Metric == record.Latency {
				names[k.Name] = true
				if k.Name == record.OtherName {
					other += h.Count()
				}
			}
		}
	}
	n := res.Summary.Requests
	if n < 1000 || len(names) != record.DefaultMaxSeries+1 || other != n-record.DefaultMaxSeries {
		t.Errorf("%d requests, %d names, %d in (other); want >= 1000, 201 and all but the first 200", n, len(names), other)
	}
	note := strings.Join(res.Notices, "\n")
	if !strings.Contains(note, `more than 200 distinct`) || !strings.Contains(note, "/item/") || !strings.Contains(note, "tags: {name:") {
		t.Errorf("notices %q; want the fold named, with its first URL and the name tag", res.Notices)
	}
	t.Logf("%d requests, peak heap in use %.0f MB", n, float64(peak.Load())/(1<<20))
	if p := peak.Load(); p > 150<<20 {
		t.Errorf("peak heap in use %.0f MB, want < 150 MB", float64(p)/(1<<20))
	}
}
