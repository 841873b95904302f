package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/knee-dev/knee/k6metric"
)

// What knee prints to standard output, on a real 80-column terminal (tmux,
// rows wrapped by the terminal joined back): no line is wider than 80, so
// the terminal breaks no header, word or number. knee steps prints its step
// table in the narrow form (the full one is 94 columns) with its headers
// whole, and a k6 script's "k6 metrics" block wraps between fields: each
// "name=value" stands whole on a row.
func TestNarrowTerminalOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two short loads in a terminal (about 15 s); not with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("SKIP: tmux is not installed (apt-get install tmux; scripts/test.sh installs it): the 80-column output is not tested in a real terminal")
	}
	knee := kneetest.BuildKnee(t)
	url := loopbackServer(t) + "/"
	// A short directory: the run directory's and plots' paths are printed
	// whole, and one word longer than the terminal cannot wrap.
	dir, err := os.MkdirTemp("", "kn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	script := filepath.Join(dir, "script.js")
	js := "import http from 'k6/http';\nexport const options = { vus: 2, duration: '2s' };\n" +
		"export default function () { http.get(" + strconv.Quote(url) + "); }\n"
	if err := os.WriteFile(script, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		whole []string // lines that must stand whole
		words []string // fields that must stand whole on some row
	}{
		{"steps", []string{"steps", "--start", "50", "--step", "50", "--steps", "3", "--step-duration", "2s", "--warmup", "1s", "--url", url, "--target-pid", strconv.Itoa(os.Getpid())},
			[]string{"offered/s  achieved/s", "busy VUs"}, []string{"USL fit:", "verdict:"}},
		{"k6", []string{"run", script},
			[]string{"k6 metrics (as k6 sums them; setup and teardown included)"}, []string{"http_req_duration", "max=", "p(95)="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pane := runInTmux(t, knee, append(tc.args, "--out", filepath.Join(dir, tc.name)), "")
			lines := strings.Split(pane, "\n")
			for _, line := range lines {
				if n := utf8.RuneCountInString(line); n > 80 {
					t.Errorf("line of %d columns on an 80-column terminal: %q", n, line)
				}
			}
			for _, w := range tc.whole {
				if !strings.Contains(pane, w) {
					t.Errorf("no line holds %q whole", w)
				}
			}
			for _, w := range tc.words {
				if !strings.Contains(pane, w) {
					t.Errorf("%q is not on the terminal whole", w)
				}
			}
			if tc.name == "k6" {
				// Each of k6's fields whole: a row that holds a Trend's "max="
				// ends in a unit, never in the middle of a number; a Gauge's
				// line (vus) is short: its value, min= and max= on one row.
				for _, line := range lines {
					fs := strings.Fields(line)
					if m, ok := k6metric.Lookup(strings.Join(fs[:min(len(fs), 1)], "")); ok && m.Type == k6metric.Gauge {
						if len(fs) != 4 || !strings.HasPrefix(fs[2], "min=") || !strings.HasPrefix(fs[3], "max=") {
							t.Errorf("a Gauge's line not whole: %q", line)
						}
						continue
					}
					for _, f := range fs {
						if v, ok := strings.CutPrefix(f, "max="); ok && !strings.HasSuffix(v, "s") {
							t.Errorf("max= cut: %q in %q", f, line)
						}
					}
				}
			}
			if t.Failed() {
				t.Logf("pane:\n%s", pane)
			}
		})
	}
}
