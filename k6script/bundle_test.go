package k6script

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// esbuild's interop helpers loop by index once bundled (indexedHelperLoops),
// in both forms of the bundle, and imports read as the ES spec has them:
// a CommonJS module's named imports each its own value (each getter keeps
// its own key), an ES module's namespace keys sorted, its bindings live.
func TestBundleHelpersLoopByIndex(t *testing.T) {
	files := map[string]string{
		"cjs.js": `module.exports = { a: 1, b: 2, c: 3 };`,
		"esm.js": `export let z = 'z';
export let n = 1;
export function inc() { n++; }`,
	}
	const body = `import { a, b, c } from './cjs.js';
import * as esm from './esm.js';
import { n, inc } from './esm.js';
export default function () {
  if ([a, b, c].join() !== '1,2,3') throw new Error('cjs: ' + [a, b, c].join());
  if (Object.keys(esm).join() !== 'inc,n,z') throw new Error('namespace keys: ' + Object.keys(esm).join());
  inc();
  if (n !== 2 || esm.n !== 2) throw new Error('live binding: ' + n + ' ' + esm.n);
}`
	for _, tc := range []struct {
		name, main string
		async      bool
	}{
		{"CommonJS bundle", body, false},
		{"top-level await", "await Promise.resolve();\n" + body, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := map[string]string{"main.js": tc.main}
			for k, v := range files {
				fs[k] = v
			}
			path := writeScript(t, "main.js", fs)
			b, err := bundleAs(context.Background(), path, Modules{}, nil, tc.async)
			if err != nil {
				t.Fatal(err)
			}
			for _, loop := range []string{"for (var name in all)", "for (let key of"} {
				if strings.Contains(b.code, loop) {
					t.Errorf("the bundle still has esbuild's %q: indexedHelperLoops no longer matches its helpers", loop)
				}
			}
			s, err := Load(context.Background(), path, Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
			it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Called: time.Now()}, &samples{})
			if n, first := s.IterationErrors(); n != 0 || s.Iterations() != 1 {
				t.Errorf("%d errors (%s), %d iterations; want none, 1", n, first, s.Iterations())
			}
		})
	}
}
