package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/knee-dev/knee/rundir"
)

// knee run script.js --repeat 3 loads and runs the script three times, each
// into its own run directory and k6 output, and reports the repetitions:
// 3 x 5 requests reach the server, each run directory and CSV holds 5, and
// the summary export, the JUnit file and the exit code cover all three.
func TestScriptRepeat(t *testing.T) {
	srv, count := countingServer(t)
	script := writeJS(t, `import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: 1, iterations: 5, thresholds: { http_reqs: ['count==5'] } };
let perVU = 0; // init state: fresh in every repetition
export default function () {
  perVU++;
  check(http.get(__ENV.BASE + '/r?n=' + perVU), { 'status 200': (r) => r.status === 200 });
}
`)
	dir := t.TempDir()
	runs, csv := filepath.Join(dir, "runs"), filepath.Join(dir, "out.csv")
	export, junit := filepath.Join(dir, "summary.json"), filepath.Join(dir, "junit.xml")
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--repeat", "3", "--repeat-pause", "0s",
		"--out", runs, "--out", "csv="+csv, "--summary-export", export, "--junit", junit, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if n := count("/r"); n != 15 {
		t.Errorf("the server saw %d requests, want 3 x 5", n)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*-r[0-9]"))
	sort.Strings(dirs)
	if len(dirs) != 3 || !strings.HasSuffix(dirs[2], "-r3") {
		t.Fatalf("run directories %v, want three ending -r1..-r3", dirs)
	}
	for _, d := range dirs {
		r, err := rundir.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Meta.Counters; c.Requests != 5 || c.ByStatus["2xx"] != 5 {
			t.Errorf("%s: counters %+v, want 5 requests, all 2xx", d, c)
		}
	}
	for i := 1; i <= 3; i++ {
		data, err := os.ReadFile(filepath.Join(dir, "out-r"+string(rune('0'+i))+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\nhttp_req_duration,"); n != 5 {
			t.Errorf("out-r%d.csv has %d http_req_duration rows, want 5", i, n)
		}
		// The init code ran again: each repetition's first iteration is n=1.
		if !strings.Contains(string(data), "/r?n=1,") || strings.Contains(string(data), "/r?n=6") {
			t.Errorf("out-r%d.csv: the script's init state was not fresh:\n%s", i, data)
		}
	}
	if _, err := os.Stat(csv); err == nil {
		t.Errorf("%s was written besides the repetitions' files", csv)
	}
	var exp struct {
		Runs        []rundir.Summary `json:"runs"`
		Repetitions struct {
			Runs int `json:"runs"`
		} `json:"repetitions"`
	}
	data, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatal(err)
	}
	if len(exp.Runs) != 3 || exp.Runs[2].Requests != 5 || exp.Repetitions.Runs != 3 {
		t.Errorf("summary export: %d runs (%+v), repetitions over %d; want 3 of 5 requests", len(exp.Runs), exp.Runs, exp.Repetitions.Runs)
	}
	var suites struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	data, err = os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &suites); err != nil {
		t.Fatal(err)
	}
	if len(suites.Suites) != 3 || suites.Tests != 3 {
		t.Errorf("junit: %d suites, %d tests; want 3 and 3 (one threshold per repetition)", len(suites.Suites), suites.Tests)
	}
	for _, want := range []string{"== repetition 1 of 3", "== repetition 3 of 3", "checks: 100.00% of 5 passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// A threshold that fails in every repetition: all of them still run, and
	// the exit code says thresholds failed.
	code, out, stderr = runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--repeat", "2", "--repeat-pause", "0s",
		"--out", runs, "--threshold", "requests<5", "--quiet")
	if code != ExitThresholds || strings.Count(out, "FAIL  requests<5") != 2 {
		t.Errorf("exit %d, want %d, with the threshold failed twice:\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	if n := count("/r"); n != 25 {
		t.Errorf("the server saw %d requests, want 15 + 2 x 5", n)
	}
}
