package k6script

import (
	"context"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

type discard struct{}

func (discard) Record(load.Sample) {}

// One iteration of a one-request script (http.get + check), on one VU.
func BenchmarkIteration(b *testing.B) {
	srv := okServer(&testing.T{})
	defer srv.Close()
	s := loadScriptB(b, `import http from 'k6/http';
import { check } from 'k6';
export default function () {
  const res = http.get(__ENV.BASE + '/');
  check(res, { 'status 200': (r) => r.status === 200 });
}`, map[string]string{"BASE": srv.URL})
	it := s.Iteration("b", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		it.DoRecord(ctx, load.Start{Scenario: "b", VU: 1, Iter: uint64(i), Called: time.Now()}, discard{})
	}
}

// Making one VU: a runtime running the init code of a small script.
func BenchmarkNewVU(b *testing.B) {
	s := loadScriptB(b, `import http from 'k6/http';
import { check } from 'k6';
const isbns = ['9780441172719', '9780261102217', '9780141439587', '9780451524935', '9780060850524'];
export const options = { scenarios: { s: { executor: 'ramping-arrival-rate', startRate: 100, stages: [{ target: 100, duration: '1s' }], preAllocatedVUs: 50, maxVUs: 2000 } } };
export default function () { check(http.get('http://127.0.0.1:1/' + isbns[0]), { ok: (r) => r.status === 200 }); }`, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.newVU(context.Background(), 1); err != nil {
			b.Fatal(err)
		}
	}
}
