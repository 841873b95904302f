package k6script

import (
	"strings"
	"testing"
)

// A module whose members are made on first read (lazyObject) behaves as
// the plain object it replaced: each row is a script that throws when a
// value differs from what JavaScript gives for a plain object with the
// same properties.
func TestLazyModulesReadAsPlainObjects(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		{"the same function at every read", `import http, { get } from 'k6/http';
import * as k6 from 'k6';
export default function () {
  if (http.get !== http.get || get !== http.get) throw new Error('http.get differs between reads');
  if (k6.sleep !== k6.sleep || console.log !== console.log) throw new Error('k6.sleep or console.log differs');
  if (typeof http.batch !== 'function' || typeof k6.check !== 'function') throw new Error('not functions');
}`},
		{"members and absent names", `import http from 'k6/http';
export default function () {
  if (http.TLS_1_2 !== 'tls1.2' || !('post' in http) || 'nope' in http || http.nope !== undefined) throw new Error('members');
  const m = Object.getPrototypeOf(http);
  if (!m.hasOwnProperty('get') || m.hasOwnProperty('nope')) throw new Error('own properties');
}`},
		{"enumerated in the order set", `import http from 'k6/http';
export default function () {
  const keys = [];
  for (const k in http) keys.push(k);
  // the first seven members httpModule sets, in its order
  if (keys.slice(0, 7).join() !== 'get,head,post,put,patch,del,options') throw new Error('for-in: ' + keys.join());
  const own = Object.keys(Object.getPrototypeOf(http));
  if (own.join() !== keys.join()) throw new Error('Object.keys: ' + own.join());
}`},
		{"set, delete and set again", `import http from 'k6/http';
export default function () {
  const m = Object.getPrototypeOf(http);
  const n = Object.keys(m).length;
  m.extra = 1;
  delete m.get;
  if (m.extra !== 1 || m.get !== undefined || 'get' in m) throw new Error('after set and delete');
  let keys = Object.keys(m);
  if (keys.length !== n || keys[n - 1] !== 'extra' || keys.includes('get')) throw new Error('keys: ' + keys.join());
  m.get = 'again';
  delete m.extra;
  keys = Object.keys(m);
  if (m.get !== 'again' || keys.length !== n || keys.includes('extra') || keys.filter((k) => k === 'get').length !== 1) throw new Error('keys again: ' + keys.join());
}`},
		{"an assignment through the import shadows the member", `import http from 'k6/http';
export default function () {
  const real = http.get;
  http.get = () => 'mine';
  if (http.get() !== 'mine' || Object.getPrototypeOf(http).get !== real) throw new Error('shadowing');
}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if n, first := runOnce(t, c.src); n != 0 {
				t.Errorf("%d errors: %s", n, strings.TrimSpace(first))
			}
		})
	}
}
