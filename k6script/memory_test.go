package k6script

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// Memory per VU at 1,000 VUs: each VU's runtime has run the init code of
// the article's pause.js shape and one iteration (so it holds its
// connection too). The bound is 2 MB per VU.
func TestMemoryPerVUAt1000VUs(t *testing.T) {
	if testing.Short() {
		t.Skip("initialises 1,000 runtimes; skipped in -short")
	}
	srv := okServer(t)
	s := loadScript(t, `import http from 'k6/http';
import { check, sleep } from 'k6';
const BASE_URL = __ENV.BASE;
const isbns = ['9780441172719', '9780261102217', '9780141439587', '9780451524935', '9780060850524'];
export const options = { scenarios: { open: { executor: 'constant-arrival-rate', rate: 200, timeUnit: '1s', duration: '60s', preAllocatedVUs: 50, maxVUs: 2000 } } };
export default function () {
  const isbn = isbns[Math.floor(Math.random() * isbns.length)];
  const res = http.get(BASE_URL + '/' + isbn, { tags: { name: 'GET /{isbn}' } });
  check(res, { 'book 200': (r) => r.status === 200 });
}`, map[string]string{"BASE": srv.URL})
	const n = 1000
	before := heap()
	if err := s.Prepare(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	it := s.Iteration("open", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	for id := uint64(1); id <= n; id++ {
		it.DoRecord(context.Background(), load.Start{Scenario: "open", VU: id, Called: time.Now(), Intended: time.Now()}, &got)
	}
	after := heap()
	if len(got.all) != n {
		t.Fatalf("%d requests; want one per VU (%d)", len(got.all), n)
	}
	perVU := float64(after-before) / n / (1 << 20)
	t.Logf("heap in use: %.1f MB before, %.1f MB after %d VUs: %.3f MB per VU", mb(before), mb(after), n, perVU)
	if perVU > 2 {
		t.Errorf("%.2f MB per VU; the issue's bound is 2 MB", perVU)
	}
	runtime.KeepAlive(s)
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }
