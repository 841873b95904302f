package k6script

import (
	"strings"
	"testing"
)

// k6/crypto against published test vectors (FIPS 180 "abc", RFC 1321's
// empty string, RFC 2202/4231-style HMAC of the "quick brown fox"
// sentence); the script throws on the first mismatch.
func TestCryptoModuleVectors(t *testing.T) {
	s := loadScript(t, `import crypto from 'k6/crypto';
import encoding from 'k6/encoding';
const fox = 'The quick brown fox jumps over the lazy dog';
const want = [
  [crypto.sha256('abc', 'hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  [crypto.md5('', 'hex'), 'd41d8cd98f00b204e9800998ecf8427e'],
  [crypto.sha1('abc', 'hex'), 'a9993e364706816aba3e25717850c26c9cd0d89d'],
  [crypto.hmac('sha256', 'key', fox, 'hex'), 'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8'],
  [crypto.hmac('md5', 'key', fox, 'hex'), '80070713463e7749b90c2dc24911e275'],
  [crypto.sha256('abc', 'base64'), 'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='],
  [crypto.createHash('sha256').update('a').update('bc').digest('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  [crypto.createHMAC('sha256', 'key').update(fox).digest('hex'), 'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8'],
  [crypto.randomBytes(16).byteLength, 16],
  [encoding.b64encode(crypto.sha256('abc', 'binary')), 'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='],
];
export default function () {
  want.forEach(([got, w], i) => { if (got !== w) throw new Error('case ' + i + ': ' + got); });
  crypto.sha256('x', 'octal');
}`, nil)
	iterateOnce(t, s)
	n, first := s.IterationErrors()
	if n != 1 || !strings.Contains(first, `output encoding "octal"`) {
		t.Errorf("%d errors, first %q; want only the bad encoding's", n, first)
	}
}
