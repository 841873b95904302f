package cli

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// k6StepsCSV writes what k6's CSV output holds of a ramping-arrival-rate run
// whose rate changes at once (0 s stages): 100, 200 and 300 requests a
// second for 8 s each, every request 5 ms, spaced evenly from start. stamp
// formats a request's time as k6's timeFormat does.
func k6StepsCSV(t *testing.T, start time.Time, stamp func(time.Time) string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata")
	for step, rate := range []int64{100, 200, 300} {
		for k := range 8 * rate {
			at := start.Add(time.Duration(step)*8*time.Second + time.Duration(k*int64(time.Second)/rate))
			fmt.Fprintf(w, "http_req_duration,%s,5.000000,,,,true,,GET,GET /books,HTTP/1.1,steps,,200,,,http://127.0.0.1/books,,\n", stamp(at))
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// knee curve of another tool's stepped run, as the README shows it: start,
// step and hold given, the number of steps and the jump read from the data.
// Each step's rate is worked by hand: the measured part of a step is its
// last 6 s (8 s hold, 2 s warmup), which holds exactly 6 × rate requests in
// 6 s, so 100, 200 and 300 req/s exactly. With whole-second timestamps
// (k6's default) a request stamped s happened in [s, s+1); with RFC 3339
// ones the run starts 0.6 s into a second, so whole-second intervals
// straddle the steps' starts, and the warmup keeps them out.
func TestCurveOfK6SteppedRun(t *testing.T) {
	start := time.Unix(1700000000, 0).UTC()
	for _, tc := range []struct {
		name  string
		start time.Time
		stamp func(time.Time) string
		extra []string
	}{
		{"whole seconds, jump read from the data", start, func(at time.Time) string { return fmt.Sprint(at.Unix()) }, nil},
		{"whole seconds, --jump 0s", start, func(at time.Time) string { return fmt.Sprint(at.Unix()) }, []string{"--jump", "0s"}},
		{"RFC 3339, jump read from the data", start.Add(600 * time.Millisecond), func(at time.Time) string { return at.Format(time.RFC3339Nano) }, nil},
		{"RFC 3339, --steps 3 --jump 0s", start.Add(600 * time.Millisecond), func(at time.Time) string { return at.Format(time.RFC3339Nano) }, []string{"--steps", "3", "--jump", "0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			csv := k6StepsCSV(t, tc.start, tc.stamp)
			out := t.TempDir()
			export := filepath.Join(out, "curve.json")
			args := append([]string{"curve", csv, "--start", "100", "--step", "100", "--step-duration", "8s", "--warmup", "2s",
				"--plots", out, "--summary-export", export}, tc.extra...)
			code, _, stderr := runKnee(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			e := readCurveExport(t, export)
			if e.Plan.Steps != 3 || e.Plan.Jump != 0 || e.Plan.StepDuration != 8*time.Second {
				t.Errorf("plan %+v, want 3 steps of 8 s with no jump", e.Plan)
			}
			if len(e.Steps) != 3 {
				t.Fatalf("%d steps measured, want 3", len(e.Steps))
			}
			for i, s := range e.Steps {
				want := float64(100 * (i + 1))
				if s.OfferedRate != want || s.Rate != want {
					t.Errorf("step %d: offered %g achieved %g req/s, want %g and %g", i+1, s.OfferedRate, s.Rate, want, want)
				}
			}
		})
	}
}

// k6Steps is a k6 ramping-arrival-rate run of one step per rate, each a
// linear ramp of jump (none for 0 s stages) from the rate before to its
// own, then a hold of hold; startRate is the first rate. Iteration n
// (from 1) starts when the offered count since the start reaches n, as
// k6's executor schedules them, in whole nanoseconds.
type k6Steps struct {
	rates      []int64 // per second, one per step
	jump, hold time.Duration
	// phase is how far into the first timestamp's second the run began:
	// an import's intervals start at whole seconds, the steps do not.
	phase   time.Duration
	latency func(n int) time.Duration // of iteration n; k6 stamps a request when it ends
	dropped func(n int) bool          // iteration n found no VU (a dropped_iterations row)
}

// starts are the iterations' start times since the run began.
func (k k6Steps) starts() []time.Duration {
	var out []time.Duration
	var begin time.Duration
	done, n := 0.0, 1.0 // offered iterations before this stage; the next one
	from := float64(k.rates[0])
	for _, rate := range k.rates {
		to := float64(rate)
		if k.jump > 0 {
			j := k.jump.Seconds()
			end := done + j*(from+to)/2
			for ; n <= end+1e-9; n++ {
				// from·x + (to−from)·x²/(2j) = n − done, solved for x
				a, b, c := (to-from)/(2*j), from, -(n - done)
				x := -c / b
				if a != 0 {
					x = (-b + math.Sqrt(b*b-4*a*c)) / (2 * a)
				}
				out = append(out, begin+time.Duration(x*1e9))
			}
			done, begin = end, begin+k.jump
		}
		end := done + k.hold.Seconds()*to
		for ; n <= end+1e-9; n++ {
			out = append(out, begin+time.Duration((n-done)/to*1e9))
		}
		done, begin, from = end, begin+k.hold, to
	}
	return out
}

// write writes the run as k6's CSV output with its default time format
// (whole unix seconds) and returns the file and how many requests it
// stamped in each second since the first timestamp's.
func (k k6Steps) write(t *testing.T) (string, map[int64]int64) {
	t.Helper()
	const base = 1700000000
	path := filepath.Join(t.TempDir(), "steps.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata")
	const tags = ",,,,true,,GET,GET /books,HTTP/1.1,steps,,200,,,http://127.0.0.1/books,,"
	perSecond := map[int64]int64{}
	for i, at := range k.starts() {
		n := i + 1
		if k.dropped != nil && k.dropped(n) {
			fmt.Fprintf(w, "dropped_iterations,%d,1.000000,,,,,,,,,steps,,,,,,,\n", base+int64((k.phase+at)/time.Second))
			continue
		}
		lat := k.latency(n)
		sec := int64((k.phase + at + lat) / time.Second)
		perSecond[sec]++
		ms := float64(lat) / float64(time.Millisecond)
		fmt.Fprintf(w, "http_reqs,%d,1.000000%s\n", base+sec, tags)
		fmt.Fprintf(w, "http_req_duration,%d,%.6f%s\n", base+sec, ms, tags)
		fmt.Fprintf(w, "http_req_waiting,%d,%.6f%s\n", base+sec, ms, tags)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if perSecond[0] == 0 {
		t.Fatalf("construction: the first request is not stamped in the run's first second")
	}
	return path, perSecond
}

// The jump knee curve reads from a k6 stepped run, and the rates it then
// measures, on runs whose per-second request counts are known by
// construction. Every run begins past its first timestamp's whole second
// (phase), so every step begins inside an interval: with 0.95 s, the
// interval a step begins in holds 95 % of the step before, and counting it
// made a 0 s jump look like a 1 s one (7 steps of 9 s, which mix each
// step's rate with the next's). A step's rate is the requests stamped in
// its measured seconds (the hold after --warmup, jump included: grid seconds
// [i·period + max(warmup, jump), (i+1)·period)) over their count; for a
// steady target that is the step's rate, exactly.
func TestCurveReadsTheJumpOfK6Steps(t *testing.T) {
	// 3.7 ms: no request ends on a second's boundary, where a float could tip it over.
	steady := func(int) time.Duration { return 3700 * time.Microsecond }
	hundreds := []int64{100, 200, 300, 400, 500, 600, 700, 800}
	// 70 + 45k req/s: 1/70 s, 1/115 s ... are no whole number of nanoseconds.
	odd := []int64{70, 115, 160, 205, 250}
	rng := rand.New(rand.NewPCG(21, 3))
	lat := make([]time.Duration, 40000)
	for i := range lat {
		lat[i] = time.Millisecond + time.Duration(rng.Int64N(int64(399*time.Millisecond)))
	}
	noisy := func(n int) time.Duration { return lat[n%len(lat)] }
	// A slow target: every 7th second since the start, 1 in 5 iterations finds no VU.
	short := func(k k6Steps) func(int) bool {
		starts := k.starts()
		return func(n int) bool { return (starts[n-1]/time.Second)%7 == 3 && n%5 == 0 }
	}
	for _, tc := range []struct {
		name   string
		k      k6Steps
		steady bool // every measured second holds exactly the step's rate
	}{
		{"0 s jumps", k6Steps{rates: hundreds, hold: 8 * time.Second, phase: 950 * time.Millisecond, latency: steady}, true},
		{"1 s ramps", k6Steps{rates: hundreds, jump: time.Second, hold: 8 * time.Second, phase: 950 * time.Millisecond, latency: steady}, true},
		{"0 s jumps, on the second", k6Steps{rates: hundreds, hold: 8 * time.Second, latency: steady}, true},
		{"0 s jumps, rates that do not divide a second", k6Steps{rates: odd, hold: 8 * time.Second, phase: 937 * time.Millisecond, latency: steady}, true},
		{"1 s ramps, rates that do not divide a second", k6Steps{rates: odd, jump: time.Second, hold: 8 * time.Second, phase: 937 * time.Millisecond, latency: steady}, true},
		{"0 s jumps, noisy target", k6Steps{rates: hundreds, hold: 8 * time.Second, phase: 550 * time.Millisecond, latency: noisy}, false},
		{"1 s ramps, noisy target", k6Steps{rates: hundreds, jump: time.Second, hold: 8 * time.Second, phase: 550 * time.Millisecond, latency: noisy}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := tc.k
			if !tc.steady {
				k.dropped = short(k)
			}
			csv, perSecond := k.write(t)
			const warmup = 2 * time.Second
			out := t.TempDir()
			export := filepath.Join(out, "curve.json")
			start, step := k.rates[0], k.rates[1]-k.rates[0]
			code, _, stderr := runKnee(t, "curve", csv, "--start", fmt.Sprint(start), "--step", fmt.Sprint(step),
				"--step-duration", "8s", "--warmup", "2s", "--plots", out, "--summary-export", export)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			e := readCurveExport(t, export)
			if e.Plan.Jump != k.jump || e.Plan.Steps != len(k.rates) {
				t.Errorf("plan: jump %v, %d steps; want jump %v, %d steps", e.Plan.Jump, e.Plan.Steps, k.jump, len(k.rates))
			}
			if len(e.Steps) != len(k.rates) {
				t.Fatalf("%d steps measured, want %d", len(e.Steps), len(k.rates))
			}
			period := int64((k.jump + k.hold) / time.Second)
			for i, s := range e.Steps {
				from, to := int64(i)*period+int64(max(warmup, k.jump)/time.Second), int64(i+1)*period
				var requests int64
				for sec := from; sec < to; sec++ {
					requests += perSecond[sec]
				}
				want := float64(requests) / float64(to-from)
				if tc.steady && want != float64(k.rates[i]) {
					t.Fatalf("construction: step %d holds %g req/s, not %d", i+1, want, k.rates[i])
				}
				if s.OfferedRate != float64(k.rates[i]) || s.Rate != want {
					t.Errorf("step %d: offered %g achieved %g req/s, want %d and %g", i+1, s.OfferedRate, s.Rate, k.rates[i], want)
				}
			}
		})
	}
}
