package runner

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/request"
	"github.com/knee-dev/knee/scenario"
)

// The generator's own cost per request, in the pieces this package wires
// together. Every µs here is taken from the target when both share a
// machine; bench/README.md has the end-to-end figures against peers.
//
//	go test -run '^$' -bench . -benchmem ./runner/
//	go test -run '^$' -bench RunClosed -cpuprofile /tmp/knee.prof ./runner/ && go tool pprof -top /tmp/knee.prof

// BenchmarkRecordSample is the recording half of an iteration: load's
// Sample through the adapter into a record.Shard, from many goroutines.
func BenchmarkRecordSample(b *testing.B) {
	for _, c := range []struct {
		name string
		smp  load.Sample
	}{
		{"open", load.Sample{Scenario: "default", Result: load.Result{Name: "GET /", Status: 200, BytesIn: 2},
			Latency: 1500 * time.Microsecond, Service: 1200 * time.Microsecond, SendLag: 300 * time.Microsecond}},
		{"closed", load.Sample{Scenario: "default", Result: load.Result{Name: "GET /", Status: 200, BytesIn: 2},
			Latency: 1200 * time.Microsecond, Service: 1200 * time.Microsecond, Interval: 101 * time.Millisecond}},
	} {
		b.Run(c.name, func(b *testing.B) {
			rec := sinkAdapter{r: record.NewRecorder(time.Now())}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				sh := rec.Shard()
				smp := c.smp
				for pb.Next() {
					smp.Latency++ // spread over a few buckets, as real samples are
					sh.Record(smp)
				}
			})
		})
	}
}

// BenchmarkIteration is one whole iteration without the scheduler: a
// request.Sender's Do against a loopback server, then the recording.
func BenchmarkIteration(b *testing.B) {
	srv := httptest.NewServer(okHandler(nil))
	defer srv.Close()
	s, err := request.NewSender([]request.Spec{{URL: srv.URL + "/"}}, request.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rec := sinkAdapter{r: record.NewRecorder(time.Now())}
	var vus atomic.Uint64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		sh, vu := rec.Shard(), vus.Add(1)
		for iter := uint64(0); pb.Next(); iter++ {
			res := s.Do(context.Background(), vu, iter)
			if res.Err != nil {
				b.Error(res.Err)
				return
			}
			sh.Record(load.Sample{Scenario: "default", Result: res, Latency: res.Done.Sub(res.Sent), Service: res.Done.Sub(res.Sent)})
		}
	})
}

// BenchmarkRunClosed64 is the whole engine, as `knee run --vus 64` drives
// it: 64 VUs with no think time, interval rotation and the run directory
// included. The server stops the run after b.N requests.
func BenchmarkRunClosed64(b *testing.B) {
	benchRun(b, scenario.Flags{Executor: scenario.ConstantVUs, VUs: 64, Duration: time.Hour})
}

// BenchmarkRunOpen20k is the whole engine at 20,000 iterations/s: its
// ns/op is the schedule's 50 µs, so read its CPU profile, not its time.
func BenchmarkRunOpen20k(b *testing.B) {
	benchRun(b, scenario.Flags{Executor: scenario.ConstantArrivalRate, Rate: 20000, Duration: time.Hour, MaxVUs: 2000})
}

func benchRun(b *testing.B, f scenario.Flags) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var served atomic.Int64
	n := int64(b.N)
	srv := httptest.NewServer(okHandler(func() {
		if served.Add(1) == n {
			cancel()
		}
	}))
	defer srv.Close()
	f.URL = srv.URL + "/"
	f.GracefulStop = 5 * time.Second
	cfg, err := scenario.FromFlags(f)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Execute(ctx, cfg, Options{Dir: b.TempDir() + "/run", SkipEnvironment: true})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Summary.Errors != 0 {
		b.Fatalf("%d errors", res.Summary.Errors)
	}
	if cpu := res.Run.Meta.Env.Generator.CPUSeconds; res.Summary.Requests > 0 {
		// Server and generator share the process here: an upper bound.
		b.ReportMetric(cpu*1e6/float64(res.Summary.Requests), "cpu-µs/req")
	}
}

// okHandler answers 200 "ok", calling served (if any) for every request.
func okHandler(served func()) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("ok"))
		if served != nil {
			served()
		}
	})
}
