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
