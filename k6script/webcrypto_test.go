package k6script

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"strings"
	"testing"
)

// webCryptoHelpers are the script's byte helpers: hex in and out, and
// ASCII text as bytes.
const webCryptoHelpers = `const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');
const unhex = (s) => new Uint8Array((s.match(/../g) || []).map((h) => parseInt(h, 16)));
const ascii = (s) => new Uint8Array(Array.from(s, (c) => c.charCodeAt(0)));
const subtle = crypto.subtle;
`

// runWebCrypto runs body (an async function's body) in one iteration and
// returns what it returned, or "threw <name>: <message>".
func runWebCrypto(t *testing.T, body string, env map[string]string) string {
	t.Helper()
	s := loadScript(t, webCryptoHelpers+`export default async function () {
  let got;
  try { got = await (async () => {
`+body+`
  })(); } catch (e) { got = 'threw ' + e.name + ': ' + e.message; }
  throw new Error('<<' + got + '>>');
}`, env)
	iterateOnce(t, s)
	n, first := s.IterationErrors()
	i, j := strings.Index(first, "<<"), strings.LastIndex(first, ">>")
	if n != 1 || i < 0 || j < i {
		t.Fatalf("%d iteration errors, first %q; want the one carrying the result", n, first)
	}
	return first[i+2 : j]
}

// The WebCrypto global against published vectors (FIPS 180 "abc",
// RFC 4231, the GCM spec's test cases as in NIST SP 800-38D's validation,
// SP 800-38A's CBC and CTR examples), Go's crypto computed here for what
// has no published vector, and the spec's error names.// webCryptoCase is a script body and what it must return.
type webCryptoCase struct {
	name, body string
	want       string // "threw X" matches as a prefix
}

