package k6script

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// An API knee lacks is refused before the test, at its file:line:col, in
// the script or a file it imports; a mention in a comment, or k6/crypto's
// own functions, are not. (Before, these threw in every iteration and the
// run exited 0.)
func TestLoadRefusesLackedAPIs(t *testing.T) {
	for _, tt := range []struct {
		name, main, lib string
		want            []string // "" = loads
	}{
		// What knee now has loads: submitForm, clickLink, ocsp, digest, ntlm.
		{name: "submitForm, clickLink, ocsp, digest and ntlm load", main: "import http from 'k6/http';\nexport default function () {\n  const r = http.get('https://u:p@127.0.0.1:1/', { auth: 'digest' });\n  if (r.ocsp.status) { r.submitForm({ formSelector: 'form' }); }\n  r.clickLink({ selector: 'a' });\n  http.get('http://u:p@127.0.0.1:1/', {auth:\"ntlm\"});\n}\n"},
		{name: "webcrypto knee has", main: "import { enc } from './lib.js';\nexport default function () { enc(); }\n",
			lib: "export async function enc() {\n  const k = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt']);\n  return crypto.getRandomValues(new Uint8Array(12));\n}\n"},
		{name: "Blob.stream", main: "import { Blob } from 'k6/websockets';\nexport default function () {\n  new Blob(['x']).stream();\n}\n",
			want: []string{"script.js:3:18: Blob.stream() (k6/websockets) is not supported"}},
		{name: "exec.vu.tags and vu.metrics", main: "import exec from 'k6/execution';\nimport { vu } from 'k6/execution';\nexport default function () {\n  exec.vu.tags['team'] = 'red';\n  vu.metrics.metadata['trace_id'] = 'x';\n}\n",
			want: []string{"script.js:4:8: exec.vu.tags and exec.vu.metrics (k6/execution) are not supported", "script.js:5:3: exec.vu.tags"}},
		{name: "scenario.progress and test.options", main: "import exec from 'k6/execution';\nexport default function () {\n  if (exec.scenario.progress > 0.5) { console.log(exec.test.options.scenarios); }\n}\n",
			want: []string{"script.js:3:12: exec.scenario.progress (k6/execution) is not supported", "script.js:3:56: exec.test.options (k6/execution) is not supported"}},
		{name: "vu.tags without k6/execution", main: "const vu = { tags: {} };\nexport default function () { vu.tags.a = 1; }\n"},
		{name: "stream() without k6/websockets", main: "const o = { stream() {} };\nexport default function () { o.stream(); }\n"},
		{name: "comments and k6/crypto", main: "import crypto from 'k6/crypto';\n// r.submitForm() is not used\n/* crypto.subtle */\nconst url = 'http://x/.ocsp'; // a string\nexport default function () { crypto.sha256('x', 'hex'); }\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"script.js": tt.main}
			if tt.lib != "" {
				files["lib.js"] = tt.lib
			}
			path := writeScript(t, "script.js", files)
			s, err := Load(context.Background(), path, Config{})
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				s.Close()
				return
			}
			if err == nil {
				s.Close()
				t.Fatalf("loaded; want refused with %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), filepath.Dir(path)) {
				t.Errorf("error %q does not name the file by its path", err)
			}
		})
	}
}
