package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Thresholds gate pipelines: exit 99 when one fails, 0 when all pass, per tag too.
func TestThresholdExitCodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	base := []string{"run", "--rate", "20", "--duration", "500ms", "--url", srv.URL + "/ok", "--name", "ok", "--quiet", "--out", t.TempDir()}
	for _, tc := range []struct {
		thresholds []string
		want       int
	}{
		{[]string{"p(95)<60s", "errors<1%", "dropped_iterations==0"}, ExitOK},
		{[]string{"{name:ok}p(99)<60s", "requests==10"}, ExitOK},
		{[]string{"p(50)<0.001ms"}, ExitThresholds}, // no request takes under a microsecond
		{[]string{"requests>1000"}, ExitThresholds},
		{[]string{"{name:ok}max<0.001ms"}, ExitThresholds},
	} {
		args := append([]string{}, base...)
		for _, th := range tc.thresholds {
			args = append(args, "--threshold", th)
		}
		code, out, stderr := runKnee(t, args...)
		if code != tc.want {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.thresholds, code, tc.want, out, stderr)
		}
		if !strings.Contains(out, "thresholds") {
			t.Errorf("%v: no thresholds section in output", tc.thresholds)
		}
	}
}
