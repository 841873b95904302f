package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The coordinated-omission corpus: real runs on loopback, each labelled by
// how it was made — healthy (nothing stalled the target) or stalled (a
// SIGSTOP freeze of knee lab serve, or an endpoint the test holds for
// 1.5 s) in the closed model — never by knee's verdict. Every healthy run
// must be judged below LIKELY, every stalled one LIKELY. bench/co-corpus.sh
// prints the confusion matrix this test logs.

// coCase is one run of the corpus: make runs knee and returns the run
// directory knee analyze reads.
type coCase struct {
	name    string
	stalled bool
	make    func(t *testing.T, c *coCorpus) string
}

// coCorpus holds what the cases share: one knee lab serve for the healthy
// runs (a frozen run gets its own) and the verdicts, for the matrix.
type coCorpus struct {
	base string
	mu   sync.Mutex
	got  map[string]string
}

const coISBN = "/api/books/9780441172719?run={vu}-{iter}"

// coRun runs knee with args and returns the run directory it printed.
func coRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, stderr := runKnee(t, append(args, "--quiet")...)
	if code != 0 {
		t.Fatalf("knee %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, stderr)
	}
	return runDirOf(t, out)
}

// coImport runs a k6 script with k6's CSV output and imports the CSV.
func coImport(t *testing.T, script string, runArgs []string, importArgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	csv := filepath.Join(dir, "k6.csv")
	coRun(t, append([]string{"run", script, "--out", filepath.Join(dir, "runs"), "--out", "csv=" + csv}, runArgs...)...)
	code, out, stderr := runKnee(t, append([]string{"import", csv, "--out", filepath.Join(dir, "imported")}, importArgs...)...)
	if code != 0 {
		t.Fatalf("knee import: exit %d\n%s\n%s", code, out, stderr)
	}
	return runDirOf(t, out)
}

// k6 scripts of the corpus; BASE_URL comes from -e.
const (
	// A login flow: three requests in two groups per iteration, 50 ms sleep.
	coLoginJS = `import http from 'k6/http';
import { group, sleep } from 'k6';
export const options = { scenarios: { login: { executor: 'constant-vus', vus: Number(__ENV.VUS || 4), duration: __ENV.DUR || '4s' } } };
const B = __ENV.BASE_URL;
export default function () {
  group('login', () => {
    http.get(B + '/healthz');
    http.get(B + '/api/books/9780441172719?run=' + __VU + '-' + __ITER);
  });
  group('browse', () => { http.get(B + '/api/books/9780261102217?run=' + __VU + '-' + __ITER); });
  sleep(0.05);
}
`
	// A closed scenario, then an open one from 3 s: 2–3 s is the plan's gap.
	coTwoScenariosJS = `import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: {
  browse: { executor: 'constant-vus', vus: 4, duration: '2s', exec: 'browse' },
  buy: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', duration: '2s', startTime: '3s', preAllocatedVUs: 10, exec: 'buy' },
} };
const B = __ENV.BASE_URL;
export function browse() { http.get(B + '/api/books/9780441172719?run=' + __VU + '-' + __ITER); sleep(0.05); }
export function buy() { http.get(B + '/api/books/9780261102217?run=' + __VU + '-' + __ITER); }
`
	// The open model in a script: 80 iterations a second for 4 s.
	coOpenJS = `import http from 'k6/http';
export const options = { scenarios: { open: { executor: 'constant-arrival-rate', rate: 80, timeUnit: '1s', duration: '4s', preAllocatedVUs: 10 } } };
export default function () { http.get(__ENV.BASE_URL + '/api/books/9780441172719?run=' + __VU + '-' + __ITER); }
`
)

