package k6script

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// check() and group() as k6 v1.8.1's k6 module has them (Check, Group in
// internal/js/modules/k6/k6.go): a check whose function throws is counted
// failed and ends check() with its exception, the later checks not run; an
// async function is refused by both, the checks before it counted.
func TestCheckAndGroupRules(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []CheckResult // in the order first seen
		err        string        // the iteration's error
	}{
		{"a check that throws fails and stops check()",
			`check(null, { before: () => true, boom: (r) => r.x.y, after: () => true });`,
			[]CheckResult{{Name: "before", Passes: 1}, {Name: "boom", Fails: 1}}, "Cannot read property 'x' of"},
		{"values that are not functions", `check(0, { yes: 'x', no: 0, fn: (v) => v === 0 });`,
			[]CheckResult{{Name: "yes", Passes: 1}, {Name: "no", Fails: 1}, {Name: "fn", Passes: 1}}, ""},
		{"an async check is refused where it stands",
			`check(1, { sync: () => true, later: async () => true, never: () => true });`,
			[]CheckResult{{Name: "sync", Passes: 1}}, "the built-in check() does not support async functions"},
		{"an async group is refused before it runs",
			`group('g', async () => { check(1, { inside: () => true }); });`,
			[]CheckResult{}, "group() does not support async functions as arguments"},
		{"a group needs a function", `group('g', 5);`, []CheckResult{}, "group() requires a callback as a second argument"},
		{"a plain group runs", `group('g', () => { check(1, { inside: () => true }); });`,
			[]CheckResult{{Name: "inside", Group: "::g", Passes: 1}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := loadScript(t, "import { check, group } from 'k6';\nexport default function () {\n"+tc.body+"\n}\n", nil)
			iterateOnce(t, s)
			if res := s.Checks.Results(); !slices.Equal(res, tc.want) {
				t.Errorf("checks %+v; want %+v", res, tc.want)
			}
			n, first := s.IterationErrors()
			if tc.err == "" && n != 0 || tc.err != "" && (n != 1 || !strings.Contains(first, tc.err)) {
				t.Errorf("%d iteration errors, first %q; want %q", n, first, tc.err)
			}
		})
	}
}

// check() and group() refuse what k6's refuse (internal/js/modules/k6/
// k6.go:147-175, lib/models.go:29): no checks at all, checks that are
// undefined or null (a TypeError from making them an object), a name with
// k6's group separator; the checks before a refused name were counted.
func TestCheckAndGroupArguments(t *testing.T) {
	for _, tt := range []struct {
		name, code string
		want       string // what the script saw: the result or the exception
		checks     int64  // counted
	}{
		{"no checks", `String(check(1))`, "GoError: no checks provided to `check`", 0},
		{"undefined checks", `String(check(1, undefined))`, "TypeError: Cannot convert undefined or null to object", 0},
		{"null checks", `String(check(1, null))`, "TypeError: Cannot convert undefined or null to object", 0},
		{"a number: no checks", `String(check(1, 5))`, "true", 0},
		{"separator in a name", `String(check(1, { a: true, 'b::c': true, d: true }))`, "GoError: group and check names may not contain '::'", 1},
		{"separator in a group", `String(group('a::b', () => 1))`, "GoError: group and check names may not contain '::'", 0},
		{"plain", `String(check(1, { a: true, b: 0 }))`, "false", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import { check, group } from 'k6';
export let out = '';
export default function () { try { out = `+tt.code+`; } catch (e) { out = String(e); } }`, nil)
			iterateOnce(t, s)
			v, _, _ := s.vuFor(context.Background(), 1, nil)
			if got := v.exports.Get("out").String(); got != tt.want {
				t.Errorf("the script saw %q; want %q", got, tt.want)
			}
			if _, n := s.Checks.Rate(); n != tt.checks {
				t.Errorf("%d checks counted; want %d", n, tt.checks)
			}
		})
	}
}

// k6/execution's vu, scenario and instance throw k6's errors in the init
// code, and scenario's fields in setup() and teardown(), which run in no
// scenario (internal/js/modules/k6/execution/execution.go:74-90, 131,
// 217); in an iteration they are read.
func TestExecutionOutsideAScenario(t *testing.T) {
	const noScenario = "GoError: getting scenario information outside of the VU context is not supported"
	for _, tt := range []struct {
		name, where, expr, want string
	}{
		{"init, vu", "init", "exec.vu.idInTest", "GoError: getting VU information in the init context is not supported"},
		{"init, scenario", "init", "exec.scenario", noScenario},
		{"init, instance", "init", "exec.instance.vusActive", "GoError: getting instance information in the init context is not supported"},
		{"setup, scenario name", "setup", "exec.scenario.name", noScenario},
		{"setup, vu id", "setup", "exec.vu.idInTest", "0"},
		{"iteration, scenario name", "default", "exec.scenario.name", "x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			read := `(() => { try { return String(` + tt.expr + `); } catch (e) { return String(e); } })()`
			src := `import exec from 'k6/execution';
export let out = '';
`
			switch tt.where {
			case "init":
				src += "out = " + read + ";\nexport default function () {}"
			case "setup":
				src += "export function setup() { return " + read + "; }\nexport default function (d) { out = d; }"
			default:
				src += "export default function () { out = " + read + "; }"
			}
			s := loadScript(t, src, nil)
			if err := s.Setup(context.Background()); err != nil {
				t.Fatal(err)
			}
			iterateOnce(t, s)
			v, _, _ := s.vuFor(context.Background(), 1, nil)
			if got := v.exports.Get("out").String(); got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}
