package cli

import (
	"bufio"
	"fmt"
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
