package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/knee-dev/knee/internal/kneetest"
)

// schemaDir holds the committed schemas (go generate ./internal/cli).
const schemaDir = "../../schema"

// checkSchema validates the JSON document data (one JSON Lines line when
// the output is Lines) against schema/<name>.json, and checks the version.
func checkSchema(t *testing.T, name, what string, data []byte) {
	t.Helper()
	if err := validateSchema(name, data); err != nil {
		t.Errorf("%s does not conform to schema/%s.json: %v", what, name, err)
	}
}

func validateSchema(name string, data []byte) error {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	path, err := filepath.Abs(filepath.Join(schemaDir, name+".json"))
	if err != nil {
		return err
	}
	sch, err := c.Compile(path)
	if err != nil {
		return fmt.Errorf("compile %s: %w", path, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(inst)
}

func checkSchemaFile(t *testing.T, name, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkSchema(t, name, path, b)
	for _, o := range JSONOutputs() {
		if o.Name == name && o.Versioned && !bytes.HasPrefix(b, fmt.Appendf(nil, "{\n  \"format_version\": %d,", ExportFormatVersion)) {
			t.Errorf("%s: format_version %d is not its first member:\n%.200s", path, ExportFormatVersion, b)
		}
	}
}

func checkSchemaLines(t *testing.T, name, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		n++
		checkSchema(t, name, fmt.Sprintf("%s:%d", path, n), sc.Bytes())
	}
	if n == 0 {
		t.Errorf("%s: no lines to validate", path)
	}
}

// runDirs lists the run directories under out.
func runDirs(t *testing.T, out string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, "*", "run.json"))
	var dirs []string
	for _, p := range m {
		dirs = append(dirs, filepath.Dir(p))
	}
	if len(dirs) == 0 {
		t.Fatalf("no run directory under %s", out)
	}
	return dirs
}

