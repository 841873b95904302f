package k6script

import (
	"strings"
	"testing"
)

// runOnce runs one iteration of src's default function and returns the
// number of iteration errors and the first one's text.
func runOnce(t *testing.T, src string) (int64, string) {
	t.Helper()
	s := loadScript(t, src, nil)
	iterateOnce(t, s)
	return s.IterationErrors()
}

// k6/encoding against base64 worked out by hand from RFC 4648's alphabet:
// "hello world" is aGVsbG8gd29ybGQ= (std), and the bytes fb ff
// (111110 111111 1111 -> 62 63 60) are +/8= in std and -_8= in url. null, undefined and unknown names are std, as in
// k6; the format 's' is a string and anything else an ArrayBuffer.
func TestEncodingBase64(t *testing.T) {
	n, first := runOnce(t, `import encoding from 'k6/encoding';
export default function () {
  const fbff = new Uint8Array([0xfb, 0xff]).buffer;
  const want = [
    [encoding.b64encode('hello world'), 'aGVsbG8gd29ybGQ='],
    [encoding.b64encode('hello world', 'rawstd'), 'aGVsbG8gd29ybGQ'],
    [encoding.b64encode(fbff), '+/8='],
    [encoding.b64encode(fbff, null), '+/8='],
    [encoding.b64encode(fbff, 'nope'), '+/8='],
    [encoding.b64encode(fbff, 'url'), '-_8='],
    [encoding.b64encode(fbff, 'rawurl'), '-_8'],
    [encoding.b64encode(new Uint8Array([0xfb, 0xff])), '+/8='],
    [encoding.b64decode('aGVsbG8gd29ybGQ=', null, 's'), 'hello world'],
    [encoding.b64decode('aGVsbG8gd29ybGQ=', undefined, 's'), 'hello world'],
    [encoding.b64decode('aGVsbG8gd29ybGQ', 'rawstd', 's'), 'hello world'],
    [encoding.b64decode('-_8=', 'url').byteLength, 2],
    [new Uint8Array(encoding.b64decode('-_8', 'rawurl'))[0], 0xfb],
    [encoding.b64decode('aGk=', null, 'utf8') instanceof ArrayBuffer, true],
    [encoding.b64decode('aGk=') instanceof ArrayBuffer, true],
  ];
  want.forEach(([got, w], i) => { if (got !== w) throw new Error('case ' + i + ': ' + got); });
  encoding.b64decode('-_8=');
}`)
	if n != 1 || !strings.Contains(first, "b64decode: illegal base64 data at input byte 0") {
		t.Errorf("%d errors, first %q; want only the std decode of url text", n, first)
	}
}

// b64encode of something neither string nor bytes throws, as in k6.
func TestEncodingBase64RefusesANumber(t *testing.T) {
	n, first := runOnce(t, `import encoding from 'k6/encoding';
export default function () { encoding.b64encode(5); }`)
	if n != 1 || !strings.Contains(first, "pass a string or an ArrayBuffer") {
		t.Errorf("%d errors, first %q", n, first)
	}
}