// coYAML writes a scenario file with BASE in it replaced by base.
func coYAML(t *testing.T, base, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(src, "BASE", base)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// stallingServer answers at once, except that a request arriving 2 s to
// 3.5 s after the first one waits until 3.5 s: a real 1.5 s stall of the
// target, while the generator keeps running.
func stallingServer(t *testing.T) string {
	var once sync.Once
	var start time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { start = time.Now() })
		if e := time.Since(start); e >= 2*time.Second && e < 3500*time.Millisecond {
			time.Sleep(3500*time.Millisecond - e)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// frozenLab is a knee lab serve of its own and the flags that freeze it
// with SIGSTOP for 1.5 s at 2 s.
func frozenLab(t *testing.T) (base string, freeze []string) {
	base, pid := startLabServe(t)
	return base, []string{"--fault", "freeze@2s:1500ms", "--target-pid", fmt.Sprint(pid)}
}

func coCases() []coCase {
	closedFlags := func(base string) []string {
		return []string{"--executor", "constant-vus", "--vus", "10", "--think", "50ms", "--url", base + coISBN}
	}
	return []coCase{
		// Healthy: the open model in every form knee runs it.
		{"open constant (flags)", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", "--executor", "constant-arrival-rate", "--rate", "100", "--duration", "4s",
				"--url", c.base+coISBN, "--out", t.TempDir())
		}},
		{"open ramping up and down (flags)", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", "--executor", "ramping-arrival-rate", "--start-rate", "20", "--stages", "2s:120,1s:120,2s:0",
				"--url", c.base+coISBN, "--out", t.TempDir())
		}},
		{"open two scenarios, the second from 4 s (YAML)", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", coYAML(t, c.base, `scenarios:
  a: {executor: constant-arrival-rate, rate: 100, duration: 2s, requests: [{url: "BASE/api/books/9780441172719?run={vu}-{iter}"}]}
  b: {executor: constant-arrival-rate, rate: 100, duration: 2s, startTime: 4s, requests: [{url: "BASE/api/books/9780261102217?run={vu}-{iter}"}]}
`), "--out", t.TempDir())
		}},
		{"knee steps", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "steps", "--start", "50", "--step", "50", "--steps", "2", "--step-duration", "2s", "--warmup", "500ms",
				"--url", c.base+coISBN, "--out", t.TempDir())
		}},
		{"the article's steps.js", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", "../../examples/k6/steps.js", "-e", "BASE_URL="+c.base, "-e", "START=50", "-e", "STEP=50",
				"-e", "STEPS=2", "-e", "STEP_DURATION=2s", "--out", t.TempDir())
		}},
		{"k6 script, open model", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", writeJS(t, coOpenJS), "-e", "BASE_URL="+c.base, "--out", t.TempDir())
		}},
		// Healthy: the closed model, whose plan changes the load.
		{"closed with think time (flags)", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, append(append([]string{"run"}, closedFlags(c.base)...), "--duration", "4s", "--out", t.TempDir())...)
		}},
		{"closed ramping up and down (flags)", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", "--executor", "ramping-vus", "--stages", "1s:10,2s:10,1s:0", "--think", "50ms",
				"--url", c.base+coISBN, "--out", t.TempDir())
		}},
		{"closed two scenarios, the second from 3 s (YAML)", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", coYAML(t, c.base, `scenarios:
  a: {executor: constant-vus, vus: 10, think: 50ms, duration: 2s, requests: [{url: "BASE/api/books/9780441172719?run={vu}-{iter}"}]}
  b: {executor: constant-vus, vus: 4, think: 50ms, duration: 2s, startTime: 3s, requests: [{url: "BASE/api/books/9780261102217?run={vu}-{iter}"}]}
`), "--out", t.TempDir())
		}},
		{"k6 script, closed login flow with groups", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", writeJS(t, coLoginJS), "-e", "BASE_URL="+c.base, "--out", t.TempDir())
		}},
		{"k6 script, closed then open from 3 s", false, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", writeJS(t, coTwoScenariosJS), "-e", "BASE_URL="+c.base, "--out", t.TempDir())
		}},
		// Healthy: imports of k6's CSV, with and without --model.
		{"k6 CSV import, no --model", false, func(t *testing.T, c *coCorpus) string {
			return coImport(t, writeJS(t, coTwoScenariosJS), []string{"-e", "BASE_URL=" + c.base})
		}},
		{"k6 CSV import, --model closed", false, func(t *testing.T, c *coCorpus) string {
			return coImport(t, writeJS(t, coLoginJS), []string{"-e", "BASE_URL=" + c.base}, "--model", "closed")
		}},
		{"k6 CSV import, --model open", false, func(t *testing.T, c *coCorpus) string {
			return coImport(t, writeJS(t, coOpenJS), []string{"-e", "BASE_URL=" + c.base}, "--model", "open")
		}},
		// Stalled, in the closed model.
		{"closed, lab frozen by SIGSTOP", true, func(t *testing.T, c *coCorpus) string {
			base, freeze := frozenLab(t)
			return coRun(t, append(append(append([]string{"run"}, closedFlags(base)...), freeze...), "--duration", "5s", "--out", t.TempDir())...)
		}},
		{"closed ramping, lab frozen in the hold", true, func(t *testing.T, c *coCorpus) string {
			base, freeze := frozenLab(t)
			return coRun(t, append([]string{"run", "--executor", "ramping-vus", "--stages", "1s:10,4s:10,1s:0", "--think", "50ms",
				"--url", base + coISBN, "--out", t.TempDir()}, freeze...)...)
		}},
		{"closed, slow endpoint", true, func(t *testing.T, c *coCorpus) string {
			return coRun(t, append(append([]string{"run"}, closedFlags(stallingServer(t))...), "--duration", "5s", "--out", t.TempDir())...)
		}},
		{"k6 script login flow, lab frozen", true, func(t *testing.T, c *coCorpus) string {
			base, freeze := frozenLab(t)
			return coRun(t, append([]string{"run", writeJS(t, coLoginJS), "-e", "BASE_URL=" + base, "-e", "VUS=10", "-e", "DUR=5s",
				"--out", t.TempDir()}, freeze...)...)
		}},
		{"k6 script login flow, slow endpoint", true, func(t *testing.T, c *coCorpus) string {
			return coRun(t, "run", writeJS(t, coLoginJS), "-e", "BASE_URL="+stallingServer(t), "-e", "VUS=10", "-e", "DUR=5s",
				"--out", t.TempDir())
		}},
		{"k6 CSV import --model closed, lab frozen", true, func(t *testing.T, c *coCorpus) string {
			base, freeze := frozenLab(t)
			return coImport(t, writeJS(t, coLoginJS), append([]string{"-e", "BASE_URL=" + base, "-e", "VUS=10", "-e", "DUR=5s"}, freeze...),
				"--model", "closed")
		}},
	}
}

// TestCOCorpus runs every case, analyses it and checks the verdict against
// the label: healthy never LIKELY, stalled always LIKELY.
func TestCOCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the coordinated-omission corpus: 20 real runs of 4–6 s; skipped in -short")
	}
	base, _ := startLabServe(t)
	c := &coCorpus{base: base, got: map[string]string{}}
	cases := coCases()
	t.Run("runs", func(t *testing.T) {
		for _, cc := range cases {
			t.Run(cc.name, func(t *testing.T) {
				t.Parallel()
				dir := cc.make(t, c)
				exp := filepath.Join(t.TempDir(), "analyze.json")
				code, out, stderr := runKnee(t, "analyze", dir, "--summary-export", exp)
				if _, err := os.Stat(exp); err != nil {
					t.Fatalf("knee analyze %s: exit %d, no export\n%s\n%s", dir, code, out, stderr)
				}
				var an analyzeExport
				readJSON(t, exp, &an)
				c.mu.Lock()
				c.got[cc.name] = an.Signals.Verdict
				c.mu.Unlock()
				likely := an.Signals.Verdict == "likely coordinated omission"
				if likely != cc.stalled {
					t.Errorf("verdict %q on a %s run\n%s", an.Signals.Verdict, label(cc.stalled), coSection(out))
				} else {
					t.Logf("verdict %q\n%s", an.Signals.Verdict, coSection(out))
				}
			})
		}
	})
	var healthy, stalled int
	m := map[string]int{}
	var lines []string
	for _, cc := range cases {
		v, ok := c.got[cc.name]
		if !ok {
			continue
		}
		likely := v == "likely coordinated omission"
		switch {
		case cc.stalled && likely:
			m["TP"]++
		case cc.stalled:
			m["FN"]++
		case likely:
			m["FP"]++
		default:
			m["TN"]++
		}
		if cc.stalled {
			stalled++
		} else {
			healthy++
		}
		lines = append(lines, fmt.Sprintf("  %-8s %-48s %s", label(cc.stalled), cc.name, v))
	}
	sort.Strings(lines)
	t.Logf("CO corpus: %d healthy, %d stalled runs\n%s\nconfusion matrix: TP %d FP %d TN %d FN %d",
		healthy, stalled, strings.Join(lines, "\n"), m["TP"], m["FP"], m["TN"], m["FN"])
	if healthy < 12 || stalled < 6 {
		t.Errorf("the corpus ran %d healthy and %d stalled runs; want at least 12 and 6", healthy, stalled)
	}
}

func label(stalled bool) string {
	if stalled {
		return "stalled"
	}
	return "healthy"
}

// coSection is knee analyze's coordinated-omission lines.
func coSection(out string) string {
	i := strings.Index(out, "coordinated omission:")
	if i < 0 {
		return out
	}
	return out[i:]
}