// Every JSON file knee run, analyze and compare write conforms to its
// committed schema: real outputs of real runs against a loopback server.
func TestJSONOutputsMatchSchemas(t *testing.T) {
	url := loopbackServer(t) + "/"
	dir := t.TempDir()
	out := filepath.Join(dir, "runs")
	run := func(extra ...string) {
		t.Helper()
		args := append([]string{"run", "--rate", "50", "--duration", "1s", "--url", url, "--quiet", "--out", out}, extra...)
		if code, _, stderr := runKnee(t, args...); code != 0 {
			t.Fatalf("knee %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
	summary := filepath.Join(dir, "summary.json")
	run("--summary-export", summary)
	checkSchemaFile(t, "run-summary", summary)
	first := runDirs(t, out)[0]
	checkSchemaFile(t, "run-json", filepath.Join(first, "run.json"))
	checkSchemaLines(t, "counters-line", filepath.Join(first, "counters.jsonl"))

	repeat := filepath.Join(dir, "repeat.json")
	run("--repeat", "2", "--repeat-pause", "0s", "--summary-export", repeat)
	checkSchemaFile(t, "run-repeat", repeat)

	analysis := filepath.Join(dir, "analyze.json")
	if code, _, stderr := runKnee(t, "analyze", first, "--summary-export", analysis); code != 0 {
		t.Fatalf("knee analyze: exit %d: %s", code, stderr)
	}
	checkSchemaFile(t, "analyze", analysis)

	dirs := runDirs(t, out)
	cmp := filepath.Join(dir, "compare.json")
	args := append(append([]string{"compare"}, dirs[:1]...), "--vs")
	args = append(args, dirs[1:]...)
	args = append(args, "--summary-export", cmp)
	if code, _, stderr := runKnee(t, args...); code != 0 {
		t.Fatalf("knee %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	checkSchemaFile(t, "compare", cmp)
}

// The schemas are strict enough to catch a wrong output: a missing version,
// a field of the wrong type, a field the type does not have.
func TestSchemasRejectWrongOutputs(t *testing.T) {
	good := `{"format_version": 1, "model": "open", "executor": "constant-arrival-rate", "requests": 50, "rate": 50,
		"dropped_iterations": 0, "errors": 0, "slower_than_1s": 0, "duration_s": 1, "interrupted": false,
		"latency_ms": {"min": 1, "mean": 1, "p50": 1, "p90": 1, "p95": 1, "p99": 1, "p99.9": 1, "max": 1}}`
	if err := validateSchema("run-summary", []byte(good)); err != nil {
		t.Fatalf("a hand-written valid summary is refused: %v", err)
	}
	for _, tc := range []struct{ name, old, new string }{
		{"no format_version", `"format_version": 1, `, ``},
		{"another format_version", `"format_version": 1`, `"format_version": 2`},
		{"requests as a string", `"requests": 50`, `"requests": "50"`},
		{"an unknown field", `"rate": 50`, `"rate": 50, "rps": 50`},
		{"a percentile missing", `"p99": 1, `, ``},
	} {
		bad := strings.Replace(good, tc.old, tc.new, 1)
		if bad == good {
			t.Fatalf("%s: the replacement did not apply", tc.name)
		}
		if err := validateSchema("run-summary", []byte(bad)); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// knee steps, knee curve and knee use write schema-conformant exports, and
// a stepped run's resources.jsonl lines conform too.
func TestSteppedJSONOutputsMatchSchemas(t *testing.T) {
	if testing.Short() {
		t.Skip("a stepped run of about 7 s; not with -short")
	}
	url := loopbackServer(t) + "/"
	metrics := httptest.NewServer(promhttp.Handler())
	defer metrics.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "runs")
	steps := filepath.Join(dir, "steps.json")
	if code, _, stderr := runKnee(t, "steps", "--start", "20", "--step", "20", "--steps", "2", "--step-duration", "2s", "--warmup", "1s",
		"--url", url, "--metrics", metrics.URL+"/metrics", "--quiet", "--out", out, "--summary-export", steps); code != 0 {
		t.Fatalf("knee steps: exit %d: %s", code, stderr)
	}
	checkSchemaFile(t, "steps", steps)
	run := runDirs(t, out)[0]
	checkSchemaFile(t, "run-json", filepath.Join(run, "run.json"))
	checkSchemaLines(t, "counters-line", filepath.Join(run, "counters.jsonl"))
	checkSchemaLines(t, "resources-line", filepath.Join(run, "resources.jsonl"))

	curve := filepath.Join(dir, "curve.json")
	if code, _, stderr := runKnee(t, "curve", run, "--warmup", "1s", "--summary-export", curve); code != 0 {
		t.Fatalf("knee curve: exit %d: %s", code, stderr)
	}
	checkSchemaFile(t, "steps", curve)

	useJSON := filepath.Join(dir, "use.json")
	if code, _, stderr := runKnee(t, "use", "--duration", "2s", "--metrics", metrics.URL+"/metrics", "--summary-export", useJSON); code != 0 {
		t.Fatalf("knee use: exit %d: %s", code, stderr)
	}
	checkSchemaFile(t, "use", useJSON)
}

// knee lab co's exports, single and repeated, conform to their schemas: a
// real Bookstore, started by a real knee process, frozen for 1 s.
func TestLabCOJSONOutputsMatchSchemas(t *testing.T) {
	if testing.Short() {
		t.Skip("two lab co experiments of about 10 s each; not with -short")
	}
	knee := kneetest.BuildKnee(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		schema string
		extra  []string
	}{
		{"lab-co", nil},
		{"lab-co-repeat", []string{"--repeat", "2", "--repeat-pause", "0s"}},
	} {
		export := filepath.Join(dir, tc.schema+".json")
		args := append([]string{"lab", "co", "--duration", "3s", "--freeze-at", "1s", "--freeze-for", "1s", "--rate", "50", "--vus", "5",
			"--quiet", "--out", filepath.Join(dir, "runs"), "--summary-export", export}, tc.extra...)
		if out, err := exec.Command(knee, args...).CombinedOutput(); err != nil {
			t.Fatalf("knee %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		checkSchemaFile(t, tc.schema, export)
	}
}
