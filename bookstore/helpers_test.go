package bookstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// postgresEnv names the DSN of a PostgreSQL server for the store tests;
// scripts/postgres-test.sh starts one and prints it.
const postgresEnv = "KNEE_TEST_POSTGRES"

const postgresSkip = "!!! PostgreSQL tests SKIPPED: " + postgresEnv + " is not set. " +
	"Run them with: export " + postgresEnv + "=\"$(scripts/postgres-test.sh)\" && go test ./bookstore/..."

func TestMain(m *testing.M) {
	if os.Getenv(postgresEnv) == "" {
		fmt.Fprintln(os.Stderr, postgresSkip)
	}
	os.Exit(m.Run())
}

// forEachStore runs fn as one subtest per store: SQLite always, PostgreSQL
// when postgresEnv is set (skipped loudly otherwise). Each gets a fresh,
// seeded Server built from o.
func forEachStore(t *testing.T, o Options, fn func(t *testing.T, s *Server)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		fn(t, newTestServer(t, o))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv(postgresEnv)
		if dsn == "" {
			t.Skip(postgresSkip)
		}
		o := o
		o.DB = dsn
		fn(t, newTestServer(t, o))
	})
}

func newTestServer(t testing.TB, o Options) *Server {
	t.Helper()
	s, err := New(context.Background(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// response is what a test reads back from one request.
type response struct {
	code   int
	header http.Header
	body   string
}

// do sends one request through the server's handler, in process.
func do(t testing.TB, s *Server, method, target, body string) response {
	t.Helper()
	return doCtx(t, context.Background(), s, method, target, body)
}

func doCtx(t testing.TB, ctx context.Context, s *Server, method, target, body string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequestWithContext(ctx, method, target, r)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return response{code: rec.Code, header: rec.Header(), body: rec.Body.String()}
}

// wantJSON fails unless got and want hold the same JSON value.
func wantJSON(t testing.TB, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("response is not JSON: %v: %q", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v: %q", err, want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("body\n got %s\nwant %s", gb, wb)
	}
}

// metricValue reads one sample from the server's registry: a counter or
// gauge value, or a histogram's sample count. labels must match exactly
// the pairs given (others are ignored). It fails when nothing matches.
func metricValue(t testing.TB, s *Server, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := s.Gatherer().Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				return sampleValue(m)
			}
		}
	}
	t.Fatalf("no metric %s%v", name, labels)
	return 0
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == pairs[i] && lp.GetValue() == pairs[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}
