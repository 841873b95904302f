package k6script

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// tagServers are a plain and a TLS target: /missing answers 404, the rest 200.
func tagServers(t *testing.T) (plain, secure *httptest.Server) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
	})
	plain, secure = httptest.NewServer(h), httptest.NewTLSServer(h)
	t.Cleanup(plain.Close)
	t.Cleanup(secure.Close)
	return plain, secure
}

// runTagged loads src, makes the submetrics of keys (http_reqs' counts),
// runs setup() and one iteration of scenario sc, and returns each key's
// count.
func runTagged(t *testing.T, src string, env map[string]string, keys []string) map[string]float64 {
	t.Helper()
	s := loadScript(t, src, env)
	all := map[string][]string{}
	for _, k := range keys {
		all[k] = []string{"count>=0"}
	}
	_, own, err := s.SplitThresholds(all)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	it := s.Iteration("sc", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	it.DoRecord(context.Background(), load.Start{Scenario: "sc", VU: 1, Called: time.Now()}, &got)
	if n, first := s.IterationErrors(); n != 0 {
		t.Fatalf("iteration error: %s", first)
	}
	counts := map[string]float64{}
	for _, o := range own {
		st, _ := s.k6.Stat(o.Series)
		counts[o.Expr[:strings.LastIndex(o.Expr, ": ")]] = st.Sum
	}
	return counts
}

// The tags k6 v1.8.1 puts on an HTTP request's samples
// (lib/netext/httpext/transport.go measureAndEmitMetrics, with the VU's
// tags of internal/js/runner.go and the group of runPart), worked out by
// hand for each request of the script, select the samples of a
// submetric as k6's do. setup() sends 1 request, the iteration 5:
// TLS 200, a URL with user:password 200, a 404 named "miss", a refused
// connection, and an http.url template.
func TestSubmetricsSelectK6SystemTags(t *testing.T) {
	plain, secure := tagServers(t)
	host := strings.TrimPrefix(plain.URL, "http://")
	src := `import http from 'k6/http';
export const options = {
  insecureSkipTLSVerify: true,
  tags: { env: 'g' },
  scenarios: { sc: { executor: 'shared-iterations', tags: { env: 's' } } },
};
export function setup() { http.get(__ENV.BASE + '/setup'); }
export default function () {
  http.get(__ENV.TLS + '/ok');
  http.get(__ENV.BASE.replace('http://', 'http://u:p@') + '/ok');
  http.get(__ENV.BASE + '/missing', { tags: { name: 'miss' } });
  http.get('http://127.0.0.1:1/');
  http.get(http.url` + "`${__ENV.BASE}/item/${1}`" + `);
}`
	for _, tt := range []struct {
		key  string
		want float64
	}{
		{"http_reqs", 6},
		{"http_reqs{tls_version:tls1.3}", 1}, // only over TLS, without error
		{"http_reqs{proto:HTTP/1.1}", 5},     // every response; none for the refused one
		{"http_reqs{status:200}", 4},
		{"http_reqs{status:0}", 1},
		{"http_reqs{error_code:1212}", 1},
		{"http_reqs{error_code:1404}", 1},
		{"http_reqs{error:dial: connection refused}", 1},
		{"http_reqs{url:http://****:****@" + host + "/ok}", 1}, // k6's URL.Clean
		{"http_reqs{name:miss}", 1},
		{"http_reqs{url:miss}", 1}, // url takes the name given
		{"http_reqs{name:${}/item/${}}", 1},
		{"http_reqs{group:::setup}", 1}, // k6 runs setup() in its group
		{"http_reqs{group: }", 5},       // the root group's tag is ""
		{"http_reqs{env:g}", 1},         // setup has no scenario, so not its tags
		{"http_reqs{env:s,scenario:sc}", 5},
		{"http_reqs{expected_response:false}", 2},
	} {
		t.Run(tt.key, func(t *testing.T) {
			counts := runTagged(t, src, map[string]string{"BASE": plain.URL, "TLS": secure.URL}, []string{tt.key})
			if got := counts[tt.key]; got != tt.want {
				t.Errorf("%s counts %g; want %g", tt.key, got, tt.want)
			}
		})
	}
}

// A name tag set anywhere (options.tags, a scenario's tags, params.tags)
// is the request's name and url in k6 (transport.go: nameTagManuallySet),
// the narrowest winning (params over the scenario's over options'), and
// an http.url template names the request only when no name is set
// (httpext/request.go MakeRequest).
func TestNameTagFromEveryLevel(t *testing.T) {
	plain, _ := tagServers(t)
	for _, tt := range []struct {
		name, options, call string
		want                string // the name and url tags
	}{
		{"URL", `{}`, `http.get(__ENV.BASE + '/a')`, plain.URL + "/a"},
		{"options.tags", `{ tags: { name: 'o' } }`, `http.get(__ENV.BASE + '/a')`, "o"},
		{"scenario tags over options.tags", `{ tags: { name: 'o' }, scenarios: { sc: { executor: 'shared-iterations', tags: { name: 's' } } } }`,
			`http.get(__ENV.BASE + '/a')`, "s"},
		{"params over scenario", `{ scenarios: { sc: { executor: 'shared-iterations', tags: { name: 's' } } } }`,
			`http.get(__ENV.BASE + '/a', { tags: { name: 'p' } })`, "p"},
		{"options.tags over an http.url template", `{ tags: { name: 'o' } }`, "http.get(http.url`${__ENV.BASE}/a/${1}`)", "o"},
		{"an http.url template", `{}`, "http.get(http.url`${__ENV.BASE}/a/${1}`)", "${}/a/${}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := "import http from 'k6/http';\nexport const options = " + tt.options + ";\nexport default function () { " + tt.call + "; }\n"
			keys := []string{"http_reqs{name:" + tt.want + "}", "http_reqs{url:" + tt.want + "}"}
			counts := runTagged(t, src, map[string]string{"BASE": plain.URL}, keys)
			for _, k := range keys {
				if counts[k] != 1 {
					t.Errorf("%s counts %g; want 1", k, counts[k])
				}
			}
		})
	}
}

