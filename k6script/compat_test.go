package k6script

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// k6's modules and script options as k6 v1.8.1 has them: its
// internal/js/jsmodules.go (stable, experimental, deprecated and removed
// modules) and the JSON keys of lib.Options, each with a value a script
// could set (not k6's default, so a refusal shows).
var (
	k6Modules = []string{
		"k6", "k6/browser", "k6/crypto", "k6/crypto/x509", "k6/data", "k6/encoding", "k6/execution", "k6/html",
		"k6/http", "k6/net/grpc", "k6/metrics", "k6/secrets", "k6/timers", "k6/websockets", "k6/ws",
		"k6/experimental/csv", "k6/experimental/fs", "k6/experimental/streams", "k6/experimental/websockets",
		"k6/experimental/redis", "k6/experimental/browser", "k6/experimental/grpc", "k6/experimental/timers",
		"k6/experimental/tracing", "k6/experimental/webcrypto",
	}
	k6Options = map[string]string{
		"paused": `true`, "vus": `2`, "duration": `"1s"`, "iterations": `3`,
		"stages":                   `[{"duration": "1s", "target": 2}]`,
		"scenarios":                `{"s": {"executor": "constant-vus", "vus": 1, "duration": "1s"}}`,
		"executionSegment":         `"0:1/2"`,
		"executionSegmentSequence": `"0,1/2,1"`,
		"noSetup":                  `true`, "setupTimeout": `"10s"`, "noTeardown": `true`, "teardownTimeout": `"10s"`,
		"rps": `10`, "dns": `{"ttl": "1m"}`, "maxRedirects": `3`, "userAgent": `"me"`, "batch": `5`,
		"batchPerHost": `2`, "httpDebug": `"full"`, "insecureSkipTLSVerify": `true`,
		"tlsCipherSuites": `["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]`, "tlsVersion": `"tls1.2"`,
		"tlsAuth": `[{"domains": ["x"], "cert": "c", "key": "k"}]`, "throw": `true`,
		"thresholds": `{"http_reqs": ["count>0"]}`, "blacklistIPs": `["10.0.0.0/8"]`,
		"blockHostnames": `["*.example.com"]`, "hosts": `{"a.test": "127.0.0.1"}`, "noConnectionReuse": `true`,
		"noVUConnectionReuse": `true`, "minIterationDuration": `"1s"`, "cloud": `{"name": "x"}`,
		"ext": `{"loadimpact": {}}`, "summaryTrendStats": `["avg", "p(99)"]`, "summaryTimeUnit": `"ms"`,
		"systemTags": `["status", "url"]`, "tags": `{"team": "a"}`, "metricSamplesBufferSize": `1000`,
		"noCookiesReset": `true`, "discardResponseBodies": `true`,
	}
)

// compatRow is one row of docs/k6.md's compatibility table: the names in
// its first cell and its state.
type compatRow struct {
	names []string
	state string
}

// readCompatTable reads docs/k6.md's "Compatibility table" tables.
func readCompatTable(t *testing.T) []compatRow {
	t.Helper()
	b, err := os.ReadFile("../docs/k6.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Compatibility table\n")
	if !ok {
		t.Fatal(`docs/k6.md has no "## Compatibility table" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	name := regexp.MustCompile("`([^`]+)`")
	var rows []compatRow
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		r := compatRow{state: strings.TrimSpace(cells[2])}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			r.names = append(r.names, m[1])
		}
		rows = append(rows, r)
	}
	return rows
}

// docs/k6.md's compatibility table names every module and option of
// k6 v1.8.1, and says of each what knee does: a module "yes" is one knee
// provides, "refused" one it stops with its own message; an option "yes"
// is one knee reads, "refused" one DecodeOptions refuses, "ignored" one it
// neither reads nor refuses.
func TestK6CompatibilityTable(t *testing.T) {
	state := map[string]string{}
	for _, r := range readCompatTable(t) {
		for _, n := range r.names {
			state[n] = r.state
		}
	}
	for _, m := range k6Modules {
		st, ok := state[m]
		switch {
		case !ok:
			t.Errorf("module %s: no row in docs/k6.md's compatibility table", m)
		case strings.HasPrefix(st, "yes"):
			if !knownModule(m) {
				t.Errorf("module %s: the table says %q, but knee does not provide it", m, st)
			}
		case strings.HasPrefix(st, "refused"):
			if _, refused := unsupported(m); !refused {
				t.Errorf("module %s: the table says %q, but knee has no message refusing it", m, st)
			}
		default:
			t.Errorf("module %s: state %q is neither yes nor refused", m, st)
		}
	}
	read := map[string]bool{"scenarios": true} // decoded on its own (json:"-")
	for _, f := range reflect.VisibleFields(reflect.TypeOf(Options{})) {
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
			read[tag] = true
			if _, ok := state[tag]; !ok {
				t.Errorf("option %s: knee reads it, but the table has no row for it", tag)
			}
		}
	}
	opts := map[string]string{"localIPs": `"10.0.0.1"`} // json:"-" in k6's lib.Options: a script cannot set it
	for k, v := range k6Options {
		opts[k] = v
	}
	for k, v := range opts {
		st, ok := state[k]
		if !ok {
			t.Errorf("option %s: no row in docs/k6.md's compatibility table", k)
			continue
		}
		_, err := DecodeOptions(json.RawMessage(`{"` + k + `": ` + v + `}`))
		refused := err != nil && strings.Contains(err.Error(), "options."+k)
		switch {
		case strings.HasPrefix(st, "yes for k6's default set"): // systemTags: the sample is another set
			if !refused {
				t.Errorf("option %s = %s: the table says %q; error %v", k, v, st, err)
			}
		case strings.HasPrefix(st, "yes"), strings.HasPrefix(st, "differs"):
			if err != nil || !read[k] {
				t.Errorf("option %s = %s: the table says %q; error %v, read by knee %v", k, v, st, err, read[k])
			}
		case strings.HasPrefix(st, "refused"):
			if !refused {
				t.Errorf("option %s = %s: the table says %q; error %v", k, v, st, err)
			}
		case strings.HasPrefix(st, "ignored"):
			if err != nil || read[k] {
				t.Errorf("option %s = %s: the table says %q; error %v, read by knee %v", k, v, st, err, read[k])
			}
		default:
			t.Errorf("option %s: state %q is none of yes, refused, ignored, differs", k, st)
		}
	}
}
