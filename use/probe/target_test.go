package probe

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/knee-dev/knee/cgroup"
)

// Target.Probes checks every part of the target before anything is
// sampled, and builds one probe per part given; every error names its flag.
func TestTargetProbes(t *testing.T) {
	page := "# TYPE go_sql_in_use_connections gauge\ngo_sql_in_use_connections 3\n"
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(page)) }))
	defer metrics.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>not metrics</html>\n")) }))
	defer html.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer down.Close()
	gone := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	gone.Close()

	notCgroup := t.TempDir()
	v2 := t.TempDir() // a cgroup v2 directory, as cgroup.Open knows one
	if err := os.WriteFile(filepath.Join(v2, "cgroup.controllers"), []byte("cpu\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		target Target
		want   []string // the probes' names
		err    string   // in the error, when one is wanted
	}{
		{"nothing", Target{}, nil, ""},
		{"this process", Target{PID: os.Getpid()}, []string{"target-cpu"}, ""},
		{"gone pid", Target{PID: 999999999}, nil, "--target-pid 999999999: pid 999999999 does not exist"},
		{"negative pid", Target{PID: -3}, nil, "--target-pid -3: pid -3 does not exist"},
		{"pid and cgroup", Target{PID: os.Getpid(), Cgroup: v2}, nil, "not both"},
		{"cgroup v2", Target{Cgroup: v2}, []string{"target-cpu"}, ""},
		{"not a cgroup", Target{Cgroup: notCgroup}, nil, "--target-cgroup: " + notCgroup + " is not a cgroup"},
		{"missing cgroup", Target{Cgroup: filepath.Join(notCgroup, "none")}, nil, "--target-cgroup"},
		{"metrics", Target{Metrics: metrics.URL}, []string{"metrics"}, ""},
		{"html", Target{Metrics: html.URL}, nil, "--metrics " + html.URL + ": not a Prometheus metrics page"},
		{"503", Target{Metrics: down.URL}, nil, "answered 503 Service Unavailable"},
		{"unreachable", Target{Metrics: gone.URL}, nil, "--metrics " + gone.URL + ": unreachable"},
		{"postgres", Target{Postgres: "postgres://knee@127.0.0.1:1/knee"}, []string{"postgres"}, ""},
		{"all", Target{PID: os.Getpid(), Metrics: metrics.URL, Postgres: "postgres://127.0.0.1:1/x"}, []string{"target-cpu", "metrics", "postgres"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probes, err := tc.target.Probes(context.Background())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v; want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range probes {
				names = append(names, p.Name())
			}
			if !reflect.DeepEqual(names, tc.want) {
				t.Errorf("probes %q, want %q", names, tc.want)
			}
		})
	}

	// The cgroup probe reads the directory given; the PID probe that PID.
	p, err := Target{Cgroup: v2 + "/"}.Probes(context.Background())
	if err != nil || p[0].(*CPU).Cgroup != v2 {
		t.Errorf("cgroup probe %+v, %v; want it on %s", p, err, v2)
	}
	_, err = Target{Cgroup: notCgroup}.Probes(context.Background())
	if !errors.Is(err, cgroup.ErrNotCgroup) {
		t.Errorf("not a cgroup: %v does not wrap cgroup.ErrNotCgroup", err)
	}
	if got := (Target{PID: 42}).PIDs(); !reflect.DeepEqual(got, []int{42}) {
		t.Errorf("PIDs %v", got)
	}
	if got := (Target{}).PIDs(); got != nil {
		t.Errorf("PIDs of no process %v, want none", got)
	}
}
