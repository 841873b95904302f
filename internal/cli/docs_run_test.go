package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/knee-dev/knee/bookstore"
)

// docRun says how TestDocsCommandsRun treats the knee commands of a docs/
// file that start with prefix: run here, checked for want in what they
// print, or run by another test, named in covered with the reason.
type docRun struct {
	file, prefix string
	want         string // printed by the command when it did its job
	covered      string // "dir TestName: why": another test runs it instead
}

var docRuns = []docRun{
	{file: "analysis.md", prefix: "knee analyze runs/", want: "latency"},
	{file: "analysis.md", prefix: "knee analyze results.csv", want: "latency"},
	{file: "analysis.md", prefix: "knee analyze results.json", want: "latency"},
	{file: "analysis.md", prefix: "knee analyze latencies.hlog", want: "latency"},
	{file: "analysis.md", prefix: "knee analyze values.txt", want: "latency"},
	{file: "analysis.md", prefix: "knee analyze closed.csv --think", want: "LIKELY COORDINATED OMISSION"},
	{file: "analysis.md", prefix: "knee analyze closed.csv --expected-interval", want: "LIKELY COORDINATED OMISSION"},
	{file: "analysis.md", prefix: "knee import results.csv", want: "imported"},
	{file: "analysis.md", prefix: "knee tail", want: "18.2 %"}, // 1-(1-0.01)^20, by hand
	{file: "k6.md", prefix: "knee run pause.js", want: "checks"},
	{file: "k6.md", prefix: "knee run steps.js", want: "checks"},
	{file: "k6.md", prefix: "knee curve steps.csv", want: "knee"},
	{file: "k6.md", prefix: "knee run script.js", covered: "internal/cli TestRunScriptRemoteModulesOffline: https:// imports need a TLS server the process trusts, which that test sets up"},
	{file: "knee-and-bottleneck.md", prefix: "knee steps", want: "knee:"},
	{file: "knee-and-bottleneck.md", prefix: "knee curve runs/", want: "knee"},
	{file: "knee-and-bottleneck.md", prefix: "knee curve results.csv", want: "knee"},
	{file: "knee-and-bottleneck.md", prefix: "knee use", want: "USE"},
	{file: "lab.md", prefix: "knee lab serve", covered: "internal/cli TestLabServeGuarded: a server that runs until stopped"},
	{file: "lab.md", prefix: "knee lab co", covered: "lab TestCOShape: the experiment as lab co runs it, a minute of load"},
	{file: "lab.md", prefix: "knee lab curve", covered: "lab TestCurveExperiment: minutes of stepped load"},
	{file: "lab.md", prefix: "knee lab pool", covered: "lab TestPoolExperiment: minutes of stepped load"},
	{file: "lab.md", prefix: "knee thaw", want: ""},
	{file: "many-runners.md", prefix: "knee", covered: "k8s TestRehearsal: runs this file's sequence line by line against a stand-in cluster"},
	{file: "reports.md", prefix: "knee report runs/R1", want: ""},
	{file: "reports.md", prefix: "knee compare", want: "candidate"},
	{file: "run.md", prefix: "knee run --executor constant-arrival-rate", want: "Open model"},
	{file: "run.md", prefix: "knee run --executor constant-vus", want: "Closed model"},
	{file: "run.md", prefix: "knee run --executor ramping-arrival-rate", want: "Open model"},
	{file: "run.md", prefix: "knee run scenario.yaml", want: "closed"},
}

// Every knee command in docs/ runs, as a reader types it, against a
// Bookstore of the test's own, or is named as run by another test (docRuns
// says which and why; a command in neither fails, and so does an entry
// that matches nothing). What a test cannot take as written is changed as
// TestReadmeTasksRun changes it (docArgs): the address, durations, the
// freeze, files.
func TestDocsCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the docs' commands take about a minute")
	}
	addr := testBookstore(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	d := &docEnv{t: t, addr: addr, root: root}
	t.Chdir(t.TempDir()) // the commands' files and runs/ where a reader's would be: here
	home := t.TempDir()  // knee thaw's state, the module cache
	d.fixtures()

	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	used := map[int]bool{}
	ran := 0
	for _, f := range files {
		cmds, lines := docCommands(t, f)
		for i, words := range cmds {
			where := "docs/" + filepath.Base(f) + ":" + strconv.Itoa(lines[i])
			text := strings.Join(words, " ")
			k := slices.IndexFunc(docRuns, func(r docRun) bool {
				return r.file == filepath.Base(f) && strings.HasPrefix(text, r.prefix)
			})
			if k < 0 {
				t.Errorf("%s: %s is neither run here nor named as run by another test: add it to docRuns", where, text)
				continue
			}
			used[k] = true
			r := docRuns[k]
			if r.covered != "" {
				checkTestExists(t, root, where, r.covered)
				continue
			}
			args := d.args(where, words)
			code, stdout, stderr := runKneeEnv(t, map[string]string{"HOME": home}, args...)
			if code == ExitThresholds && slices.ContainsFunc(args, isLatencyThreshold) {
				// A latency threshold passes or fails with the machine's
				// load (another test's, in CI): the command ran as written.
				t.Logf("%s: knee %s: a latency threshold failed on this machine (exit 99)", where, strings.Join(args, " "))
				code = ExitOK
			}
			if code != ExitOK {
				t.Errorf("%s: knee %s: exit %d\nstdout:\n%s\nstderr:\n%s", where, strings.Join(args, " "), code, stdout, stderr)
				continue
			}
			ran++
			if r.want != "" && !strings.Contains(stdout+stderr, r.want) {
				t.Errorf("%s: knee %s printed no %q:\n%s\n%s", where, strings.Join(args, " "), r.want, stdout, stderr)
			}
			d.noteRuns()
		}
	}
	for k, r := range docRuns {
		if !used[k] {
			t.Errorf("docRuns entry %s %q matches no command of docs/: remove it", r.file, r.prefix)
		}
	}
	t.Logf("%d commands of docs/ ran", ran)
	if ran < 20 {
		t.Errorf("%d commands of docs/ ran, want 20 at least", ran)
	}
}