func runWebCryptoCases(t *testing.T, env map[string]string, cases []webCryptoCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got := runWebCrypto(t, tt.body, env)
			if strings.HasPrefix(tt.want, "threw ") && strings.HasPrefix(got, tt.want) {
				return
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// The scripts' shared openings: a key and its parameters.
const hmacImport = `const k = await subtle.importKey('raw', new Uint8Array(20).fill(0x0b), { name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']);
`
const gcmImport = `const k = await subtle.importKey('raw', unhex('feffe9928665731c6d6a8f9467308308'), 'AES-GCM', true, ['encrypt', 'decrypt']);
const iv = unhex('cafebabefacedbaddecaf888');
const p = unhex('d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39');
const aad = unhex('feedfacedeadbeeffeedfacedeadbeefabaddad2');
`
const cbcImport = `const k = await subtle.importKey('raw', unhex('2b7e151628aed2a6abf7158809cf4f3c'), { name: 'AES-CBC' }, false, ['encrypt', 'decrypt']);
const iv = unhex('000102030405060708090a0b0c0d0e0f');
`
const ctrImport = `const k = await subtle.importKey('raw', unhex('2b7e151628aed2a6abf7158809cf4f3c'), 'AES-CTR', false, ['encrypt', 'decrypt']);
const ctr = unhex('f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff');
const p = unhex('6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51');
`
const pbkdf2Import = `const k = await subtle.importKey('raw', ascii('password'), 'PBKDF2', false, ['deriveBits', 'deriveKey']);
`
const ecImport = `const pub = await subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: __ENV.X, y: __ENV.Y }, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']);
const priv = await subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: __ENV.X, y: __ENV.Y, d: __ENV.D }, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
const ecdsa = { name: 'ECDSA', hash: 'SHA-256' };
`

// ecFixture is a P-256 key made by Go, in the forms the scripts import
// (env), with Go's signature of "hello" and its ECDH secret with another
// key; the script checks Go's signature and Go checks the script's
// (TestWebCryptoOutputsCheckedInGo).
type ecFixture struct {
	env          map[string]string
	spki, shared []byte
}

func newECFixture(t *testing.T) ecFixture {
	t.Helper()
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pt, _ := priv.PublicKey.Bytes()
	d, _ := priv.Bytes()
	msg := []byte("hello")
	sum := sha256.Sum256(msg)
	r, s, _ := ecdsa.Sign(rand.Reader, priv, sum[:])
	goSig := make([]byte, 64)
	r.FillBytes(goSig[:32])
	s.FillBytes(goSig[32:])
	spki, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherPt, _ := other.PublicKey.Bytes()
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(priv)
	eA, _ := priv.ECDH()
	eB, _ := other.PublicKey.ECDH()
	shared, _ := eA.ECDH(eB)
	b64 := base64.RawURLEncoding.EncodeToString
	return ecFixture{spki: spki, shared: shared, env: map[string]string{
		"X": b64(pt[1:33]), "Y": b64(pt[33:]), "D": b64(d), "PT": hex.EncodeToString(pt), "SIG": hex.EncodeToString(goSig),
		"PKCS8": hex.EncodeToString(pkcs8), "OTHER": hex.EncodeToString(otherPt),
	}}
}

// getRandomValues, randomUUID, digest (FIPS 180 "abc") and HMAC
// (RFC 4231), and the spec's error names.
func TestWebCryptoRandomDigestHMAC(t *testing.T) {
	runWebCryptoCases(t, nil, []webCryptoCase{
		// getRandomValues and randomUUID
		{"getRandomValues fills and returns its array", "const a = new Uint32Array(16384); const r = crypto.getRandomValues(a); return (r === a) + ',' + a.some((x) => x !== 0);", "true,true"},
		{"getRandomValues: a subarray only", "const a = new Uint8Array(64); crypto.getRandomValues(a.subarray(8, 16)); return a.slice(0, 8).every((x) => x === 0) + ',' + a.slice(16).every((x) => x === 0);", "true,true"},
		{"getRandomValues: 65536 bytes is the limit", "crypto.getRandomValues(new Uint8Array(65536));\ntry { crypto.getRandomValues(new Int32Array(16385)); } catch (e) { return 'caught ' + e.name; }", "caught QuotaExceededError"},
		{"getRandomValues: floats are refused", "crypto.getRandomValues(new Float64Array(2));", "threw TypeMismatchError"},
		{"randomUUID is v4", "const a = crypto.randomUUID(), b = crypto.randomUUID(); return /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(a) && a !== b;", "true"},

		// digest: FIPS 180 "abc"
		{"SHA-256 abc", "return hex(await subtle.digest('SHA-256', ascii('abc')));", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"SHA-1 abc, lower-case name in an object", "return hex(await subtle.digest({ name: 'sha-1' }, ascii('abc').buffer));", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"SHA-384 abc", "return hex(await subtle.digest('SHA-384', new DataView(ascii('abc').buffer)));", "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"},
		{"SHA-512 abc from a subarray", "return hex(await subtle.digest('SHA-512', ascii('xabcy').subarray(1, 4)));", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
		{"digest MD5 is not WebCrypto", "await subtle.digest('MD5', ascii('abc'));", "threw NotSupportedError"},
		{"digest of a string", "await subtle.digest('SHA-256', 'abc');", "threw TypeError"},

		// HMAC: RFC 4231 test cases 1 and 2
		{"HMAC-SHA-256 RFC 4231 1", hmacImport + "return hex(await subtle.sign('HMAC', k, ascii('Hi There')));", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		{"HMAC-SHA-512 RFC 4231 1", "const k = await subtle.importKey('raw', new Uint8Array(20).fill(0x0b), { name: 'HMAC', hash: { name: 'SHA-512' } }, false, ['sign']);\nreturn hex(await subtle.sign({ name: 'HMAC' }, k, ascii('Hi There')));",
			"87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"},
		{"HMAC-SHA-256 RFC 4231 2 from a JWK", "const k = await subtle.importKey('jwk', { kty: 'oct', k: 'SmVmZQ', alg: 'HS256' }, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);\nreturn hex(await subtle.sign('HMAC', k, ascii('what do ya want for nothing?')));",
			"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{"HMAC verify", hmacImport + "const sig = new Uint8Array(await subtle.sign('HMAC', k, ascii('Hi There')));\nconst ok = await subtle.verify('HMAC', k, sig, ascii('Hi There'));\nsig[0] ^= 1;\nreturn ok + ',' + await subtle.verify('HMAC', k, sig, ascii('Hi There'));", "true,false"},
		{"HMAC export as JWK", "const k = await subtle.importKey('raw', ascii('Jefe'), { name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']);\nconst j = await subtle.exportKey('jwk', k);\nreturn [j.kty, j.k, j.alg, j.ext, j.key_ops.join('+')].join();", "oct,SmVmZQ,HS256,true,sign+verify"},
		{"HMAC generateKey's shape: SHA-256's block of 512 bits", "const k = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify', 'sign']);\nreturn JSON.stringify(k) + ' ' + (await subtle.exportKey('raw', k)).byteLength;",
			`{"type":"secret","extractable":true,"algorithm":{"name":"HMAC","hash":{"name":"SHA-256"},"length":512},"usages":["sign","verify"]} 64`},
		{"HMAC JWK with the wrong alg", "await subtle.importKey('jwk', { kty: 'oct', k: 'SmVmZQ', alg: 'HS512' }, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);", "threw DataError"},
		{"HMAC key not extractable", "const k = await subtle.importKey('raw', ascii('Jefe'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);\nawait subtle.exportKey('raw', k);", "threw InvalidAccessError"},
		{"HMAC key without sign", "const k = await subtle.importKey('raw', ascii('Jefe'), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);\nawait subtle.sign('HMAC', k, ascii('x'));", "threw InvalidAccessError"},
		{"HMAC usage encrypt", "await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['encrypt']);", "threw SyntaxError"},
		{"HMAC with no usage", "await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, []);", "threw SyntaxError"},
	})
}

// AES against the GCM spec's test cases (as in NIST SP 800-38D's
// validation) and SP 800-38A's CBC and CTR examples, with Go's crypto
// computing what has no published vector.
func TestWebCryptoAES(t *testing.T) {
	// SP 800-38A F.2.1: CBC-AES128 block 1; WebCrypto adds a PKCS#7 block
	// of sixteen 0x10 bytes, whose ciphertext is computed here.
	cbcKey, _ := hex.DecodeString("2b7e151628aed2a6abf7158809cf4f3c")
	block, _ := aes.NewCipher(cbcKey)
	c1, _ := hex.DecodeString("7649abac8119b246cee98e9b12e9197d")
	pad := make([]byte, 16)
	for i := range pad {
		pad[i] = 0x10 ^ c1[i]
	}
	block.Encrypt(pad, pad)
	cbcWant := "7649abac8119b246cee98e9b12e9197d" + hex.EncodeToString(pad)

	// CTR with a 64-bit counter and no wrap agrees with Go's cipher.NewCTR.
	ctrIV, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f")
	ctrPlain := []byte("fifty-six bytes of text, three blocks and a half of it.")
	ctrGo := make([]byte, len(ctrPlain))
	cipher.NewCTR(block, ctrIV).XORKeyStream(ctrGo, ctrPlain)
	// With length 8 and a counter ending ff, the second block's counter
	// wraps to ...00 with the other 120 bits unchanged.
	wrapped, _ := hex.DecodeString("f0f1f2f3f4f5f6f7f8f9fafbfcfdfe00")
	ks := make([]byte, 16)
	block.Encrypt(ks, wrapped)
	p2, _ := hex.DecodeString("ae2d8a571e03ac9c9eb76fac45af8e51")
	for i := range ks {
		ks[i] ^= p2[i]
	}
	ctrWrap := "874d6191b620e3261bef6864990db6ce" + hex.EncodeToString(ks)
	runWebCryptoCases(t, nil, []webCryptoCase{
		// AES-GCM: the GCM spec's test cases 1 to 4 (AES-128)
		{"AES-GCM 1: empty plaintext, the tag alone", "const k = await subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', false, ['encrypt']);\nreturn hex(await subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, k, new Uint8Array(0)));", "58e2fccefa7e3061367f1d57a4e7455a"},
		{"AES-GCM 2", "const k = await subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', false, ['encrypt']);\nreturn hex(await subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, k, new Uint8Array(16)));", "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf"},
		{"AES-GCM 2 with a 96-bit tag: the tag's first 12 bytes", "const k = await subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', false, ['encrypt']);\nreturn hex(await subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12), tagLength: 96 }, k, new Uint8Array(16)));", "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b2"},
		{"AES-GCM 4: with additionalData", gcmImport + "return hex(await subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad }, k, p));",
			"42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e0915bc94fbc3221a5db94fae95ae7121a47"},
		{"AES-GCM 4 decrypts", gcmImport + "const c = await subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad }, k, p);\nreturn hex(await subtle.decrypt({ name: 'AES-GCM', iv, additionalData: aad }, k, c)) === hex(p);", "true"},
		{"AES-GCM altered ciphertext", gcmImport + "const c = new Uint8Array(await subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad }, k, p));\nc[0] ^= 1;\nawait subtle.decrypt({ name: 'AES-GCM', iv, additionalData: aad }, k, c);", "threw OperationError"},
		{"AES-GCM from a JWK, exported back", "const k = await subtle.importKey('jwk', { kty: 'oct', k: '_v_pkoZlcxxtao-UZzCDCA', alg: 'A128GCM', ext: true }, { name: 'AES-GCM' }, true, ['encrypt', 'decrypt']);\nconst j = await subtle.exportKey('jwk', k);\nreturn [j.k, j.alg, hex(await subtle.exportKey('raw', k))].join();",
			"_v_pkoZlcxxtao-UZzCDCA,A128GCM,feffe9928665731c6d6a8f9467308308"},
		{"AES-GCM 64-bit tag", gcmImport + "await subtle.encrypt({ name: 'AES-GCM', iv, tagLength: 64 }, k, p);", "threw NotSupportedError"},
		{"AES key of 10 bytes", "await subtle.importKey('raw', new Uint8Array(10), 'AES-GCM', false, ['encrypt']);", "threw DataError"},
		{"AES generateKey 256, exported", "const k = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']);\nreturn JSON.stringify(k.algorithm) + ' ' + k.type + ' ' + (await subtle.exportKey('raw', k)).byteLength;", `{"name":"AES-GCM","length":256} secret 32`},
		{"AES generateKey 100 bits", "await subtle.generateKey({ name: 'AES-CBC', length: 100 }, true, ['encrypt']);", "threw OperationError"},
		{"AES-GCM with an HMAC key", "const k = await subtle.importKey('raw', ascii('Jefe'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);\nawait subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, k, ascii('x'));", "threw InvalidAccessError"},

		// AES-CBC: SP 800-38A F.2.1 block 1 and its padding block
		{"AES-CBC SP 800-38A", cbcImport + "return hex(await subtle.encrypt({ name: 'AES-CBC', iv }, k, unhex('6bc1bee22e409f96e93d7e117393172a')));", cbcWant},
		{"AES-CBC round trip of 0 to 33 bytes", cbcImport + "const out = [];\nfor (let n = 0; n < 34; n++) {\n  const p = new Uint8Array(n).fill(n);\n  const c = await subtle.encrypt({ name: 'AES-CBC', iv }, k, p);\n  out.push(c.byteLength === 16 * (Math.floor(n / 16) + 1) && hex(await subtle.decrypt({ name: 'AES-CBC', iv }, k, c)) === hex(p));\n}\nreturn out.every((x) => x);", "true"},
		{"AES-CBC wrong key: bad padding", cbcImport + "const c = await subtle.encrypt({ name: 'AES-CBC', iv }, k, ascii('secret'));\nconst k2 = await subtle.importKey('raw', new Uint8Array(16), 'AES-CBC', false, ['decrypt']);\nawait subtle.decrypt({ name: 'AES-CBC', iv }, k2, c);", "threw OperationError"},
		{"AES-CBC 15-byte iv", cbcImport + "await subtle.encrypt({ name: 'AES-CBC', iv: new Uint8Array(15) }, k, ascii('x'));", "threw OperationError"},

		// AES-CTR: SP 800-38A F.5.1 blocks 1 and 2
		{"AES-CTR SP 800-38A", ctrImport + "return hex(await subtle.encrypt({ name: 'AES-CTR', counter: ctr, length: 128 }, k, p));", "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"},
		{"AES-CTR 8-bit counter wraps in its bits", ctrImport + "return hex(await subtle.encrypt({ name: 'AES-CTR', counter: ctr, length: 8 }, k, p));", ctrWrap},
		{"AES-CTR as Go's cipher.NewCTR", "const k = await subtle.importKey('raw', unhex('2b7e151628aed2a6abf7158809cf4f3c'), 'AES-CTR', false, ['encrypt', 'decrypt']);\nconst a = { name: 'AES-CTR', counter: unhex('000102030405060708090a0b0c0d0e0f'), length: 64 };\nconst c = await subtle.encrypt(a, k, ascii('fifty-six bytes of text, three blocks and a half of it.'));\nreturn hex(c) + ',' + String.fromCharCode(...new Uint8Array(await subtle.decrypt(a, k, c)));",
			hex.EncodeToString(ctrGo) + "," + string(ctrPlain)},
		{"AES-CTR 1-bit counter, 3 blocks", ctrImport + "await subtle.encrypt({ name: 'AES-CTR', counter: ctr, length: 1 }, k, new Uint8Array(33));", "threw OperationError"},
		{"AES-CTR length 0", ctrImport + "await subtle.encrypt({ name: 'AES-CTR', counter: ctr, length: 0 }, k, p);", "threw OperationError"},
	})
}

// ECDSA and ECDH against Go's keys, signatures and shared secrets.
func TestWebCryptoEC(t *testing.T) {
	f := newECFixture(t)
	env, spki, shared := f.env, f.spki, f.shared
	runWebCryptoCases(t, env, []webCryptoCase{
		// ECDSA and ECDH with Go's keys
		{"ECDSA verifies Go's signature", ecImport + "const sig = unhex(__ENV.SIG);\nconst ok = await subtle.verify(ecdsa, pub, sig, ascii('hello'));\nconst other = await subtle.verify(ecdsa, pub, sig, ascii('hellO'));\nconst short = await subtle.verify(ecdsa, pub, sig.subarray(1), ascii('hello'));\nreturn [ok, other, short].join();", "true,false,false"},
		{"ECDSA signs, raw public key verifies", ecImport + "const sig = await subtle.sign(ecdsa, priv, ascii('hello'));\nconst raw = await subtle.importKey('raw', unhex(__ENV.PT), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']);\nreturn sig.byteLength + ',' + await subtle.verify(ecdsa, raw, sig, ascii('hello'));", "64,true"},
		{"ECDSA public key exports", ecImport + "return hex(await subtle.exportKey('spki', pub)) + ',' + hex(await subtle.exportKey('raw', pub)) + ',' + (await subtle.exportKey('jwk', pub)).x;", hex.EncodeToString(spki) + "," + env["PT"] + "," + env["X"]},
		{"ECDSA private key not extractable", ecImport + "await subtle.exportKey('jwk', priv);", "threw InvalidAccessError"},
		{"ECDSA verify with the private key", ecImport + "await subtle.verify(ecdsa, priv, new Uint8Array(64), ascii('hello'));", "threw InvalidAccessError"},
		{"ECDSA P-384 and P-521 round trips", "const out = [];\nfor (const [c, h] of [['P-384', 'SHA-384'], ['P-521', 'SHA-512']]) {\n  const kp = await subtle.generateKey({ name: 'ECDSA', namedCurve: c }, true, ['sign', 'verify']);\n  const sig = await subtle.sign({ name: 'ECDSA', hash: h }, kp.privateKey, ascii('m'));\n  out.push(c, sig.byteLength, await subtle.verify({ name: 'ECDSA', hash: h }, kp.publicKey, sig, ascii('m')), kp.privateKey.usages.join('+'), kp.publicKey.usages.join('+'), kp.publicKey.algorithm.namedCurve);\n}\nreturn out.join();",
			"P-384,96,true,sign,verify,P-384,P-521,132,true,sign,verify,P-521"},
		{"ECDSA JWK private key round trip", "const kp = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);\nconst j = await subtle.exportKey('jwk', kp.privateKey);\nconst k = await subtle.importKey('jwk', j, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);\nconst sig = await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, k, ascii('m'));\nreturn [j.kty, j.crv, j.d.length, await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, kp.publicKey, sig, ascii('m'))].join();", "EC,P-256,43,true"},
		{"ECDSA JWK keeps its own curve, as k6", "const k = await subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: __ENV.X, y: __ENV.Y }, { name: 'ECDSA', namedCurve: 'P-384' }, true, ['verify']);\nreturn k.algorithm.namedCurve + ',' + await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, k, unhex(__ENV.SIG), ascii('hello'));", "P-256,true"},
		{"ECDSA P-192", "await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-192' }, true, ['sign']);", "threw NotSupportedError"},
		{"ECDH derives Go's shared secret", "const a = await subtle.importKey('pkcs8', unhex(__ENV.PKCS8), { name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);\nconst b = await subtle.importKey('raw', unhex(__ENV.OTHER), { name: 'ECDH', namedCurve: 'P-256' }, false, []);\nreturn hex(await subtle.deriveBits({ name: 'ECDH', public: b }, a, 256)) + ',' + hex(await subtle.deriveBits({ name: 'ECDH', public: b }, a, 12));",
			hex.EncodeToString(shared) + "," + hex.EncodeToString([]byte{shared[0], shared[1] & 0xf0})},
		{"ECDH generated pairs agree", "const p = { name: 'ECDH', namedCurve: 'P-384' };\nconst a = await subtle.generateKey(p, false, ['deriveBits']);\nconst b = await subtle.generateKey(p, false, ['deriveBits']);\nconst x = await subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 384);\nconst y = await subtle.deriveBits({ name: 'ECDH', public: a.publicKey }, b.privateKey, 384);\nreturn x.byteLength + ',' + (hex(x) === hex(y));", "48,true"},
	})
}

// PBKDF2 (RFC 6070) and deriveKey, and RSA with a key Go made.
func TestWebCryptoDeriveRSA(t *testing.T) {
	f := newECFixture(t)
	env, shared := f.env, f.shared
	sum := sha256.Sum256([]byte("hello"))
	b64 := base64.RawURLEncoding.EncodeToString
	// An RSA key made by Go: PKCS#1 v1.5 signatures are deterministic, so
	// the script's must equal Go's; Go's PSS signature and OAEP
	// ciphertext must verify and decrypt in the script.
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaPKCS8, _ := x509.MarshalPKCS8PrivateKey(rk)
	rsaSPKI, _ := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	rsaSig, _ := rsa.SignPKCS1v15(nil, rk, crypto.SHA256, sum[:])
	pssSig, _ := rsa.SignPSS(rand.Reader, rk, crypto.SHA256, sum[:], &rsa.PSSOptions{SaltLength: 32})
	oaep, _ := rsa.EncryptOAEP(sha256.New(), rand.Reader, &rk.PublicKey, []byte("knee"), []byte("label"))
	env["RSA_PKCS8"], env["RSA_SPKI"] = hex.EncodeToString(rsaPKCS8), hex.EncodeToString(rsaSPKI)
	env["PSS"], env["OAEP"] = hex.EncodeToString(pssSig), hex.EncodeToString(oaep)
	runWebCryptoCases(t, env, []webCryptoCase{
		// PBKDF2-HMAC-SHA1: RFC 6070's vectors 1 to 3; deriveKey
		{"PBKDF2 RFC 6070 1-3", pbkdf2Import + "const out = [];\nfor (const c of [1, 2, 4096]) out.push(hex(await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-1', salt: ascii('salt'), iterations: c }, k, 160)));\nreturn out.join();",
			"0c60c80f961f0e71f3a9b524af6012062fe037a6,ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957,4b007901b765489abead49d926f721d065a429c1"},
		{"PBKDF2 deriveKey to AES-GCM: the first 128 bits", pbkdf2Import + "const a = await subtle.deriveKey({ name: 'PBKDF2', hash: 'SHA-1', salt: ascii('salt'), iterations: 2 }, k, { name: 'AES-GCM', length: 128 }, true, ['encrypt']);\nreturn JSON.stringify(a.algorithm) + ' ' + a.usages + ' ' + hex(await subtle.exportKey('raw', a));",
			`{"name":"AES-GCM","length":128} encrypt ea6c014dc72d6f8ccd1ed92ace1d41f0`},
		{"PBKDF2 key extractable", "await subtle.importKey('raw', ascii('password'), 'PBKDF2', true, ['deriveBits']);", "threw SyntaxError"},
		{"PBKDF2 0 iterations", pbkdf2Import + "await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-1', salt: ascii('salt'), iterations: 0 }, k, 160);", "threw OperationError"},
		{"PBKDF2 key without deriveKey", "const k = await subtle.importKey('raw', ascii('password'), 'PBKDF2', false, ['deriveBits']);\nawait subtle.deriveKey({ name: 'PBKDF2', hash: 'SHA-1', salt: ascii('salt'), iterations: 1 }, k, { name: 'AES-GCM', length: 128 }, true, ['encrypt']);", "threw InvalidAccessError"},
		{"ECDH deriveKey to HMAC: Go's shared secret", "const a = await subtle.importKey('pkcs8', unhex(__ENV.PKCS8), { name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveKey']);\nconst b = await subtle.importKey('raw', unhex(__ENV.OTHER), { name: 'ECDH', namedCurve: 'P-256' }, false, []);\nconst h = await subtle.deriveKey({ name: 'ECDH', public: b }, a, { name: 'HMAC', hash: 'SHA-256', length: 256 }, true, ['sign']);\nreturn hex(await subtle.exportKey('raw', h));",
			hex.EncodeToString(shared)},

		// RSA with Go's key
		{"RSASSA-PKCS1-v1_5 signs as Go", "const k = await subtle.importKey('pkcs8', unhex(__ENV.RSA_PKCS8), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);\nreturn hex(await subtle.sign('RSASSA-PKCS1-v1_5', k, ascii('hello')));", hex.EncodeToString(rsaSig)},
		{"RSASSA-PKCS1-v1_5 via JWK", "const k = await subtle.importKey('pkcs8', unhex(__ENV.RSA_PKCS8), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['sign']);\nconst j = await subtle.exportKey('jwk', k);\nconst k2 = await subtle.importKey('jwk', j, { name: 'rsassa-pkcs1-v1_5', hash: 'SHA-256' }, false, ['sign']);\nreturn j.alg + ',' + k2.algorithm.name + ',' + hex(await subtle.sign({ name: 'RSASSA-PKCS1-v1_5' }, k2, ascii('hello')));", "RS256,RSASSA-PKCS1-v1_5," + hex.EncodeToString(rsaSig)},
		{"RSA public key exports", "const k = await subtle.importKey('spki', unhex(__ENV.RSA_SPKI), { name: 'RSA-PSS', hash: 'SHA-256' }, true, ['verify']);\nconst j = await subtle.exportKey('jwk', k);\nreturn [j.kty, j.alg, j.e, j.n, hex(await subtle.exportKey('spki', k)), k.algorithm.modulusLength, Array.from(k.algorithm.publicExponent).join('.')].join();",
			"RSA,PS256,AQAB," + b64(rk.N.Bytes()) + "," + hex.EncodeToString(rsaSPKI) + ",2048,1.0.1"},
		{"RSA-PSS verifies Go's signature", "const k = await subtle.importKey('spki', unhex(__ENV.RSA_SPKI), { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['verify']);\nconst p = { name: 'RSA-PSS', saltLength: 32 };\nreturn [await subtle.verify(p, k, unhex(__ENV.PSS), ascii('hello')), await subtle.verify(p, k, unhex(__ENV.PSS), ascii('hellO'))].join();", "true,false"},
		{"RSA-PSS saltLength 0", "const k = await subtle.importKey('pkcs8', unhex(__ENV.RSA_PKCS8), { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['sign']);\nawait subtle.sign({ name: 'RSA-PSS', saltLength: 0 }, k, ascii('hello'));", "threw NotSupportedError"},
		{"RSA-OAEP decrypts Go's ciphertext", "const k = await subtle.importKey('pkcs8', unhex(__ENV.RSA_PKCS8), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['decrypt']);\nreturn String.fromCharCode(...new Uint8Array(await subtle.decrypt({ name: 'RSA-OAEP', label: ascii('label') }, k, unhex(__ENV.OAEP))));", "knee"},
		{"RSA-OAEP wrong label", "const k = await subtle.importKey('pkcs8', unhex(__ENV.RSA_PKCS8), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['decrypt']);\nawait subtle.decrypt({ name: 'RSA-OAEP' }, k, unhex(__ENV.OAEP));", "threw OperationError"},
		{"RSA generateKey round trips", "const out = [];\nconst s = await subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign', 'verify']);\nconst sig = await subtle.sign('RSASSA-PKCS1-v1_5', s.privateKey, ascii('m'));\nout.push(s.privateKey.algorithm.modulusLength, sig.byteLength, await subtle.verify('RSASSA-PKCS1-v1_5', s.publicKey, sig, ascii('m')));\nconst o = await subtle.generateKey({ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-1' }, false, ['encrypt', 'decrypt']);\nconst c = await subtle.encrypt({ name: 'RSA-OAEP' }, o.publicKey, ascii('m'));\nout.push(o.publicKey.usages.join('+'), o.privateKey.usages.join('+'), String.fromCharCode(...new Uint8Array(await subtle.decrypt({ name: 'RSA-OAEP' }, o.privateKey, c))));\nreturn out.join();",
			"1024,128,true,encrypt,decrypt,m"},
		{"RSA publicExponent 3", "await subtle.generateKey({ name: 'RSA-PSS', modulusLength: 1024, publicExponent: new Uint8Array([3]), hash: 'SHA-256' }, true, ['sign']);", "threw NotSupportedError"},
	})
}

// AES-KW (RFC 3394), wrapKey and unwrapKey, and errors common to all.
func TestWebCryptoWrap(t *testing.T) {
	runWebCryptoCases(t, nil, []webCryptoCase{
		// AES-KW: RFC 3394's 4.1 and 4.6; wrapKey and unwrapKey
		{"AES-KW RFC 3394 4.1", "const kek = await subtle.importKey('raw', unhex('000102030405060708090a0b0c0d0e0f'), 'AES-KW', false, ['wrapKey']);\nconst k = await subtle.importKey('raw', unhex('00112233445566778899aabbccddeeff'), 'AES-GCM', true, ['encrypt']);\nreturn hex(await subtle.wrapKey('raw', k, kek, 'AES-KW'));", "1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5"},
		{"AES-KW RFC 3394 4.6 unwraps", "const kek = await subtle.importKey('raw', unhex('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'), { name: 'AES-KW' }, false, ['unwrapKey']);\nconst k = await subtle.unwrapKey('raw', unhex('28c9f404c4b810f4cbccb35cfb87f8263f5786e2d80ed326cbc7f0e71a99f43bfb988b9b7a02dd21'), kek, 'AES-KW', 'AES-CBC', true, ['decrypt']);\nreturn k.algorithm.name + ',' + k.algorithm.length + ',' + hex(await subtle.exportKey('raw', k));",
			"AES-CBC,256,00112233445566778899aabbccddeeff000102030405060708090a0b0c0d0e0f"},
		{"AES-KW altered", "const kek = await subtle.importKey('raw', unhex('000102030405060708090a0b0c0d0e0f'), 'AES-KW', false, ['unwrapKey']);\nawait subtle.unwrapKey('raw', unhex('1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe4'), kek, 'AES-KW', 'AES-GCM', true, ['encrypt']);", "threw OperationError"},
		{"AES-KW does not encrypt", "const kek = await subtle.generateKey({ name: 'AES-KW', length: 128 }, false, ['wrapKey']);\nawait subtle.encrypt('AES-KW', kek, new Uint8Array(16));", "threw NotSupportedError"},
		{"AES-KW JWK alg", "const kek = await subtle.generateKey({ name: 'AES-KW', length: 192 }, true, ['wrapKey', 'unwrapKey']);\nreturn (await subtle.exportKey('jwk', kek)).alg;", "A192KW"},
		{"wrapKey jwk with AES-GCM, unwrapped HMAC key signs as before", hmacImport + "const kek = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['wrapKey', 'unwrapKey']);\nconst iv = new Uint8Array(12);\nconst w = await subtle.wrapKey('jwk', k, kek, { name: 'AES-GCM', iv });\nconst k2 = await subtle.unwrapKey('jwk', w, kek, { name: 'AES-GCM', iv }, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);\nreturn hex(await subtle.sign('HMAC', k2, ascii('Hi There')));",
			"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		{"wrapKey with RSA-OAEP", "const rsa = await subtle.generateKey({ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, false, ['wrapKey', 'unwrapKey']);\nconst k = await subtle.importKey('raw', unhex('00112233445566778899aabbccddeeff'), 'AES-CTR', true, ['encrypt']);\nconst w = await subtle.wrapKey('raw', k, rsa.publicKey, 'RSA-OAEP');\nconst k2 = await subtle.unwrapKey('raw', w, rsa.privateKey, 'RSA-OAEP', 'AES-CTR', true, ['encrypt']);\nreturn w.byteLength + ',' + hex(await subtle.exportKey('raw', k2));", "128,00112233445566778899aabbccddeeff"},
		{"wrapKey of a key not extractable", "const kek = await subtle.generateKey({ name: 'AES-KW', length: 128 }, false, ['wrapKey']);\nconst k = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt']);\nawait subtle.wrapKey('raw', k, kek, 'AES-KW');", "threw InvalidAccessError"},
		{"wrapKey with a key without wrapKey", "const kek = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt']);\nconst k = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']);\nawait subtle.wrapKey('raw', k, kek, { name: 'AES-GCM', iv: new Uint8Array(12) });", "threw InvalidAccessError"},
		{"an unknown algorithm", "await subtle.generateKey({ name: 'Ed25519' }, true, ['sign']);", "threw NotSupportedError: crypto.subtle.generateKey does not take algorithm \"ED25519\""},
		{"a key that is not a CryptoKey", "await subtle.sign('HMAC', { type: 'secret' }, ascii('x'));", "threw TypeError"},
	})
}

// A signature the script makes verifies with Go's ecdsa, r and s each 32
// bytes for P-256, and its RSA-OAEP ciphertext decrypts with Go's rsa.
func TestWebCryptoOutputsCheckedInGo(t *testing.T) {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(priv)
	sig := runWebCrypto(t, `const k = await subtle.importKey('pkcs8', unhex(__ENV.PKCS8), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
return hex(await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, k, ascii('hello')));`, map[string]string{"PKCS8": hex.EncodeToString(pkcs8)})
	b, err := hex.DecodeString(sig)
	if err != nil || len(b) != 64 {
		t.Fatalf("signature %q: want 64 bytes of hex", sig)
	}
	sum := sha256.Sum256([]byte("hello"))
	if !ecdsa.Verify(&priv.PublicKey, sum[:], new(big.Int).SetBytes(b[:32]), new(big.Int).SetBytes(b[32:])) {
		t.Errorf("Go does not verify the script's signature %s", sig)
	}

	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	spki, _ := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	ct := runWebCrypto(t, `const k = await subtle.importKey('spki', unhex(__ENV.SPKI), { name: 'RSA-OAEP', hash: 'SHA-384' }, false, ['encrypt']);
return hex(await subtle.encrypt({ name: 'RSA-OAEP', label: ascii('L') }, k, ascii('hello')));`, map[string]string{"SPKI": hex.EncodeToString(spki)})
	b, err = hex.DecodeString(ct)
	if err != nil {
		t.Fatalf("ciphertext %q: want hex", ct)
	}
	plain, err := rsa.DecryptOAEP(sha512.New384(), nil, rk, b, []byte("L"))
	if err != nil || string(plain) != "hello" {
		t.Errorf("Go decrypts the script's ciphertext to %q, %v; want hello", plain, err)
	}
}

// A rejection the script does not catch is an iteration error with the
// error's name, as an exception is.
func TestWebCryptoRejectionIsAnIterationError(t *testing.T) {
	s := loadScript(t, `export default async function () {
  await crypto.subtle.digest('SHA-3', new Uint8Array(1));
}`, nil)
	iterateOnce(t, s)
	n, first := s.IterationErrors()
	if n != 1 || !strings.Contains(first, "NotSupportedError") || !strings.Contains(first, `"SHA-3"`) {
		t.Errorf("%d errors, first %q; want one NotSupportedError naming SHA-3", n, first)
	}
}
