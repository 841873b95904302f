package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The README's five everyday tasks run, in order, as a reader types them,
// against a Bookstore of the test's own on loopback. Only what a test cannot
// take as written is changed, each for a reason: the address (5080 may be
// taken), durations (seconds, not a minute), the freeze (it would stop this
// test's own process, where the Bookstore runs; runner tests freeze a real
// child), run directories and files (the ones the commands before made, or
// the test's small CSV and script, in a temporary folder). Every flag and
// argument otherwise reaches knee as the README spells it, so a renamed flag,
// a changed default or a broken path through a task fails here.
func TestReadmeTasksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README's tasks take about 20 s")
	}
	addr := testBookstore(t)
	srvURL := "http://" + addr

	readme, err := filepath.Abs(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir) // a command without --out writes runs/ here, not into the package
	// k6's CSV output of three requests, by hand, for task 4.
	csv := "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n" +
		"http_req_duration,1700000000,12.5,,,,true,,GET,GET /a,HTTP/1.1,default,,200,,,GET /a,,\n" +
		"http_req_duration,1700000001,20,,,,true,,GET,GET /a,HTTP/1.1,default,,200,,,GET /a,,\n" +
		"http_req_duration,1700000002,31.25,,,,true,,GET,GET /a,HTTP/1.1,default,,200,,,GET /a,,\n"
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "import http from 'k6/http';\nimport { check } from 'k6';\n" +
		"export const options = { vus: 2, iterations: 6 };\n" +
		"export default function () { check(http.get('" + srvURL + "/api/books/9780441172719'), { 'status 200': (r) => r.status === 200 }); }\n"
	if err := os.WriteFile(filepath.Join(dir, "script.js"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}

	cmds, lines := docCommands(t, readme)
	tasks := 0
	var lastRun string // the newest run directory a command made
	for i, words := range cmds {
		words = slices.Clone(words)
		if len(words) < 2 || words[0] != "knee" || words[1] == "lab" {
			continue // the main job and the Bookstore itself: lab's own tests
		}
		var args []string
		for j := 1; j < len(words); j++ {
			w := strings.ReplaceAll(words[j], "127.0.0.1:5080", addr)
			switch {
			case w == "--duration" || w == "--step-duration":
				args, j = append(args, w, "2s"), j+1
			case w == "--steps":
				args, j = append(args, w, "2"), j+1
			case w == "--warmup":
				args, j = append(args, w, "500ms"), j+1
			case w == "--fault" || w == "--target-pid":
				j++ // not this process: see the doc comment
			case w == "runs/":
				args = append(args, filepath.Join(dir, "runs")+"/")
			case strings.HasPrefix(w, "runs/20"):
				if lastRun == "" {
					t.Fatalf("README.md:%d names a run directory before any command made one", lines[i])
				}
				args = append(args, lastRun)
			case w == "results.csv" || w == "script.js" || w == "report.html":
				args = append(args, filepath.Join(dir, w))
			default:
				args = append(args, w)
			}
		}
		code, stdout, stderr := runKnee(t, args...)
		if code != ExitOK {
			t.Errorf("README.md:%d: knee %s: exit %d\nstdout:\n%s\nstderr:\n%s", lines[i], strings.Join(args, " "), code, stdout, stderr)
			continue
		}
		tasks++
		if runs, _ := filepath.Glob(filepath.Join(dir, "runs", "20*")); len(runs) > 0 {
			slices.Sort(runs)
			lastRun = runs[len(runs)-1]
		}
		if want := readmeWants(args[0], args); want != "" && !strings.Contains(stdout+stderr, want) {
			t.Errorf("README.md:%d: knee %s printed no %q:\n%s\n%s", lines[i], strings.Join(args, " "), want, stdout, stderr)
		}
	}
	if tasks < 7 {
		t.Errorf("%d README commands ran, want the five tasks' 7 at least", tasks)
	}
	if st, err := os.Stat(filepath.Join(dir, "report.html")); err != nil || st.Size() == 0 {
		t.Errorf("task 5's report.html: %v", err)
	}
}

// readmeWants is what a README command must print that says it did its task.
func readmeWants(cmd string, args []string) string {
	switch {
	case cmd == "run" && slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, ".js") }):
		return "checks"
	case cmd == "run" && slices.Contains(args, "constant-arrival-rate"):
		return "Open model"
	case cmd == "run":
		return "run directory:"
	case cmd == "steps":
		return "knee:"
	case cmd == "analyze":
		return "latency"
	case cmd == "import":
		return "imported"
	}
	return ""
}