// isLatencyThreshold reports whether a command-line word is a threshold
// on a percentile, such as p(95)<200ms.
func isLatencyThreshold(w string) bool { return strings.HasPrefix(w, "p(") && strings.Contains(w, "<") }

// testBookstore starts a Bookstore (embedded SQLite) on loopback for the
// test and returns its address; the test's end stops it.
func testBookstore(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := bookstore.New(ctx, bookstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "http://")
}

// checkTestExists fails unless covered ("dir TestName: why") names a test
// function that exists in dir.
func checkTestExists(t *testing.T, root, where, covered string) {
	t.Helper()
	dir, rest, _ := strings.Cut(covered, " ")
	name, _, _ := strings.Cut(rest, ":")
	tests, _ := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err == nil && bytes.Contains(b, []byte("func "+name+"(t *testing.T)")) {
			return
		}
	}
	t.Errorf("%s: said to be run by %s in %s, which has no such test", where, name, dir)
}

// docEnv is what the docs' commands share: the Bookstore's address, the
// repository's root, and the runs made so far (under runs/ in the working
// directory, a temporary folder, as the reader's would be).
type docEnv struct {
	t    *testing.T
	addr string
	root string
	runs []string // run directories made by the commands, oldest first
}

// fixtures writes the files the docs' commands read: k6's CSV and JSON of
// six requests a second apart, a closed model's CSV, a latency list, an
// HdrHistogram interval log written by HdrHistogram's Go library, the
// scenario file docs/run.md shows, six runs for compare's two sides and
// one run for the commands that read a run directory before any made one.
func (d *docEnv) fixtures() {
	t := d.t
	var csv, json, closed strings.Builder
	csv.WriteString("metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n")
	closed.WriteString(csv.String())
	for i, ms := range []float64{12.5, 20, 31.25, 14, 18, 25} {
		fmt.Fprintf(&csv, "http_req_duration,%d,%g,,,,true,,GET,GET /a,HTTP/1.1,default,,200,,,GET /a,,\n", 1700000000+i, ms)
		fmt.Fprintf(&json, `{"type":"Point","metric":"http_req_duration","data":{"time":"2023-11-14T22:13:%02d.000Z","value":%g,"tags":{"method":"GET","name":"GET /a","status":"200","expected_response":"true","scenario":"default"}}}`+"\n", 20+i, ms)
	}
	// One VU asking every 112 ms (12 ms replies, 100 ms think), then a reply
	// of 3 s: the gap coordinated omission hides.
	ts := 1700000000.0
	for i := range 40 {
		ms := 12.0
		if i == 20 {
			ms = 3000
		}
		fmt.Fprintf(&closed, "http_req_duration,%.3f,%g,,,,true,,GET,GET /a,HTTP/1.1,default,,200,,,GET /a,,\n", ts, ms)
		ts += (ms + 100) / 1000
	}
	hist := hdrhistogram.New(1, 60_000_000_000, 3)
	var hlog bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&hlog)
	for s := range int64(3) {
		hist.Reset()
		for v := int64(1); v <= 100; v++ {
			hist.RecordValue(v * 100_000) // 0.1 ms to 10 ms, in ns
		}
		hist.SetStartTimeMs(1700000000000 + s*1000)
		hist.SetEndTimeMs(1700000000000 + (s+1)*1000)
		if err := w.OutputIntervalHistogram(hist); err != nil {
			t.Fatal(err)
		}
	}
	scenario := d.runMdScenario()
	for name, body := range map[string]string{
		"results.csv": csv.String(), "results.json": json.String(), "closed.csv": closed.String(),
		"values.txt": "1500\n2500\n4000\n12000\n", "latencies.hlog": hlog.String(), "scenario.yaml": scenario,
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func() string {
		code, stdout, stderr := runKnee(t, "run", "--executor", "constant-arrival-rate", "--rate", "50", "--duration", "1s",
			"--url", "http://"+d.addr+"/healthz", "--out", "sides/")
		if code != ExitOK {
			t.Fatalf("a run for the docs' commands: exit %d\n%s\n%s", code, stdout, stderr)
		}
		made, _ := filepath.Glob(filepath.Join("sides", "20*"))
		if len(made) != 1 {
			t.Fatalf("a run made %d run directories", len(made))
		}
		return made[0]
	}
	if err := os.MkdirAll("runs", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"base", "candidate"} {
		for i := 1; i <= 3; i++ {
			if err := os.Rename(run(), filepath.Join("runs", fmt.Sprintf("%s-%d", side, i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := run()
	if err := os.Rename(r, filepath.Join("runs", filepath.Base(r))); err != nil {
		t.Fatal(err)
	}
	d.noteRuns()
}

// runMdScenario is the scenario file docs/run.md shows, for this test:
// its address, seconds instead of a minute, and no freeze (it would stop
// this test's own process).
func (d *docEnv) runMdScenario() string {
	b, err := os.ReadFile(filepath.Join(d.root, "docs", "run.md"))
	if err != nil {
		d.t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(scenarios:.*?)```").FindSubmatch(b)
	if m == nil {
		d.t.Fatal("docs/run.md shows no scenario file")
	}
	var out []string
	for _, line := range strings.Split(string(m[1]), "\n") {
		if strings.HasPrefix(line, "faults:") {
			continue
		}
		line = strings.ReplaceAll(line, "127.0.0.1:5080", d.addr)
		line = strings.ReplaceAll(line, "duration: 60s", "duration: 2s")
		line = strings.ReplaceAll(line, "startTime: 70s", "startTime: 1s")
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// noteRuns records the run directories the commands have made so far.
func (d *docEnv) noteRuns() {
	made, _ := filepath.Glob(filepath.Join("runs", "20*"))
	slices.Sort(made)
	d.runs = made
}

// stageRE is one stage of --stages: its duration and target.
var stageRE = regexp.MustCompile(`^\d+[a-z]+:`)

// args is words (knee …) as this test runs them; see TestDocsCommandsRun.
func (d *docEnv) args(where string, words []string) []string {
	fault := slices.Contains(words, "--fault")
	var args []string
	for j := 1; j < len(words); j++ {
		w := strings.ReplaceAll(words[j], "127.0.0.1:5080", d.addr)
		switch {
		case w == "--duration":
			args, j = append(args, w, "2s"), j+1
		case w == "--step-duration":
			args, j = append(args, w, "2s"), j+1
			if !slices.Contains(words, "--warmup") {
				args = append(args, "--warmup", "500ms") // the default, 6 s, is longer than a step here
			}
		case w == "--steps":
			args, j = append(args, w, "2"), j+1
		case w == "--warmup":
			args, j = append(args, w, "500ms"), j+1
		case w == "--stages":
			var st []string
			for _, s := range strings.Split(words[j+1], ",") {
				st = append(st, stageRE.ReplaceAllString(s, "1s:"))
			}
			args, j = append(args, w, strings.Join(st, ",")), j+1
		case w == "--fault":
			j++ // not this process: see TestReadmeTasksRun
		case w == "--target-pid" && fault:
			j++
		case w == "--target-pid":
			args, j = append(args, w, strconv.Itoa(os.Getpid())), j+1 // the Bookstore runs here
		case w == "-e" && j+1 < len(words):
			args, j = append(args, w, d.env(words[j+1])), j+1
		case strings.HasPrefix(w, "runs/20"):
			args = append(args, d.lastRun(where, 1)...)
		case w == "runs/R1" || w == "runs/R2" || w == "runs/R3": // three repetitions of one test
			args = append(args, filepath.Join("runs", "base-"+w[len(w)-1:]))
		case strings.HasPrefix(w, "runs/") && strings.HasSuffix(w, "*"):
			matched, _ := filepath.Glob(w)
			args = append(args, matched...) // the shell expands the pattern
		case w == "pause.js" || w == "steps.js":
			args = append(args, filepath.Join(d.root, "examples", "k6", w))
		default:
			args = append(args, w)
		}
	}
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, ".js") }) {
		// The examples' address and length, read from __ENV as their header says.
		args = append(args, "-e", "BASE_URL=http://"+d.addr, "-e", "DURATION=2s")
	}
	return args
}

// env shortens a script's -e durations and step counts as args shortens flags.
func (d *docEnv) env(kv string) string {
	k, v, _ := strings.Cut(kv, "=")
	switch k {
	case "STEP_DURATION", "DURATION":
		return k + "=2s"
	case "STEPS":
		return k + "=2"
	}
	return k + "=" + v
}

// lastRun is the n newest run directories; a command that names one before
// any was made fails at where.
func (d *docEnv) lastRun(where string, n int) []string {
	if len(d.runs) < n {
		d.t.Fatalf("%s names %d run directories; the commands before made %d", where, n, len(d.runs))
	}
	return d.runs[len(d.runs)-n:]
}
