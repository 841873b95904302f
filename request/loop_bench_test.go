package request

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// TestFixedServerProcess is no test: fixedServerProcess runs it in a child
// process, where it serves fixedResponse until its stdin closes, so that
// a benchmark's process CPU is the client's alone.
func TestFixedServerProcess(t *testing.T) {
	if os.Getenv("KNEE_FIXED_SERVER") != "1" {
		t.Skip("the benchmarks' server process")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(ln.Addr())
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveFixed(conn)
		}
	}()
	bufio.NewReader(os.Stdin).ReadString('\n') //nolint:errcheck // EOF: the benchmark ended
	os.Exit(0)
}

// fixedServerProcess starts fixedServer's behaviour in a child process and
// returns its URL.
func fixedServerProcess(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFixedServerProcess$")
	cmd.Env = append(os.Environ(), "KNEE_FIXED_SERVER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return "http://" + strings.TrimSpace(addr)
}

// ctxSwitches counts the context switches of this process's threads.
func ctxSwitches() int64 {
	var n int64
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			var k int64
			if _, err := fmt.Sscanf(line, "voluntary_ctxt_switches: %d", &k); err == nil {
				n += k
			}
			if _, err := fmt.Sscanf(line, "nonvoluntary_ctxt_switches: %d", &k); err == nil {
				n += k
			}
		}
	}
	return n
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoopKeepAlive measures the client's CPU per keep-alive request
// (cpu-ns/op: this process's CPU; the server runs in another) with vus
// requests in flight at once, each VU starting its next request as its
// previous one ends: through the loop, and through Do with a goroutine
// per VU (the goroutine engine).
func BenchmarkLoopKeepAlive(b *testing.B) {
	url := fixedServerProcess(b)
	spec := Spec{URL: url + "/api/books/9780441172719"}
	for _, vus := range []int{1, 16} {
		b.Run(fmt.Sprintf("loop/vus=%d", vus), func(b *testing.B) {
			s := newSender(b, []Spec{spec}, Options{})
			lp := newTestLoop(b, s)
			started := 0
			for vu := range uint64(min(vus, b.N)) {
				lp.Start(vu, 0)
				started++
			}
			b.ReportAllocs()
			cpu0 := processCPU(b)
			b.ResetTimer()
			var ended []load.Ended
			for done := 0; done < b.N; {
				ended = lp.Wait(time.Time{}, ended[:0])
				for _, e := range ended {
					if e.Err != nil || e.Status != 200 {
						b.Fatalf("status %d, err %v", e.Status, e.Err)
					}
					done++
					if started < b.N {
						lp.Start(e.VU, uint64(started))
						started++
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
		b.Run(fmt.Sprintf("goroutines/vus=%d", vus), func(b *testing.B) {
			s := newSender(b, []Spec{spec}, Options{})
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ReportAllocs()
			cpu0 := processCPU(b)
			b.ResetTimer()
			for vu := range uint64(vus) {
				wg.Go(func() {
					for iter := next.Add(1); iter <= int64(b.N); iter = next.Add(1) {
						if res := s.Do(context.Background(), vu, uint64(iter)); res.Err != nil || res.Status != 200 {
							b.Errorf("status %d, err %v", res.Status, res.Err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkOpenModel measures the client's CPU per request (cpu-ns/op),
// the context switches of its threads (cs/op) and the mean send lag
// (lag-ns: Sent − intended start) at a fixed arrival rate, the open model,
// through load.Generate: on the Sender's event loop (loop) and with a
// goroutine per VU (goroutines, load.Options.GoroutineVUs).
func BenchmarkOpenModel(b *testing.B) {
	url := fixedServerProcess(b)
	spec := Spec{URL: url + "/api/books/9780441172719"}
	for _, rate := range []int{300, 1000, 2000, 10000} {
		interval := time.Second / time.Duration(rate)
		for _, goroutines := range []bool{false, true} {
			name := "loop"
			if goroutines {
				name = "goroutines"
			}
			b.Run(fmt.Sprintf("%s/%d/s", name, rate), func(b *testing.B) {
				s := newSender(b, []Spec{spec}, Options{})
				sink := &lagSink{}
				exec := load.ConstantArrivalRate{Rate: float64(rate), Duration: time.Duration(b.N) * interval, PreAllocatedVUs: 16, MaxVUs: 10000}
				n := generateCost(b, context.Background(), load.Scenario{Name: "b", Executor: exec, Iteration: s}, sink,
					load.Options{GoroutineVUs: goroutines})
				b.ReportMetric(float64(sink.lag.Load())/float64(n), "lag-ns")
				b.ReportMetric(float64(sink.dropped.Load()), "dropped")
			})
		}
	}
}

// BenchmarkClosedModel measures the client's CPU per request (cpu-ns/op)
// and the context switches of its threads (cs/op) in the closed model,
// VUs with no think time and with 1 ms, through load.Generate: on the
// Sender's event loop (loop) and with a goroutine per VU (goroutines,
// load.Options.GoroutineVUs). The run stops after b.N requests.
func BenchmarkClosedModel(b *testing.B) {
	url := fixedServerProcess(b)
	spec := Spec{URL: url + "/api/books/9780441172719"}
	for _, think := range []time.Duration{0, time.Millisecond} {
		for _, goroutines := range []bool{false, true} {
			name := "loop"
			if goroutines {
				name = "goroutines"
			}
			b.Run(fmt.Sprintf("%s/64VUs/think-%v", name, think), func(b *testing.B) {
				s := newSender(b, []Spec{spec}, Options{})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				sink := &lagSink{stopAt: int64(b.N), stop: cancel}
				exec := load.ConstantVUs{VUs: 64, Duration: time.Hour, Think: think}
				generateCost(b, ctx, load.Scenario{Name: "b", Executor: exec, Iteration: s}, sink,
					load.Options{GoroutineVUs: goroutines, GracefulStop: 5 * time.Second})
			})
		}
	}
}

// generateCost runs sc through load.Generate as the benchmark's timed part
// and reports the process's CPU and its threads' context switches per
// request; it returns the requests (at least 1). A run stopped by ctx
// (the sink's stopAt) is not a failure; a failed request is.
func generateCost(b *testing.B, ctx context.Context, sc load.Scenario, sink *lagSink, opt load.Options) int64 {
	cs0 := ctxSwitches()
	cpu0 := processCPU(b)
	b.ResetTimer()
	err := load.Generate(ctx, []load.Scenario{sc}, sink, opt)
	if err != nil && !errors.Is(err, load.ErrInterrupted) {
		b.Fatal(err)
	}
	b.StopTimer()
	n := max(sink.n.Load(), 1)
	if bad := sink.bad.Load(); bad > 0 {
		b.Fatalf("%d failed requests", bad)
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(n), "cpu-ns/op")
	b.ReportMetric(float64(ctxSwitches()-cs0)/float64(n), "cs/op")
	return n
}

// lagSink counts samples and sums their send lag; with stop set, it calls
// stop once stopAt samples are in.
type lagSink struct {
	n, lag, bad, dropped atomic.Int64
	stopAt               int64
	stop                 func()
}

func (s *lagSink) Shard() load.ShardSink { return s }
func (s *lagSink) Dropped(_ string, n int64) {
	s.dropped.Add(n)
}

func (s *lagSink) Record(smp load.Sample) {
	if s.n.Add(1) == s.stopAt && s.stop != nil {
		s.stop()
	}
	s.lag.Add(int64(smp.SendLag))
	if smp.Err != nil || smp.Status != 200 {
		s.bad.Add(1)
	}
}
