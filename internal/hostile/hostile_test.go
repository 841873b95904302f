package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/knee-dev/knee/rundir"
)

// Against every hostile target, a child knee run ends on time (wall time ≤
// duration + gracefulStop + 1 s, plus the child's own start and exit, which
// are measured against a healthy target), keeps its peak RSS (the child's
// VmHWM; not ru_maxrss, which on Linux carries the forking test process's
// own peak across exec) under 100 MB, counts the failure in its error class
// in run.json, and never panics.
func TestHostileTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 16 knee processes of about 4 s each")
	}
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED: peak RSS is read from Linux's ru_maxrss")
	}
	bin := kneetest.BuildKnee(t)
	const maxRSS = 100 << 20
	cases := []struct {
		name     string
		serve    Behavior // nil: no server (the URL says where)
		url      string   // %s is the server's host:port
		rate     int
		timeout  time.Duration
		graceful time.Duration
		classes  []string // every request must end in one of these ("ok" for no error)
		status   string   // a status class every answer must have, e.g. "3xx"
		args     []string // more flags
		dropped  int64    // at least this many iterations dropped
		okBytes  int64    // body bytes each successful request must have read
	}{
		{name: "healthy", serve: each(okAnswer), url: "http://%s/", classes: []string{"ok"}, status: "2xx"},
		{name: "never answers", serve: Silent, url: "http://%s/", classes: []string{"timeout"}},
		// Open model: 5 VUs wait out their 10 s timeouts; the other
		// iterations are dropped and counted, never queued.
		{name: "never answers, maxVUs 5", serve: Silent, url: "http://%s/", timeout: 10 * time.Second, classes: []string{"timeout", "other"},
			args: []string{"--max-vus", "5", "--pre-allocated-vus", "5"}, dropped: 30},
		{name: "a byte a second", serve: Trickle, url: "http://%s/", classes: []string{"timeout"}},
		// 1 GB each: streamed and discarded, so memory stays flat; the
		// bodies that do not finish within the timeout are timeouts.
		{name: "1 GB body", serve: HugeBody(1 << 30), url: "http://%s/", rate: 1, timeout: 3 * time.Second, graceful: 3 * time.Second, classes: []string{"ok", "timeout"}, okBytes: 1 << 30},
		// The head is bounded as net/http bounds it (10 MB): 100,000 header
		// lines of 110 bytes are refused, 100,000 of 20 bytes read and
		// discarded, memory flat either way.
		{name: "100,000 headers, 11 MB", serve: ManyHeaders(100_000, 110), url: "http://%s/", rate: 5, classes: []string{"other"}},
		{name: "100,000 headers, 2 MB", serve: ManyHeaders(100_000, 20), url: "http://%s/", rate: 5, classes: []string{"ok"}, status: "2xx"},
		{name: "20 MB header line", serve: LongHeader(20 << 20), url: "http://%s/", rate: 2, classes: []string{"other"}},
		{name: "invalid chunked framing", serve: BadChunked, url: "http://%s/", classes: []string{"other"}},
		{name: "reset mid-response", serve: Reset, url: "http://%s/", classes: []string{"reset"}},
		{name: "half-close mid-response", serve: HalfClose, url: "http://%s/", classes: []string{"reset"}},
		{name: "accepts, never reads", serve: NoRead, url: "http://%s/", classes: []string{"timeout"}},
		{name: "TLS handshake stalls", serve: NoRead, url: "https://%s/", classes: []string{"timeout"}},
		// Redirects are not followed: the 302 is the answer.
		{name: "redirect loop", serve: RedirectLoop, url: "http://%s/loop", classes: []string{"ok"}, status: "3xx"},
		{name: "nothing listens", url: "http://127.0.0.1:1/", classes: []string{"refused"}},
		{name: "DNS fails", url: "http://knee-hostile.invalid/", classes: []string{"dns"}},
	}
	const duration = 2 * time.Second
	var startup time.Duration // the healthy run's wall time beyond duration + gracefulStop
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.rate == 0 {
				tc.rate = 20
			}
			if tc.timeout == 0 {
				tc.timeout = time.Second
			}
			if tc.graceful == 0 {
				tc.graceful = time.Second
			}
			url := tc.url
			if tc.serve != nil {
				s, err := Start(tc.serve)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				url = fmt.Sprintf(tc.url, s.Addr())
			}
			out := t.TempDir()
			cmd := exec.Command(bin, "run", "--rate", fmt.Sprint(tc.rate), "--duration", duration.String(),
				"--graceful-stop", tc.graceful.String(), "--timeout", tc.timeout.String(), "--insecure",
				"--url", url, "--out", out, "--quiet")
			cmd.Args = append(cmd.Args, tc.args...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			t0 := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			peak := watchPeakRSS(cmd.Process.Pid)
			err := cmd.Wait()
			wall := time.Since(t0)
			rss := peak()
			if strings.Contains(stderr.String(), "panic") || strings.Contains(stderr.String(), "goroutine ") {
				t.Fatalf("knee panicked:\n%s", stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
				t.Fatalf("exit %d (%v), want 0 or 1:\n%s", code, err, stderr.String())
			}
			bound := duration + tc.graceful + time.Second
			if tc.name == "healthy" {
				startup = max(0, wall-duration)
			}
			t.Logf("wall %v (bound %v + start and exit %v), peak RSS %.1f MB", wall.Round(time.Millisecond), bound, startup.Round(time.Millisecond), float64(rss)/(1<<20))
			if wall > bound+startup {
				t.Errorf("wall time %v > duration %v + gracefulStop %v + 1 s + the healthy run's start and exit %v", wall, duration, tc.graceful, startup)
			}
			if rss > maxRSS {
				t.Errorf("peak RSS %.1f MB > %d MB", float64(rss)/(1<<20), maxRSS>>20)
			}

			m, err := filepath.Glob(filepath.Join(out, "*", "run.json"))
			if err != nil || len(m) != 1 {
				t.Fatalf("no run directory under %s: %v\n%s", out, err, stderr.String())
			}
			d, err := rundir.Open(filepath.Dir(m[0]))
			if err != nil {
				t.Fatal(err)
			}
			sum := d.Meta.Summary
			if sum.Requests == 0 {
				t.Fatalf("no request counted: %+v\n%s", sum, stderr.String())
			}
			var other int64
			for class, n := range sum.ErrorsByClass {
				if !slices.Contains(tc.classes, class) {
					other += n
					t.Errorf("%d requests in error class %q, want only %v", n, class, tc.classes)
				}
			}
			if !slices.Contains(tc.classes, "ok") && sum.Errors != sum.Requests {
				t.Errorf("%d errors of %d requests; every request should fail as %v (by class %v)", sum.Errors, sum.Requests, tc.classes, sum.ErrorsByClass)
			}
			if sum.DroppedIterations < tc.dropped {
				t.Errorf("%d iterations dropped, want at least %d", sum.DroppedIterations, tc.dropped)
			}
			if tc.okBytes > 0 {
				ok := sum.Requests - sum.Errors
				if in := countersBytesIn(t, filepath.Dir(m[0])); ok == 0 || in < ok*tc.okBytes {
					t.Errorf("%d successful requests read %d body bytes, want at least %d each", ok, in, tc.okBytes)
				}
			}
			if tc.status != "" {
				byStatus := countersByStatus(t, filepath.Dir(m[0]))
				if byStatus[tc.status] != sum.Requests || sum.Errors != 0 {
					t.Errorf("by status %v, errors %d of %d requests; want every one %s", byStatus, sum.Errors, sum.Requests, tc.status)
				}
			}
			t.Logf("requests %d, errors by class %v", sum.Requests, sum.ErrorsByClass)
		})
	}
}

