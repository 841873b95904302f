package k6metric

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The list against k6's own reference (k6 docs, "Built-in metrics"; k6 v1
// metrics/builtin.go, the WebSocket ones included; the gRPC streams'
// counters from k6's grpc module's metrics.go): each metric's type and
// whether its values are times or bytes.
func TestBuiltinsAreK6s(t *testing.T) {
	want := []Metric{
		{"checks", "rate", "default"},
		{"data_received", "counter", "data"},
		{"data_sent", "counter", "data"},
		{"dropped_iterations", "counter", "default"},
		{"group_duration", "trend", "time"},
		{"grpc_req_duration", "trend", "time"},
		{"grpc_streams", "counter", "default"},
		{"grpc_streams_msgs_received", "counter", "default"},
		{"grpc_streams_msgs_sent", "counter", "default"},
		{"http_req_blocked", "trend", "time"},
		{"http_req_connecting", "trend", "time"},
		{"http_req_duration", "trend", "time"},
		{"http_req_failed", "rate", "default"},
		{"http_req_receiving", "trend", "time"},
		{"http_req_sending", "trend", "time"},
		{"http_req_tls_handshaking", "trend", "time"},
		{"http_req_waiting", "trend", "time"},
		{"http_reqs", "counter", "default"},
		{"iteration_duration", "trend", "time"},
		{"iterations", "counter", "default"},
		{"vus", "gauge", "default"},
		{"vus_max", "gauge", "default"},
		{"ws_connecting", "trend", "time"},
		{"ws_msgs_received", "counter", "default"},
		{"ws_msgs_sent", "counter", "default"},
		{"ws_ping", "trend", "time"},
		{"ws_session_duration", "trend", "time"},
		{"ws_sessions", "counter", "default"},
	}
	if got := Builtins(); !slices.Equal(got, want) {
		t.Fatalf("Builtins() =\n%v\nwant\n%v", got, want)
	}
	for _, m := range want {
		if got, ok := Lookup(m.Name); !ok || got != m {
			t.Errorf("Lookup(%q) = %v, %v; want %v, true", m.Name, got, ok, m)
		}
	}
	for _, name := range []string{"", "http_req", "HTTP_REQS", "vus ", "ws_session", "grpc_req", "browser_web_vital_lcp"} {
		if got, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) = %v; want none", name, got)
		}
	}
}

// Every name constant of this package is in Builtins, so a metric added
// to the constants and forgotten in the list fails here.
func TestEveryConstantIsListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "k6metric.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	vocabulary := map[string]bool{Counter: true, Gauge: true, Rate: true, Trend: true, Plain: true, Time: true, Data: true}
	var names []string
	for _, lit := range stringLiterals(f) {
		if !vocabulary[lit.value] {
			names = append(names, lit.value)
		}
	}
	var listed []string
	for _, m := range Builtins() {
		listed = append(listed, m.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, listed) {
		t.Fatalf("constants %v, Builtins %v", names, listed)
	}
}

// literal is one string literal of a file and where it is.
type literal struct {
	value string
	pos   token.Pos
}

// stringLiterals is every string literal of f's code. A struct tag is a
// literal too, but its value (`json:"vus"`) is the whole tag, never a name.
func stringLiterals(f *ast.File) []literal {
	var out []literal
	ast.Inspect(f, func(n ast.Node) bool {
		b, ok := n.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return true
		}
		if v, err := strconv.Unquote(b.Value); err == nil {
			out = append(out, literal{v, b.Pos()})
		}
		return true
	})
	return out
}

// nameLiterals is what of src's code spells a built-in metric's name.
func nameLiterals(t *testing.T, fset *token.FileSet, path string, src any) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, lit := range stringLiterals(f) {
		if _, ok := Lookup(lit.value); ok {
			out = append(out, lit.value)
		}
	}
	return out
}

// The scan finds a name in any expression and nothing else: not a tag, a
// comment, a name inside a longer string, or the constant itself.
func TestNameLiteralsScan(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"call argument", `package p; func f() { g("http_req_duration") }`, []string{"http_req_duration"}},
		{"raw string", "package p; var x = `vus_max`", []string{"vus_max"}},
		{"switch case", `package p; func f(m string) { switch m { case "checks", "data_sent": } }`, []string{"checks", "data_sent"}},
		{"map key", `package p; var m = map[string]int{"iterations": 1}`, []string{"iterations"}},
		{"struct tag", "package p; type T struct { V int `json:\"vus\"` }", nil},
		{"comment", "package p\n// http_reqs counts requests\nvar x = 1", nil},
		{"longer string", `package p; var x = "http_req_duration{group:::a}"`, nil},
		{"constant", `package p; import "k"; var x = k.HTTPReqs`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nameLiterals(t, token.NewFileSet(), "p.go", tc.src); !slices.Equal(got, tc.want) {
				t.Fatalf("found %q, want %q", got, tc.want)
			}
		})
	}
}

// notMetrics are the files that spell a name meaning something else: k6's
// own option and CLI flag of the same word (--vus, --iterations, the vus:
// key of a scenario file) and palette's series keys, which the pages'
// script looks colours up by (palette imports no knee package). Keyed by
// path from the module root, each with the names it may spell.
func notMetrics() map[string][]string {
	return map[string][]string{
		"internal/cli/analyze.go":   {VUs},             // --vus flag
		"internal/cli/lab.go":       {VUs},             // --vus flag
		"internal/cli/run.go":       {VUs},             // --vus flag
		"internal/cli/runscript.go": {VUs, Iterations}, // k6's --vus and --iterations flags
		"internal/cli/k6env.go":     {VUs, Iterations}, // the --vus and --iterations flags K6_VUS and K6_ITERATIONS stand for
		"k6script/options.go":       {VUs, Iterations}, // the vus and iterations options, read as k6 reads them
		"k6script/webcrypto_ops.go": {Iterations},      // PBKDF2's iterations parameter
		"load/config.go":            {VUs},             // the vus: setting, in its error
		"palette/palette.go":        {VUs, DataReceived, DataSent, Iterations},
		"scenario/flags.go":         {VUs}, // the vus: setting and its flag
		"scenario/meta.go":          {VUs}, // the vus: setting
		"scenario/parse.go":         {VUs}, // the vus: setting
	}
}

// The rule that keeps one list: no non-test Go file of the module but this
// package's spells a built-in metric's name as a string literal; it takes
// the constant (k6metric.HTTPReqDuration), so a name is spelled once.
func TestNoNameLiteralsOutsideTheList(t *testing.T) {
	root := ".."
	allowed := notMetrics()
	used := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "k6metric/") {
			return nil
		}
		for _, name := range nameLiterals(t, fset, path, nil) {
			if slices.Contains(allowed[rel], name) {
				used[rel+" "+name] = true
				continue
			}
			t.Errorf("%s spells %q: use the k6metric constant", rel, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// An exception no file needs any more goes, so it cannot hide a metric.
	for file, names := range allowed {
		for _, name := range names {
			if !used[file+" "+name] {
				t.Errorf("notMetrics: %s no longer spells %q; drop the exception", file, name)
			}
		}
	}
}
