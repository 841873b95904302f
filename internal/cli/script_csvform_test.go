package cli

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// --out csv=fileName=F,timeFormat=T, k6's long form: the file is F and
// every row's timestamp is written in T, an instant within the run.
func TestScriptCSVOutLongForm(t *testing.T) {
	srv, _ := countingServer(t)
	script := writeJS(t, `import http from 'k6/http';
export const options = { iterations: 3 };
export default function () { http.get(__ENV.BASE + '/x'); }
`)
	for _, c := range []struct {
		format string
		parse  func(string) (time.Time, error)
	}{
		{"rfc3339_nano", func(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }},
		{"unix_milli", func(s string) (time.Time, error) {
			n, err := strconv.ParseInt(s, 10, 64)
			return time.UnixMilli(n), err
		}},
	} {
		file := filepath.Join(t.TempDir(), "k6.csv")
		before := time.Now().Add(-time.Second)
		code, out, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--out", "csv=fileName="+file+",timeFormat="+c.format, "--quiet")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", c.format, code, out, stderr)
		}
		after := time.Now().Add(time.Second)
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		reqs := 0
		for _, r := range rows[1:] {
			at, err := c.parse(r[1])
			if err != nil || at.Before(before) || at.After(after) {
				t.Errorf("%s: timestamp %q (%v, %v) is not an instant of the run", c.format, r[1], at, err)
			}
			if r[0] == "http_reqs" {
				reqs++
			}
		}
		if reqs != 3 {
			t.Errorf("%s: %d http_reqs rows; want 3", c.format, reqs)
		}
	}
	code, _, stderr := runKnee(t, "run", script, "-e", "BASE="+srv.URL, "--out", t.TempDir(), "--out", "csv=fileName=x.csv,timeFormat=hours", "--quiet")
	if code != 2 {
		t.Errorf("a bad timeFormat exits %d; want 2\n%s", code, stderr)
	}
}