func okAnswer(c net.Conn) error {
	_, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	return err
}

// countersByStatus sums counters.jsonl's by_status over the run.
func countersByStatus(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	sum := map[string]int64{}
	for _, ic := range readCounters(t, dir) {
		for k, v := range ic.Counters.ByStatus {
			sum[k] += v
		}
	}
	return sum
}

// watchPeakRSS polls the VmHWM (peak resident set) of process pid every
// 10 ms; the returned function stops polling and returns the highest seen,
// in bytes. The last 10 ms of the process may be missed; its peak is during
// the load, long before.
func watchPeakRSS(pid int) func() int64 {
	stop, done := make(chan struct{}), make(chan int64)
	go func() {
		var peak int64
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					var kb int64
					if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil {
						peak = max(peak, kb<<10)
					}
				}
			}
			select {
			case <-stop:
				done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 { close(stop); return <-done }
}

// countersBytesIn sums counters.jsonl's bytes_in over the run.
func countersBytesIn(t *testing.T, dir string) int64 {
	t.Helper()
	var sum int64
	for _, ic := range readCounters(t, dir) {
		sum += ic.Counters.BytesIn
	}
	return sum
}

func readCounters(t *testing.T, dir string) []rundir.IntervalCounters {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, rundir.CountersFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rundir.IntervalCounters
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ic rundir.IntervalCounters
		if err := json.Unmarshal(sc.Bytes(), &ic); err != nil {
			t.Fatalf("counters.jsonl: %v", err)
		}
		out = append(out, ic)
	}
	return out
}
