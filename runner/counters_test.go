package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
	"github.com/knee-dev/knee/scenario"
)

// run.json's counters hold what was sent, read from the file on disk after a
// real run against a loopback server whose every answer is known:
//
//	ok:   20/s for 1 s = 20 POSTs of 7 bytes, answered 200 with 2 bytes ("ok")
//	fail: 10/s for 1 s = 10 POSTs of 7 bytes, answered 500 with 4 bytes ("fail")
//	slow: 5/s for 1 s  = 5 GETs that time out after 50 ms (the server waits 1 s)
//	busy: 2/s for 3 s, one VU, each answer 750 ms late ("late", 4 bytes):
//	      iterations due at 0, 0.5, 1, 1.5, 2, 2.5 s; the VU is busy over
//	      [0, 0.75), [1, 1.75), [2, 2.75), so 3 are sent and 3 dropped (250 ms
//	      either side of every decision).
//
// Requests 20+10+5+3 = 38 (dropped iterations are not requests); by status
// 2xx 23, 5xx 10; errors 10 (5xx) + 5 (timeouts) = 15, by class timeout 5;
// dropped 3. Bytes count what went over the wire, H being the length of
// the server's host:port. Out, each request: its request line, "Host: "
// H CRLF (8 + H), "User-Agent: Go-http-client/1.1\r\n" (32), a POST's
// "Content-Length: 7\r\n" (19) and body (7), the blank line (2):
// 20 × (19+8+H+32+19+2+7) + 10 × (21+8+H+32+19+2+7) + 8 × (20+8+H+32+2)
// = 3126 + 38 H. In, each answer: its status line, net/http's Date (37),
// Content-Length (19), sniffed Content-Type (41), the blank line (2) and
// the body: 20 × (17+37+19+41+2+2) + 10 × (36+37+19+41+2+4) +
// 3 × (17+37+19+41+2+4) = 4110; the timed-out GETs got nothing.
func TestRunJSONCountersOnDisk(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte("ok"))
		case "/fail":
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte("fail"))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		case "/busy":
			time.Sleep(750 * time.Millisecond)
			w.Write([]byte("late"))
		}
	}))
	defer srv.Close()
	rate := func(r float64, d time.Duration, pre, maxVUs int) load.Executor {
		return load.ConstantArrivalRate{Rate: r, TimeUnit: time.Second, Duration: d, PreAllocatedVUs: pre, MaxVUs: maxVUs}
	}
	sc := func(name string, ex load.Executor, spec request.Spec) scenario.Scenario {
		spec.Name = name
		return scenario.Scenario{Name: name, Executor: ex, GracefulStop: 5 * time.Second, Requests: []request.Spec{spec}}
	}
	cfg := &scenario.Config{Scenarios: []scenario.Scenario{
		sc("ok", rate(20, time.Second, 5, 50), request.Spec{Method: "POST", URL: srv.URL + "/ok", Body: "payload"}),
		sc("fail", rate(10, time.Second, 5, 50), request.Spec{Method: "POST", URL: srv.URL + "/fail", Body: "payload"}),
		sc("slow", rate(5, time.Second, 5, 50), request.Spec{URL: srv.URL + "/slow", Timeout: 50 * time.Millisecond}),
		sc("busy", rate(2, 3*time.Second, 1, 1), request.Spec{URL: srv.URL + "/busy"}),
	}}
	o := opts(t)
	if _, err := runner.Execute(context.Background(), cfg, o); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(o.Dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	type counters struct {
		Requests      int64            `json:"requests"`
		Errors        int64            `json:"errors"`
		ByStatus      map[string]int64 `json:"by_status"`
		ErrorsByClass map[string]int64 `json:"errors_by_class"`
		Dropped       int64            `json:"dropped_iterations"`
		BytesIn       int64            `json:"bytes_in"`
		BytesOut      int64            `json:"bytes_out"`
	}
	var meta struct {
		Counters counters `json:"counters"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	h := int64(len(srv.Listener.Addr().String()))
	want := counters{
		Requests: 38, Errors: 15,
		ByStatus:      map[string]int64{"2xx": 23, "5xx": 10},
		ErrorsByClass: map[string]int64{"timeout": 5},
		Dropped:       3, BytesIn: 4110, BytesOut: 3126 + 38*h,
	}
	if got := meta.Counters; !reflect.DeepEqual(got, want) {
		t.Errorf("run.json counters\n got %+v\nwant %+v\n(run.json: %s)", got, want, strings.TrimSpace(string(data[:min(len(data), 400)])))
	}
}

// A resources.jsonl that cannot be written is a failure of the run (the
// error wraps ErrRunDir and names the file), not a note: the latency files
// are still written whole and the Result still carries the summary.
func TestResourcesFailureSurfaces(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	o := opts(t)
	o.Resources = true
	// A directory where resources.jsonl should be: creating the file fails.
	if err := os.MkdirAll(filepath.Join(o.Dir, "resources.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := config(srv.URL, load.ConstantArrivalRate{Rate: 20, TimeUnit: time.Second, Duration: time.Second, PreAllocatedVUs: 2, MaxVUs: 10})
	res, err := runner.Execute(context.Background(), cfg, o)
	if !errors.Is(err, runner.ErrRunDir) || !strings.Contains(fmt.Sprint(err), "resources.jsonl") {
		t.Errorf("error %v; want one wrapping ErrRunDir that names resources.jsonl", err)
	}
	if res == nil || res.Summary.Requests != 20 {
		t.Fatalf("result %+v; want the summary of the 20 requests sent", res)
	}
	r, err := rundir.Open(o.Dir)
	if err != nil {
		t.Fatalf("the latency files should be whole: %v", err)
	}
	if got := r.Counters(0, 0).Requests; got != 20 {
		t.Errorf("the run directory holds %d requests, want 20", got)
	}
}
