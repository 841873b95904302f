package kneetest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/knee-dev/knee/"

// The import rules of ARCHITECTURE.md, checked on every package's non-test
// files: imports point one way, record alone touches hdrhistogram-go, the
// sample target and the cgroup reader know nothing of knee, analysis does
// no I/O of its own, runner prints nothing but its progress line (it does
// not import report), and only the CLI reaches the lab's experiments.
func TestImportDirections(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		imports[strings.TrimPrefix(pkg, module)] = strings.Fields(strings.ReplaceAll(deps, module, ""))
	}
	forbidden := map[string][]string{
		"load":              {"record", "rundir", "analyze", "report", "request", "net/http"},
		"record":            {"load", "request", "report", "rundir", "analyze"},
		"rundir":            {"load", "analyze", "report", "runner"},
		"analyze":           {"os", "net/http", "load", "report", "runner", "importer", "fault"},
		"importer":          {"load", "report", "runner", "analyze"},
		"use":               {"load", "analyze", "report", "runner", "os", "net/http", "use/probe", "cgroup", "internal/proc"}, // the pure model: probes are use/probe
		"use/probe":         {"load", "analyze", "report", "runner", "fault"},
		"internal/proc":     {}, // checked below: no knee package but cgroup
		"fault":             {"load", "record"},
		"report":            {"load", "runner", "lab", "importer"},
		"runner":            {"report", "lab"}, // summaries and plots are printed and written by its callers
		"merge":             {"load", "report", "runner"},
		"promrw":            {"load", "rundir", "analyze", "report", "runner"},
		"k8s":               {"runner", "record", "analyze", "report"},
		"coord":             {"runner", "merge", "record", "rundir", "analyze", "report"}, // moves bytes; the merge is its caller's
		"cgroup":            {},                                                           // checked below: no knee package at all
		"palette":           {},                                                           // likewise
		"redact":            {},                                                           // likewise
		"guard":             {},                                                           // likewise
		"k6metric":          {},                                                           // likewise
		"internal/textwrap": {},                                                           // likewise
		"cmd/knee":          {"record", "rundir", "load", "lab", "runner"},
		"bookstore":         {}, // checked below: no knee package at all
		// The event loop's epoll, timers and runtime tuning know nothing
		// of HTTP; checked below also: no knee package at all.
		"request/internal/reactor": {"net/http", "net"},
	}
	for pkg, bad := range forbidden {
		deps, ok := imports[pkg]
		if !ok {
			t.Errorf("package %s not found by go list", pkg)
			continue
		}
		for _, d := range deps {
			for _, b := range bad {
				if d == b {
					t.Errorf("%s imports %s", pkg, d)
				}
			}
			if pkg == "bookstore" && !strings.Contains(d, ".") && isKnee(imports, d) {
				t.Errorf("bookstore imports knee's %s; the sample target must stand alone", d)
			}
			if (pkg == "cgroup" || pkg == "palette" || pkg == "redact" || pkg == "guard" || pkg == "k6metric" || pkg == "internal/textwrap" || pkg == "request/internal/reactor") && !strings.Contains(d, ".") && isKnee(imports, d) {
				t.Errorf("%s imports knee's %s; it sits below every other package", pkg, d)
			}
			if pkg == "internal/proc" && d != "cgroup" && !strings.Contains(d, ".") && isKnee(imports, d) {
				t.Errorf("internal/proc imports knee's %s; it reads /proc and nothing of knee but cgroup", d)
			}
		}
	}
	for pkg, deps := range imports {
		for _, d := range deps {
			if d == "github.com/HdrHistogram/hdrhistogram-go" && pkg != "record" {
				t.Errorf("%s imports hdrhistogram-go; only record may", pkg)
			}
			if d == "internal/kneetest" {
				t.Errorf("%s imports internal/kneetest outside its tests", pkg)
			}
			// lab is the article's experiments: general commands and
			// packages must not depend on them.
			if d == "lab" && pkg != "internal/cli" {
				t.Errorf("%s imports lab; only internal/cli may", pkg)
			}
		}
	}
	// Cgroups are read in one place, package cgroup: the probes and
	// hostinfo read them through it, never through fault (which writes
	// them); /proc is read in one place, internal/proc.
	for _, pkg := range []string{"use/probe", "hostinfo"} {
		for _, d := range imports[pkg] {
			if d == "fault" {
				t.Errorf("%s imports fault; read cgroups through package cgroup", pkg)
			}
			if d == "github.com/prometheus/procfs" {
				t.Errorf("%s imports procfs; read /proc through internal/proc", pkg)
			}
		}
	}
}

// Analysis is pure: what analyze needs, however indirectly, holds no
// database driver, HTTP client or /proc reader (the probes that use them
// are use/probe, which only the commands and the runner import).
func TestAnalyzeDependsOnNoIO(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"analyze").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, d := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(d, "github.com/jackc/pgx"), d == "net/http", d == "github.com/prometheus/procfs", d == module+"use/probe":
			t.Errorf("analyze depends on %s", d)
		}
	}
}

func isKnee(imports map[string][]string, pkg string) bool {
	_, ok := imports[pkg]
	return ok
}