// k6's CSV output writes a request's tags as its samples have them: url
// is the name given, tls_version over TLS, the custom tags (options',
// the scenario's, the params') in extra_tags.
func TestCSVRequestRowHasItsTags(t *testing.T) {
	_, secure := tagServers(t)
	var buf bytes.Buffer
	s := loadScript(t, `import http from 'k6/http';
export const options = { insecureSkipTLSVerify: true, tags: { env: 'g' } };
export default function () { http.get(__ENV.TLS + '/ok', { tags: { name: 'n', team: 'a' } }); }`, map[string]string{"TLS": secure.URL})
	iterateInto(t, s, NewCSVOutput(nopCloser{&buf}))
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	want := map[string]string{"name": "n", "url": "n", "tls_version": "tls1.3", "status": "200", "scenario": "x",
		"extra_tags": "env=g&team=a", "expected_response": "true", "method": "GET"}
	n := 0
	for _, r := range rows[1:] {
		if r[0] != "http_reqs" {
			continue
		}
		n++
		for c, w := range want {
			if r[col[c]] != w {
				t.Errorf("http_reqs row: %s = %q; want %q", c, r[col[c]], w)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d http_reqs rows; want 1", n)
	}
}

// k6's JSON output writes a sample's tags whole (its TagSet): a request
// and an iteration at the top level have "group": "", beside the custom
// tags.
func TestJSONPointHasEveryTag(t *testing.T) {
	plain, _ := tagServers(t)
	var buf bytes.Buffer
	s := loadScript(t, `import http from 'k6/http';
export default function () { http.get(__ENV.BASE + '/ok', { tags: { team: 'a' } }); }`, map[string]string{"BASE": plain.URL})
	iterateInto(t, s, NewJSONOutput(nopCloser{&buf}))
	want := map[string]map[string]string{
		"http_reqs":  {"group": "", "scenario": "x", "team": "a", "status": "200"},
		"iterations": {"group": "", "scenario": "x"},
	}
	seen := map[string]bool{}
	for _, p := range jsonLines(t, buf.String()) {
		w, ok := want[p.Metric]
		if p.Type != "Point" || !ok {
			continue
		}
		seen[p.Metric] = true
		for k, v := range w {
			if got, ok := p.Data.Tags[k]; !ok || got != v {
				t.Errorf("%s: tag %s = %q (present %v); want %q", p.Metric, k, got, ok, v)
			}
		}
	}
	if len(seen) != len(want) {
		t.Errorf("points of %v; want %d metrics", seen, len(want))
	}
}

// iterateInto runs one iteration of s's default function, as VU 1 of
// scenario "x", with its samples written to o, and closes o.
func iterateInto(t *testing.T, s *Script, o *Output) {
	t.Helper()
	s.SetOutput(o)
	iterateOnce(t, s)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
}

// jsonLine is a line of k6's JSON output as the tag tests read it.
type jsonLine struct {
	Type, Metric string
	Data         struct{ Tags map[string]string }
}

// jsonLines reads k6's JSON output, a JSON object per line.
func jsonLines(t *testing.T, out string) []jsonLine {
	t.Helper()
	var ls []jsonLine
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l jsonLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		ls = append(ls, l)
	}
	return ls
}
