package k6script

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Top-level await: the init code, awaits included, has run before Load
// reads options and exports, in the script and in its imported modules,
// in import order.
func TestTopLevelAwait(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		vus   int64  // options.vus, set from an awaited value
		trace string // the exported trace, as the init code built it
	}{
		{"await of a resolved Promise", map[string]string{"s.js": `const n = await Promise.resolve(3);
export const options = { vus: n };
export const trace = 'n=' + n;
export default function () {}`}, 3, "n=3"},
		{"await of an async function reading open()", map[string]string{"s.js": `async function load(name) { return open(name); }
const text = await load('./d.txt');
export const options = { vus: text.length };
export const trace = text;
export default function () {}`, "d.txt": "abcd"}, 4, "abcd"},
		{"a timer settles the await", map[string]string{"s.js": `import { setTimeout } from 'k6/timers';
const v = await new Promise((resolve) => setTimeout(() => resolve(2), 5));
export const options = { vus: v };
export const trace = 'timer ' + v;
export default function () {}`}, 2, "timer 2"},
		// lib's awaits end before the importer's code starts; a and b run
		// in the order imported.
		{"imported modules with top-level await", map[string]string{"s.js": `import { log } from './lib/log.js';
import './lib/a.js';
import './lib/b.js';
log.push('main');
export const options = { vus: log.length };
export const trace = log.join(',');
export default function () {}`,
			"lib/log.js": "export const log = [];\nlog.push('log');\nawait null;\nlog.push('log-after');\n",
			"lib/a.js":   "import { log } from './log.js';\nlog.push('a');\nlog.push(await Promise.resolve('a-after'));\n",
			"lib/b.js":   "import { log } from './log.js';\nlog.push('b');\n"}, 6, "log,log-after,a,a-after,b,main"},
		// A CommonJS script still has its exports (no await in it).
		{"CommonJS entry", map[string]string{"s.js": `exports.options = { vus: 5 };
exports.trace = 'cjs';
exports.default = function () {};`}, 5, "cjs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Load(context.Background(), writeScript(t, "s.js", c.files), Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			if s.Options.VUs == nil || *s.Options.VUs != c.vus {
				t.Errorf("options.vus = %v; want %d", s.Options.VUs, c.vus)
			}
			if !s.exports["default"] {
				t.Errorf("the default function is not among the exports %v", s.exports)
			}
			v, err := s.newVU(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.exports.Get("trace").String(); got != c.trace {
				t.Errorf("trace = %q; want %q", got, c.trace)
			}
		})
	}
}

// A rejected top-level await fails Load, naming where the Error was made.
func TestTopLevelAwaitRejected(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string // "/" is the path separator: the script's path is absolute
	}{
		{"rejected Promise", map[string]string{"s.js": "const a = 1;\nawait Promise.reject(new Error('no data'));\nexport default function () {}\n"},
			[]string{"/s.js:2:", "Error: no data"}},
		{"async function throws", map[string]string{"s.js": "async function f() {\n  throw new TypeError('bad row');\n}\nawait f();\nexport default function () {}\n"},
			[]string{"/s.js:2:", "TypeError: bad row"}},
		{"imported module rejects", map[string]string{"s.js": "import './lib.js';\nexport default function () {}\n",
			"lib.js": "await null;\n\nthrow new Error('lib failed');\n"},
			[]string{"/lib.js:3:", "Error: lib failed"}},
		{"exception after an await", map[string]string{"s.js": "await null;\nnull.boom;\nexport default function () {}\n"},
			[]string{"/s.js:2:", "TypeError"}},
		// The wrapper's first line shifts the bundle's: line 1 is still line 1.
		{"exception on line 1", map[string]string{"s.js": "null.boom;\nexport default function () {}\n"},
			[]string{"/s.js:1:", "TypeError"}},
		{"rejected with a string", map[string]string{"s.js": "await Promise.reject('nope');\nexport default function () {}\n"},
			[]string{"init: Uncaught (in promise) nope"}}, // the event loop's unhandled-rejection rule, as k6's
		{"never settles", map[string]string{"s.js": "await new Promise(() => {});\nexport default function () {}\n"},
			[]string{"top-level await is still pending"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(context.Background(), writeScript(t, "s.js", c.files), Config{})
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Load: %v (%T); want a *ScriptError", err, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), filepath.FromSlash(w)) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
