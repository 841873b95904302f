package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// Each group's durations are k6's group_duration, a time Trend tagged with
// the group's path: summed through the recorder, shown in the summary and
// judged by thresholds. A 50 ms sleep bounds the login group from below.
func TestScriptGroupDuration(t *testing.T) {
	script := writeJS(t, `import { group, sleep } from 'k6';
export const options = { vus: 2, iterations: 4, thresholds: {
  'group_duration{group:::login}': ['min>=45', 'p(95)<60000'],
  'group_duration{group:::outer::inner}': ['max<0'],
} };
export default function () {
  group('login', () => { sleep(0.05); });
  group('outer', () => { group('inner', () => {}); });
}
`)
	code, out, stderr := runKnee(t, "run", script, "--out", t.TempDir(), "--quiet")
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (max<0 cannot hold)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	for _, want := range []string{
		"group_duration{group:::login} count=4 ", "group_duration{group:::outer} count=4 ", "group_duration{group:::outer::inner} count=4 ",
		"PASS  group_duration{group:::login}: min>=45", "PASS  group_duration{group:::login}: p(95)<60000",
		"FAIL  group_duration{group:::outer::inner}: max<0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
}

// Requests are tagged with their group, as in k6: the k6 durations of the
// requests sent directly in a group form http_req_duration{group:::PATH},
// which thresholds can judge; a request outside every group is in none, and
// a nested group's requests are in the nested group's series only.
func TestScriptGroupRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(40 * time.Millisecond)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	script := writeJS(t, `import http from 'k6/http';
import { group } from 'k6';
export const options = { vus: 1, iterations: 3, thresholds: {
  'http_req_duration{group:::slow}': ['min>=40', 'max<0'],
  'http_reqs': ['count==15'],
} };
export default function () {
  group('slow', () => { http.get(__ENV.BASE + '/slow'); });
  group('outer', () => {
    http.get(__ENV.BASE + '/fast');
    group('inner', () => { http.get(__ENV.BASE + '/fast'); http.get(__ENV.BASE + '/fast'); });
  });
  http.get(__ENV.BASE + '/fast');
}
`)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--quiet", "--junit", junit)
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (max<0 cannot hold)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	if strings.Count(out, "thresholds\n") != 1 {
		t.Errorf("the thresholds are not one block:\n%s", out)
	}
	// The script's own thresholds (on the group's series) are in the JUnit
	// file beside the run's: 3 cases, 1 failure.
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if x := string(data); !strings.Contains(x, `tests="3" failures="1"`) || !strings.Contains(x, "http_req_duration{group:::slow}: max&lt;0") {
		t.Errorf("junit lacks the script's own thresholds:\n%s", x)
	}
	for _, want := range []string{
		"http_req_duration{group:::slow} count=3 ", "http_req_duration{group:::outer} count=3 ",
		"http_req_duration{group:::outer::inner} count=6 ",
		"PASS  http_req_duration{group:::slow}: min>=40", "FAIL  http_req_duration{group:::slow}: max<0",
		"PASS  http_reqs: count==15",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
	if strings.Contains(out, "http_req_duration{group:}") || strings.Contains(out, "http_req_duration{group:::} ") {
		t.Errorf("a request outside every group was put in a group series:\n%s", out)
	}
}

// http_req_failed follows k6's rule (a transport error or a status of 400
// or more), while knee's own errors stay transport errors and 5xx: of four
// iterations of /ok, /missing (404) and /broken (500), 8 of 12 requests
// failed for k6 and 4 are knee's errors.
func TestScriptHTTPReqFailedIsK6s(t *testing.T) {
	srv := statusServer(t)
	script := writeJS(t, `import http from 'k6/http';
export const options = { vus: 1, iterations: 4, thresholds: {
  'http_req_failed': ['rate>0.66', 'rate<0.67'],
} };
export default function () {
  for (const p of ['/ok', '/missing', '/broken']) http.get(__ENV.BASE + p);
}
`)
	export := filepath.Join(t.TempDir(), "summary.json")
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--quiet",
		"--threshold", "errors==0.3333333333333333", "--threshold", "failed<8%", "--summary-export", export)
	if code != ExitThresholds {
		t.Fatalf("exit %d; want %d (failed<8%% cannot hold)\n%s\n%s", code, ExitThresholds, out, stderr)
	}
	for _, want := range []string{
		"PASS  http_req_failed: rate>0.66", "PASS  http_req_failed: rate<0.67",
		"PASS  errors==0.3333333333333333", "FAIL  failed<8%",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
}

// A response callback decides http_req_failed, as in k6: the VU's
// (http.setResponseCallback) for every request without its own, a
// request's responseCallback param for that request, null turning the
// check off. Per iteration: /ok and /missing are expected by the VU's
// callback (200, 404), /broken is not, /broken with {min: 500, max: 599}
// is, /missing with null is not judged: k6 (httpext transport) then writes
// no http_req_failed value, so k6's rate is 1 failed of 4, 2 of 8 in two
// iterations (0.25), and the k6 CSV has 8 http_req_failed rows; knee's
// counters.failed counts 2 of its 10 requests; knee's errors (5xx) are 4
// of 10 whatever the callbacks say.
func TestScriptResponseCallback(t *testing.T) {
	srv := statusServer(t)
	script := writeJS(t, `import http from 'k6/http';
http.setResponseCallback(http.expectedStatuses(200, 404));
export const options = { vus: 1, iterations: 2, thresholds: { http_req_failed: ['rate==0.25'] } };
export default function () {
  const B = __ENV.BASE;
  http.get(B + '/ok');
  http.get(B + '/missing');
  http.get(B + '/broken');
  http.get(B + '/broken', { responseCallback: http.expectedStatuses({ min: 500, max: 599 }) });
  http.get(B + '/missing', { responseCallback: null });
}
`)
	runs, csv := t.TempDir(), filepath.Join(t.TempDir(), "out.csv")
	code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", runs, "--out", "csv="+csv, "--quiet")
	if code != ExitOK || !strings.Contains(out, "PASS  http_req_failed: rate==0.25") {
		t.Fatalf("exit %d, want 0 with http_req_failed 2 of 8\n%s\n%s", code, out, stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	r, err := rundir.Open(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Meta.Counters; c.Requests != 10 || c.Failed != 2 || c.Errors != 4 {
		t.Errorf("counters %+v: want 10 requests, 2 failed, 4 errors", c)
	}
	data, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\nhttp_req_failed,"); n != 8 {
		t.Errorf("%d http_req_failed rows, want 8 (none for the null callback's 2)", n)
	}
	failed := 0
	for _, line := range strings.Split(string(data), "\n") {
		// metric_name,timestamp,metric_value,check,error,error_code,expected_response,...
		if f := strings.Split(line, ","); f[0] == "http_req_failed" && f[2] == "1.000000" && f[6] == "false" { // k6 writes %f
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("%d failed http_req_failed rows in the k6 CSV, want 2:\n%s", failed, data)
	}
}

// statusServer answers /missing with 404, /broken with 500 and the rest
// with 200.
func statusServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		case "/broken":
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
