package k6script

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"slices"
	"strings"

	"github.com/dop251/goja"
)

// webCrypto is the global crypto of the WebCrypto API as k6 has it:
// getRandomValues, randomUUID and crypto.subtle's digest, generateKey,
// importKey, exportKey, sign, verify, encrypt, decrypt, deriveBits,
// deriveKey, wrapKey and unwrapKey for SHA-1/256/384/512, HMAC, AES-CBC,
// AES-CTR, AES-GCM, AES-KW, ECDSA and ECDH (P-256, P-384, P-521), PBKDF2,
// RSASSA-PKCS1-v1_5, RSA-PSS and RSA-OAEP (webcrypto_rsa.go). Every
// subtle method returns a Promise settled before it returns (the work is
// done on the VU's goroutine, as asyncRequest's is); a failure rejects it
// with an Error whose name is the spec's (NotSupportedError,
// InvalidAccessError, OperationError, DataError, SyntaxError, TypeError).
type webCrypto struct {
	rt *goja.Runtime
	// slot keys each CryptoKey object's Go half (a *cryptoKey), out of the
	// script's reach and out of JSON.stringify's, as the spec's internal
	// slot [[handle]] is.
	slot *goja.Symbol
}

// cryptoError is a rejection with a WebCrypto error name.
type cryptoError struct{ name, msg string }

func (e *cryptoError) Error() string { return e.name + ": " + e.msg }

func cerr(name, format string, a ...any) error {
	return &cryptoError{name: name, msg: fmt.Sprintf(format, a...)}
}

// cryptoKey is a CryptoKey's internal slots.
type cryptoKey struct {
	typ         string // "secret", "private", "public"
	extractable bool
	alg         string   // normalized name: "HMAC", "AES-GCM", "ECDSA", ...
	hash        string   // HMAC's hash: "SHA-256", ...
	curve       string   // EC's named curve: "P-256", ...
	usages      []string // in the order given, duplicates dropped
	secret      []byte   // HMAC and AES
	priv        *ecdsa.PrivateKey
	pub         *ecdsa.PublicKey
	rsaPriv     *rsa.PrivateKey
	rsaPub      *rsa.PublicKey
}

// installWebCrypto sets the global crypto.
func installWebCrypto(rt *goja.Runtime) {
	w := &webCrypto{rt: rt, slot: goja.NewSymbol("[[handle]]")}
	o := rt.NewObject()
	must(o.Set("getRandomValues", w.getRandomValues))
	must(o.Set("randomUUID", func() string { return randomUUID() }))
	s := rt.NewObject()
	for name, fn := range map[string]func(goja.FunctionCall) (goja.Value, error){
		"digest":      w.digest,
		"generateKey": w.generateKey,
		"importKey":   w.importKey,
		"exportKey":   w.exportKey,
		"sign":        w.sign,
		"verify":      w.verify,
		"encrypt":     w.encrypt,
		"decrypt":     w.decrypt,
		"deriveBits":  w.deriveBits,
		"deriveKey":   w.deriveKey,
		"wrapKey":     w.wrapKey,
		"unwrapKey":   w.unwrapKey,
	} {
		must(s.Set(name, w.promised(fn)))
	}
	must(o.Set("subtle", s))
	must(rt.GlobalObject().Set("crypto", o))
}

// promised makes fn a subtle method: its result or error settles the
// Promise returned, and an exception thrown while reading the arguments
// rejects it too, as in an async function.
func (w *webCrypto) promised(fn func(goja.FunctionCall) (goja.Value, error)) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		p, resolve, reject := w.rt.NewPromise()
		val, err := func() (val goja.Value, err error) {
			defer func() {
				if r := recover(); r != nil {
					ex, ok := r.(*goja.Exception)
					if !ok {
						panic(r) // an interrupt, or a bug: not the script's to catch
					}
					val, err = nil, ex
				}
			}()
			return fn(call)
		}()
		var ex *goja.Exception
		switch {
		case errors.As(err, &ex):
			must(reject(ex.Value()))
		case err != nil:
			must(reject(w.errorValue(err)))
		default:
			must(resolve(val))
		}
		return w.rt.ToValue(p)
	}
}

// errorValue is err as a JavaScript Error named as the spec's DOMException
// (err.name === 'OperationError'), whose message names the operation.
func (w *webCrypto) errorValue(err error) goja.Value {
	var ce *cryptoError
	if !errors.As(err, &ce) {
		ce = &cryptoError{name: "OperationError", msg: err.Error()}
	}
	if ce.name == "TypeError" {
		return w.rt.NewTypeError(ce.msg)
	}
	ctor, _ := goja.AssertConstructor(w.rt.GlobalObject().Get("Error"))
	if ctor == nil {
		return w.rt.ToValue(ce.Error())
	}
	o, cerr := ctor(nil, w.rt.ToValue(ce.msg))
	if cerr != nil {
		return w.rt.ToValue(ce.Error())
	}
	must(o.Set("name", ce.name))
	return o
}

// getRandomValues fills an integer typed array with random bytes and
// returns it; more than 65,536 bytes is a QuotaExceededError.
func (w *webCrypto) getRandomValues(arr goja.Value) goja.Value {
	ok := false
	for _, name := range []string{"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "BigInt64Array", "BigUint64Array"} {
		if ctor, isObj := w.rt.GlobalObject().Get(name).(*goja.Object); isObj && w.rt.InstanceOf(arr, ctor) {
			ok = true
			break
		}
	}
	if !ok {
		panic(w.errorValue(cerr("TypeMismatchError", "crypto.getRandomValues: give an integer typed array (Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array)")))
	}
	b, _ := w.viewBytes(arr)
	if len(b) > 65536 {
		panic(w.errorValue(cerr("QuotaExceededError", "crypto.getRandomValues: %d bytes asked, at most 65536", len(b))))
	}
	rand.Read(b)
	return arr
}

// randomUUID is an RFC 9562 version 4 UUID.
func randomUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant 10
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// viewBytes is the bytes an ArrayBuffer, a typed array or a DataView
// holds, shared with the script (not copied).
func (w *webCrypto) viewBytes(v goja.Value) ([]byte, bool) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, false
	}
	if ab, ok := v.Export().(goja.ArrayBuffer); ok {
		return ab.Bytes(), true
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return nil, false
	}
	buf := obj.Get("buffer")
	if buf == nil {
		return nil, false
	}
	ab, ok := buf.Export().(goja.ArrayBuffer)
	if !ok {
		return nil, false
	}
	off, n := obj.Get("byteOffset").ToInteger(), obj.Get("byteLength").ToInteger()
	b := ab.Bytes()
	if off < 0 || n < 0 || off+n > int64(len(b)) {
		return nil, false
	}
	return b[off : off+n], true
}

// bufferSource is a copy of a BufferSource argument's bytes.
func (w *webCrypto) bufferSource(v goja.Value, what string) ([]byte, error) {
	b, ok := w.viewBytes(v)
	if !ok {
		return nil, cerr("TypeError", "%s must be an ArrayBuffer, a typed array or a DataView", what)
	}
	return slices.Clone(b), nil
}

// algorithm reads an AlgorithmIdentifier: a name or an object with one.
// The name is upper-cased (names are case-insensitive).
func (w *webCrypto) algorithm(v goja.Value) (string, *goja.Object, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return "", nil, cerr("TypeError", "the algorithm is missing: give its name or an object with one")
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return canonicalAlg(v.String()), w.rt.NewObject(), nil
	}
	name := obj.Get("name")
	if name == nil || goja.IsUndefined(name) {
		return "", nil, cerr("TypeError", "the algorithm object has no name")
	}
	return canonicalAlg(name.String()), obj, nil
}

// canonicalAlg is an algorithm name as the spec spells it: upper case,
// but RSASSA-PKCS1-v1_5.
func canonicalAlg(name string) string {
	if up := strings.ToUpper(name); up != strings.ToUpper(rsaPKCS1) {
		return up
	}
	return rsaPKCS1
}

// hashName is a hash algorithm's name, "SHA-256" etc.
func (w *webCrypto) hashName(v goja.Value) (string, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return "", cerr("TypeError", "the algorithm's hash is missing")
	}
	name, _, err := w.algorithm(v)
	if err != nil {
		return "", err
	}
	if newHash(name) == nil {
		return "", cerr("NotSupportedError", "hash algorithm %q: use SHA-1, SHA-256, SHA-384 or SHA-512", name)
	}
	return name, nil
}

func newHash(name string) func() hash.Hash {
	switch name {
	case "SHA-1":
		return sha1.New
	case "SHA-256":
		return sha256.New
	case "SHA-384":
		return sha512.New384
	case "SHA-512":
		return sha512.New
	}
	return nil
}

func (w *webCrypto) digest(call goja.FunctionCall) (goja.Value, error) {
	name, _, err := w.algorithm(call.Argument(0))
	if err != nil {
		return nil, err
	}
	mk := newHash(name)
	if mk == nil {
		return nil, cerr("NotSupportedError", "digest algorithm %q: use SHA-1, SHA-256, SHA-384 or SHA-512", name)
	}
	data, err := w.bufferSource(call.Argument(1), "digest's data")
	if err != nil {
		return nil, err
	}
	h := mk()
	h.Write(data)
	return w.rt.ToValue(w.rt.NewArrayBuffer(h.Sum(nil))), nil
}

// curves are the named curves of ECDSA and ECDH.
func curveOf(name string) elliptic.Curve {
	switch name {
	case "P-256":
		return elliptic.P256()
	case "P-384":
		return elliptic.P384()
	case "P-521":
		return elliptic.P521()
	}
	return nil
}

const aesKW = "AES-KW"

func isAES(alg string) bool {
	return alg == "AES-CBC" || alg == "AES-CTR" || alg == "AES-GCM" || alg == aesKW
}

// badAlg rejects an algorithm op does not take (or that is unknown).
func badAlg(op, alg string) error {
	return cerr("NotSupportedError", "crypto.subtle.%s does not take algorithm %q", op, alg)
}

// usages reads keyUsages and checks each is one alg allows.
func (w *webCrypto) usages(v goja.Value, allowed ...string) ([]string, error) {
	var list []string
	if v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
		if err := w.rt.ExportTo(v, &list); err != nil {
			return nil, cerr("TypeError", "keyUsages must be an array of strings")
		}
	}
	var out []string
	for _, u := range list {
		if !slices.Contains(allowed, u) {
			return nil, cerr("SyntaxError", "key usage %q is not one of %s", u, strings.Join(allowed, ", "))
		}
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out, nil
}

func keyUsagesFor(alg, typ string) []string {
	switch {
	case alg == "HMAC":
		return []string{"sign", "verify"}
	case alg == aesKW:
		return []string{"wrapKey", "unwrapKey"}
	case isAES(alg):
		return []string{"encrypt", "decrypt", "wrapKey", "unwrapKey"}
	case alg == "ECDSA" && typ == "private":
		return []string{"sign"}
	case alg == "ECDSA":
		return []string{"verify"}
	case alg == "ECDH" && typ == "private", alg == "PBKDF2":
		return []string{"deriveKey", "deriveBits"}
	case (alg == rsaPKCS1 || alg == rsaPSS) && typ == "private":
		return []string{"sign"}
	case alg == rsaPKCS1 || alg == rsaPSS:
		return []string{"verify"}
	case alg == rsaOAEP && typ == "private":
		return []string{"decrypt", "unwrapKey"}
	case alg == rsaOAEP:
		return []string{"encrypt", "wrapKey"}
	}
	return nil
}

// keyObject is k as the script sees it: type, extractable, algorithm,
// usages, with the Go key in the hidden slot.
func (w *webCrypto) keyObject(k *cryptoKey) *goja.Object {
	o := w.rt.NewObject()
	must(o.Set("type", k.typ))
	must(o.Set("extractable", k.extractable))
	alg := w.rt.NewObject()
	must(alg.Set("name", k.alg))
	switch {
	case k.alg == "HMAC":
		h := w.rt.NewObject()
		must(h.Set("name", k.hash))
		must(alg.Set("hash", h))
		must(alg.Set("length", len(k.secret)*8))
	case isAES(k.alg):
		must(alg.Set("length", len(k.secret)*8))
	case k.curve != "":
		must(alg.Set("namedCurve", k.curve))
	case isRSA(k.alg):
		must(alg.Set("modulusLength", k.rsaPub.N.BitLen()))
		u8, _ := goja.AssertConstructor(w.rt.GlobalObject().Get("Uint8Array"))
		e, err := u8(nil, w.rt.ToValue(w.rt.NewArrayBuffer(big.NewInt(int64(k.rsaPub.E)).Bytes())))
		must(err)
		must(alg.Set("publicExponent", e))
		h := w.rt.NewObject()
		must(h.Set("name", k.hash))
		must(alg.Set("hash", h))
	}
	must(o.Set("algorithm", alg))
	u := make([]any, len(k.usages))
	for i, s := range k.usages {
		u[i] = s
	}
	must(o.Set("usages", w.rt.NewArray(u...)))
	must(o.DefineDataPropertySymbol(w.slot, w.rt.ToValue(k), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))
	return o
}

// key is the Go half of a CryptoKey argument.
func (w *webCrypto) key(v goja.Value) (*cryptoKey, error) {
	if obj, ok := v.(*goja.Object); ok {
		if h := obj.GetSymbol(w.slot); h != nil {
			if k, ok := h.Export().(*cryptoKey); ok {
				return k, nil
			}
		}
	}
	return nil, cerr("TypeError", "the key must be a CryptoKey (from generateKey or importKey)")
}

// usable checks that k may do op with alg.
func usable(k *cryptoKey, alg, op string) error {
	if k.alg != alg {
		return cerr("InvalidAccessError", "the key is a %s key, not %s", k.alg, alg)
	}
	if !slices.Contains(k.usages, op) {
		return cerr("InvalidAccessError", "the key's usages (%s) lack %q", strings.Join(k.usages, ", "), op)
	}
	return nil
}

func (w *webCrypto) generateKey(call goja.FunctionCall) (goja.Value, error) {
	alg, params, err := w.algorithm(call.Argument(0))
	if err != nil {
		return nil, err
	}
	extractable := call.Argument(1).ToBoolean()
	k := &cryptoKey{typ: "secret", extractable: extractable, alg: alg}
	switch {
	case alg == "HMAC":
		if k.hash, err = w.hashName(params.Get("hash")); err != nil {
			return nil, err
		}
		bits := newHash(k.hash)().BlockSize() * 8 // the spec's default: the hash's block size
		if l := params.Get("length"); l != nil && !goja.IsUndefined(l) {
			bits = int(l.ToInteger())
		}
		if bits <= 0 || bits%8 != 0 {
			return nil, cerr("OperationError", "HMAC key length %d bits: give a positive multiple of 8", bits)
		}
		k.secret = make([]byte, bits/8)
	case isAES(alg):
		bits := int64(0)
		if l := params.Get("length"); l != nil {
			bits = l.ToInteger()
		}
		if bits != 128 && bits != 192 && bits != 256 {
			return nil, cerr("OperationError", "%s key length %d: give 128, 192 or 256", alg, bits)
		}
		k.secret = make([]byte, bits/8)
	case alg == "ECDSA" || alg == "ECDH":
		return w.generatePair(alg, params, extractable, call.Argument(2))
	case isRSA(alg):
		return w.generateRSA(alg, params, extractable, call.Argument(2))
	default:
		return nil, badAlg("generateKey", alg)
	}
	if k.usages, err = w.usages(call.Argument(2), keyUsagesFor(alg, "secret")...); err != nil {
		return nil, err
	}
	if len(k.usages) == 0 {
		return nil, cerr("SyntaxError", "a %s key needs at least one usage", alg)
	}
	rand.Read(k.secret)
	return w.keyObject(k), nil
}

func (w *webCrypto) generatePair(alg string, params *goja.Object, extractable bool, usagesArg goja.Value) (goja.Value, error) {
	curve := ""
	if c := params.Get("namedCurve"); c != nil && !goja.IsUndefined(c) {
		curve = c.String()
	}
	if curveOf(curve) == nil {
		return nil, cerr("NotSupportedError", "%s namedCurve %q: use P-256, P-384 or P-521", alg, curve)
	}
	all, err := w.usages(usagesArg, append(keyUsagesFor(alg, "private"), keyUsagesFor(alg, "public")...)...)
	if err != nil {
		return nil, err
	}
	priv, err := ecdsa.GenerateKey(curveOf(curve), rand.Reader)
	if err != nil {
		return nil, cerr("OperationError", "%s key generation: %v", alg, err)
	}
	pick := func(typ string) []string {
		var u []string
		for _, s := range all {
			if slices.Contains(keyUsagesFor(alg, typ), s) {
				u = append(u, s)
			}
		}
		return u
	}
	pk := &cryptoKey{typ: "private", extractable: extractable, alg: alg, curve: curve, usages: pick("private"), priv: priv, pub: &priv.PublicKey}
	if len(pk.usages) == 0 {
		return nil, cerr("SyntaxError", "an %s private key needs a usage (%s)", alg, strings.Join(keyUsagesFor(alg, "private"), " or "))
	}
	// The public key is always extractable, as the spec has it.
	pub := &cryptoKey{typ: "public", extractable: true, alg: alg, curve: curve, usages: pick("public"), pub: &priv.PublicKey}
	pair := w.rt.NewObject()
	must(pair.Set("privateKey", w.keyObject(pk)))
	must(pair.Set("publicKey", w.keyObject(pub)))
	return pair, nil
}

// jwk is the members of a JSON Web Key knee reads and writes.
type jwk struct {
	Kty, K, Alg, Crv, X, Y, D string
	N, E, P, Q                string // RSA's
	Ext                       *bool  // nil when absent
	KeyOps                    []string
}

// jwkAlg is the JWK "alg" of an HMAC or AES key.
func jwkAlg(k *cryptoKey) string {
	if k.alg == "HMAC" {
		return "HS" + strings.TrimPrefix(k.hash, "SHA-")
	}
	return fmt.Sprintf("A%d%s", len(k.secret)*8, strings.TrimPrefix(k.alg, "AES-"))
}

func (w *webCrypto) readJWK(v goja.Value) (*jwk, error) {
	obj, ok := v.(*goja.Object)
	if !ok {
		return nil, cerr("TypeError", "a 'jwk' keyData must be an object")
	}
	str := func(name string) string {
		if x := obj.Get(name); x != nil && !goja.IsUndefined(x) && !goja.IsNull(x) {
			return x.String()
		}
		return ""
	}
	j := &jwk{Kty: str("kty"), K: str("k"), Alg: str("alg"), Crv: str("crv"), X: str("x"), Y: str("y"), D: str("d"),
		N: str("n"), E: str("e"), P: str("p"), Q: str("q")}
	if e := obj.Get("ext"); e != nil && !goja.IsUndefined(e) {
		b := e.ToBoolean()
		j.Ext = &b
	}
	if ops := obj.Get("key_ops"); ops != nil && !goja.IsUndefined(ops) {
		if err := w.rt.ExportTo(ops, &j.KeyOps); err != nil {
			return nil, cerr("DataError", "the JWK's key_ops must be an array of strings")
		}
	}
	return j, nil
}

func b64url(s, member string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, cerr("DataError", "the JWK's %q is not base64url: %v", member, err)
	}
	return b, nil
}

func (w *webCrypto) importKey(call goja.FunctionCall) (goja.Value, error) {
	format := call.Argument(0).String()
	alg, params, err := w.algorithm(call.Argument(2))
	if err != nil {
		return nil, err
	}
	k := &cryptoKey{typ: "secret", extractable: call.Argument(3).ToBoolean(), alg: alg}
	var j *jwk
	var raw []byte
	switch format {
	case "jwk":
		if j, err = w.readJWK(call.Argument(1)); err != nil {
			return nil, err
		}
		if j.Ext != nil && !*j.Ext && k.extractable {
			return nil, cerr("DataError", "the JWK has ext false and the key is asked extractable")
		}
	case "raw", "spki", "pkcs8":
		if raw, err = w.bufferSource(call.Argument(1), "importKey's keyData"); err != nil {
			return nil, err
		}
	default:
		return nil, cerr("NotSupportedError", "importKey format %q: use raw, jwk, spki or pkcs8", format)
	}
	switch {
	case alg == "HMAC" || isAES(alg):
		if alg == "HMAC" {
			if k.hash, err = w.hashName(params.Get("hash")); err != nil {
				return nil, err
			}
		}
		switch format {
		case "raw":
			k.secret = raw
		case "jwk":
			if j.Kty != "oct" {
				return nil, cerr("DataError", "the JWK's kty is %q, want oct for %s", j.Kty, alg)
			}
			if k.secret, err = b64url(j.K, "k"); err != nil {
				return nil, err
			}
		default:
			return nil, cerr("NotSupportedError", "importKey format %q for %s: use raw or jwk", format, alg)
		}
		if j != nil && j.Alg != "" && j.Alg != jwkAlg(k) {
			return nil, cerr("DataError", "the JWK's alg is %q, want %q for this key", j.Alg, jwkAlg(k))
		}
		if alg == "HMAC" {
			if len(k.secret) == 0 {
				return nil, cerr("DataError", "an HMAC key cannot be empty")
			}
			if l := params.Get("length"); l != nil && !goja.IsUndefined(l) && l.ToInteger() != int64(len(k.secret)*8) {
				return nil, cerr("DataError", "the algorithm's length %d differs from the key's %d bits", l.ToInteger(), len(k.secret)*8)
			}
		} else if n := len(k.secret); n != 16 && n != 24 && n != 32 {
			return nil, cerr("DataError", "an %s key is 16, 24 or 32 bytes, not %d", alg, n)
		}
	case alg == "ECDSA" || alg == "ECDH":
		if err := w.importEC(k, params, format, raw, j); err != nil {
			return nil, err
		}
	case isRSA(alg):
		if err := w.importRSA(k, params, format, raw, j); err != nil {
			return nil, err
		}
	case alg == "PBKDF2":
		// A password: raw only, and never extractable (the spec).
		if format != "raw" {
			return nil, cerr("NotSupportedError", "importKey format %q for PBKDF2: use raw", format)
		}
		if k.extractable {
			return nil, cerr("SyntaxError", "a PBKDF2 key cannot be extractable")
		}
		k.secret = raw
	default:
		return nil, badAlg("importKey", alg)
	}
	if k.usages, err = w.usages(call.Argument(4), keyUsagesFor(alg, k.typ)...); err != nil {
		return nil, err
	}
	if j != nil && j.KeyOps != nil {
		for _, u := range k.usages {
			if !slices.Contains(j.KeyOps, u) {
				return nil, cerr("DataError", "usage %q is not in the JWK's key_ops", u)
			}
		}
	}
	if len(k.usages) == 0 && k.typ != "public" {
		return nil, cerr("SyntaxError", "a %s %s key needs at least one usage", k.typ, alg)
	}
	return w.keyObject(k), nil
}

// importEC reads an ECDSA or ECDH key. As k6 does, a spki, pkcs8 or jwk
// key keeps its own curve when namedCurve names another (the spec would
// reject it; k6's own example imports a P-521 JWK as P-256).
func (w *webCrypto) importEC(k *cryptoKey, params *goja.Object, format string, raw []byte, j *jwk) error {
	if c := params.Get("namedCurve"); c != nil && !goja.IsUndefined(c) {
		k.curve = c.String()
	}
	curve := curveOf(k.curve)
	if curve == nil {
		return cerr("NotSupportedError", "%s namedCurve %q: use P-256, P-384 or P-521", k.alg, k.curve)
	}
	var err error
	switch format {
	case "raw":
		k.typ = "public"
		if k.pub, err = ecdsa.ParseUncompressedPublicKey(curve, raw); err != nil {
			return cerr("DataError", "the raw key is not an uncompressed %s point: %v", k.curve, err)
		}
	case "spki":
		k.typ = "public"
		pk, err := x509.ParsePKIXPublicKey(raw)
		if err != nil {
			return cerr("DataError", "the spki key: %v", err)
		}
		pub, ok := pk.(*ecdsa.PublicKey)
		if !ok || curveOf(pub.Curve.Params().Name) == nil {
			return cerr("DataError", "the spki key is not a P-256, P-384 or P-521 public key")
		}
		k.pub, k.curve = pub, pub.Curve.Params().Name
	case "pkcs8":
		k.typ = "private"
		pk, err := x509.ParsePKCS8PrivateKey(raw)
		if err != nil {
			return cerr("DataError", "the pkcs8 key: %v", err)
		}
		priv, ok := pk.(*ecdsa.PrivateKey)
		if !ok || curveOf(priv.Curve.Params().Name) == nil {
			return cerr("DataError", "the pkcs8 key is not a P-256, P-384 or P-521 private key")
		}
		k.priv, k.pub, k.curve = priv, &priv.PublicKey, priv.Curve.Params().Name
	case "jwk":
		if j.Kty != "EC" || curveOf(j.Crv) == nil {
			return cerr("DataError", "the JWK is kty %q crv %q, want EC with P-256, P-384 or P-521", j.Kty, j.Crv)
		}
		k.curve, curve = j.Crv, curveOf(j.Crv)
		x, err := b64url(j.X, "x")
		if err != nil {
			return err
		}
		y, err := b64url(j.Y, "y")
		if err != nil {
			return err
		}
		size := (curve.Params().BitSize + 7) / 8
		if len(x) != size || len(y) != size {
			return cerr("DataError", "the JWK's x and y must be %d bytes each for %s", size, k.curve)
		}
		if k.pub, err = ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...)); err != nil {
			return cerr("DataError", "the JWK's x, y: %v", err)
		}
		k.typ = "public"
		if j.D != "" {
			d, err := b64url(j.D, "d")
			if err != nil {
				return err
			}
			if k.priv, err = ecdsa.ParseRawPrivateKey(curve, d); err != nil {
				return cerr("DataError", "the JWK's d: %v", err)
			}
			if !k.priv.PublicKey.Equal(k.pub) {
				return cerr("DataError", "the JWK's d does not match its x, y")
			}
			k.typ = "private"
		}
	}
	return nil
}

func (w *webCrypto) exportKey(call goja.FunctionCall) (goja.Value, error) {
	format := call.Argument(0).String()
	k, err := w.key(call.Argument(1))
	if err != nil {
		return nil, err
	}
	if !k.extractable {
		return nil, cerr("InvalidAccessError", "the key is not extractable")
	}
	buf := func(b []byte) (goja.Value, error) { return w.rt.ToValue(w.rt.NewArrayBuffer(b)), nil }
	if isRSA(k.alg) {
		return w.exportRSA(k, format)
	}
	if k.secret != nil {
		switch format {
		case "raw":
			return buf(slices.Clone(k.secret))
		case "jwk":
			o := w.jwkObject(k)
			must(o.Set("kty", "oct"))
			must(o.Set("k", base64.RawURLEncoding.EncodeToString(k.secret)))
			must(o.Set("alg", jwkAlg(k)))
			return o, nil
		}
		return nil, cerr("NotSupportedError", "exportKey format %q for %s: use raw or jwk", format, k.alg)
	}
	switch format {
	case "raw":
		if k.typ != "public" {
			return nil, cerr("InvalidAccessError", "only a public %s key exports as raw", k.alg)
		}
		b, err := k.pub.Bytes()
		if err != nil {
			return nil, cerr("OperationError", "%v", err)
		}
		return buf(b)
	case "spki":
		if k.typ != "public" {
			return nil, cerr("InvalidAccessError", "only a public %s key exports as spki", k.alg)
		}
		b, err := x509.MarshalPKIXPublicKey(k.pub)
		if err != nil {
			return nil, cerr("OperationError", "%v", err)
		}
		return buf(b)
	case "pkcs8":
		if k.typ != "private" {
			return nil, cerr("InvalidAccessError", "only a private %s key exports as pkcs8", k.alg)
		}
		b, err := x509.MarshalPKCS8PrivateKey(k.priv)
		if err != nil {
			return nil, cerr("OperationError", "%v", err)
		}
		return buf(b)
	case "jwk":
		pt, err := k.pub.Bytes()
		if err != nil {
			return nil, cerr("OperationError", "%v", err)
		}
		size := (len(pt) - 1) / 2
		o := w.jwkObject(k)
		must(o.Set("kty", "EC"))
		must(o.Set("crv", k.curve))
		must(o.Set("x", base64.RawURLEncoding.EncodeToString(pt[1:1+size])))
		must(o.Set("y", base64.RawURLEncoding.EncodeToString(pt[1+size:])))
		if k.priv != nil && k.typ == "private" {
			d, err := k.priv.Bytes()
			if err != nil {
				return nil, cerr("OperationError", "%v", err)
			}
			must(o.Set("d", base64.RawURLEncoding.EncodeToString(d)))
		}
		return o, nil
	}
	return nil, cerr("NotSupportedError", "exportKey format %q: use raw, jwk, spki or pkcs8", format)
}

func (w *webCrypto) jwkObject(k *cryptoKey) *goja.Object {
	o := w.rt.NewObject()
	ops := make([]any, len(k.usages))
	for i, u := range k.usages {
		ops[i] = u
	}
	must(o.Set("key_ops", w.rt.NewArray(ops...)))
	must(o.Set("ext", k.extractable))
	return o
}

// signParams reads sign's and verify's algorithm and key.
func (w *webCrypto) signParams(call goja.FunctionCall, op string) (*cryptoKey, string, *goja.Object, error) {
	alg, params, err := w.algorithm(call.Argument(0))
	if err != nil {
		return nil, "", nil, err
	}
	if alg != "HMAC" && alg != "ECDSA" && alg != rsaPKCS1 && alg != rsaPSS {
		return nil, "", nil, badAlg(op, alg)
	}
	k, err := w.key(call.Argument(1))
	if err != nil {
		return nil, "", nil, err
	}
	if err := usable(k, alg, op); err != nil {
		return nil, "", nil, err
	}
	h := k.hash
	if alg == "ECDSA" {
		if h, err = w.hashName(params.Get("hash")); err != nil {
			return nil, "", nil, err
		}
	}
	return k, h, params, nil
}

func (w *webCrypto) sign(call goja.FunctionCall) (goja.Value, error) {
	k, h, params, err := w.signParams(call, "sign")
	if err != nil {
		return nil, err
	}
	data, err := w.bufferSource(call.Argument(2), "sign's data")
	if err != nil {
		return nil, err
	}
	if isRSA(k.alg) {
		return w.signRSA(k, params, data)
	}
	if k.alg == "HMAC" {
		m := hmac.New(newHash(h), k.secret)
		m.Write(data)
		return w.rt.ToValue(w.rt.NewArrayBuffer(m.Sum(nil))), nil
	}
	sum := newHash(h)()
	sum.Write(data)
	r, s, err := ecdsa.Sign(rand.Reader, k.priv, sum.Sum(nil))
	if err != nil {
		return nil, cerr("OperationError", "ECDSA signing: %v", err)
	}
	// WebCrypto's ECDSA signature is r and s, each as wide as the curve's
	// order, not ASN.1.
	size := (k.priv.Curve.Params().N.BitLen() + 7) / 8
	sig := make([]byte, 2*size)
	r.FillBytes(sig[:size])
	s.FillBytes(sig[size:])
	return w.rt.ToValue(w.rt.NewArrayBuffer(sig)), nil
}

func (w *webCrypto) verify(call goja.FunctionCall) (goja.Value, error) {
	k, h, params, err := w.signParams(call, "verify")
	if err != nil {
		return nil, err
	}
	sig, err := w.bufferSource(call.Argument(2), "verify's signature")
	if err != nil {
		return nil, err
	}
	data, err := w.bufferSource(call.Argument(3), "verify's data")
	if err != nil {
		return nil, err
	}
	if isRSA(k.alg) {
		return w.verifyRSA(k, params, sig, data)
	}
	if k.alg == "HMAC" {
		m := hmac.New(newHash(h), k.secret)
		m.Write(data)
		return w.rt.ToValue(hmac.Equal(m.Sum(nil), sig)), nil
	}
	size := (k.pub.Curve.Params().N.BitLen() + 7) / 8
	if len(sig) != 2*size {
		return w.rt.ToValue(false), nil // the spec: a signature of the wrong length does not verify
	}
	sum := newHash(h)()
	sum.Write(data)
	r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
	return w.rt.ToValue(ecdsa.Verify(k.pub, sum.Sum(nil), r, s)), nil
}

func (w *webCrypto) encrypt(call goja.FunctionCall) (goja.Value, error) {
	return w.cryptCall(call, true)
}

func (w *webCrypto) decrypt(call goja.FunctionCall) (goja.Value, error) {
	return w.cryptCall(call, false)
}

func (w *webCrypto) cryptCall(call goja.FunctionCall, encrypt bool) (goja.Value, error) {
	op := map[bool]string{true: "encrypt", false: "decrypt"}[encrypt]
	data, err := w.bufferSource(call.Argument(2), op+"'s data")
	if err != nil {
		return nil, err
	}
	out, err := w.crypt(call.Argument(0), call.Argument(1), data, encrypt, op)
	if err != nil {
		return nil, err
	}
	return w.rt.ToValue(w.rt.NewArrayBuffer(out)), nil
}

// crypt encrypts or decrypts data with AES-CBC, AES-CTR, AES-GCM,
// RSA-OAEP, or for wrapKey and unwrapKey also AES-KW; the key must have
// the usage op (encrypt, decrypt, wrapKey, unwrapKey).
func (w *webCrypto) crypt(algArg, keyArg goja.Value, data []byte, encrypt bool, op string) ([]byte, error) {
	alg, params, err := w.algorithm(algArg)
	if err != nil {
		return nil, err
	}
	if alg == aesKW && op != "wrapKey" && op != "unwrapKey" {
		return nil, cerr("NotSupportedError", "AES-KW only wraps keys: use crypto.subtle.wrapKey and unwrapKey")
	}
	if !isAES(alg) && alg != rsaOAEP {
		return nil, badAlg(op, alg)
	}
	k, err := w.key(keyArg)
	if err != nil {
		return nil, err
	}
	if err := usable(k, alg, op); err != nil {
		return nil, err
	}
	if alg == rsaOAEP {
		return w.cryptOAEP(k, params, data, encrypt)
	}
	block, err := aes.NewCipher(k.secret)
	if err != nil {
		return nil, cerr("OperationError", "%v", err)
	}
	param := func(name string) ([]byte, error) {
		return w.bufferSource(params.Get(name), alg+"'s "+name)
	}
	var out []byte
	switch alg {
	case aesKW:
		if out, err = aesKeyWrap(block, data, encrypt); err != nil {
			return nil, err
		}
	case "AES-CBC":
		iv, err := param("iv")
		if err != nil {
			return nil, err
		}
		if out, err = aesCBC(block, iv, data, encrypt); err != nil {
			return nil, err
		}
	case "AES-CTR":
		counter, err := param("counter")
		if err != nil {
			return nil, err
		}
		length := int64(0)
		if l := params.Get("length"); l != nil {
			length = l.ToInteger()
		}
		if out, err = aesCTR(block, counter, int(length), data); err != nil {
			return nil, err
		}
	case "AES-GCM":
		iv, err := param("iv")
		if err != nil {
			return nil, err
		}
		var aad []byte
		if a := params.Get("additionalData"); a != nil && !goja.IsUndefined(a) {
			if aad, err = param("additionalData"); err != nil {
				return nil, err
			}
		}
		tagBits := int64(128)
		if t := params.Get("tagLength"); t != nil && !goja.IsUndefined(t) {
			tagBits = t.ToInteger()
		}
		if out, err = aesGCM(block, iv, aad, int(tagBits), data, encrypt); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// aesKeyWrap is RFC 3394's key wrap (wrap) or unwrap with the default
// initial value.
func aesKeyWrap(block cipher.Block, data []byte, wrap bool) ([]byte, error) {
	iv := [8]byte{0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6}
	n := len(data)/8 - 1 // blocks of key data when unwrapping
	if wrap {
		n = len(data) / 8
	}
	if len(data)%8 != 0 || n < 2 {
		return nil, cerr("OperationError", "AES-KW takes a multiple of 8 bytes, at least 16 to wrap (24 to unwrap), not %d", len(data))
	}
	var a [8]byte
	r := make([]byte, 8*n)
	if wrap {
		a = iv
		copy(r, data)
	} else {
		copy(a[:], data[:8])
		copy(r, data[8:])
	}
	var b [16]byte
	for s := range 6 {
		j := s
		if !wrap {
			j = 5 - s
		}
		for x := range n {
			i := x
			if !wrap {
				i = n - 1 - x
			}
			t := uint64(n*j + i + 1)
			ri := r[8*i : 8*i+8]
			if wrap {
				copy(b[:8], a[:])
				copy(b[8:], ri)
				block.Encrypt(b[:], b[:])
				binary.BigEndian.PutUint64(a[:], binary.BigEndian.Uint64(b[:8])^t)
			} else {
				binary.BigEndian.PutUint64(b[:8], binary.BigEndian.Uint64(a[:])^t)
				copy(b[8:], ri)
				block.Decrypt(b[:], b[:])
				copy(a[:], b[:8])
			}
			copy(ri, b[8:])
		}
	}
	if wrap {
		return append(a[:], r...), nil
	}
	if subtle.ConstantTimeCompare(a[:], iv[:]) != 1 {
		return nil, cerr("OperationError", "AES-KW unwrap failed (wrong key, or altered data)")
	}
	return r, nil
}

// wrapKey exports key in format (a jwk as its JSON text) and encrypts it
// with wrappingKey, which must have the usage wrapKey.
func (w *webCrypto) wrapKey(call goja.FunctionCall) (goja.Value, error) {
	format := call.Argument(0)
	exported, err := w.exportKey(goja.FunctionCall{Arguments: []goja.Value{format, call.Argument(1)}})
	if err != nil {
		return nil, err
	}
	var data []byte
	if format.String() == "jwk" {
		text, err := w.jsonCall("stringify", exported)
		if err != nil {
			return nil, err
		}
		data = []byte(text.String())
	} else if data, err = w.bufferSource(exported, "the exported key"); err != nil {
		return nil, err
	}
	out, err := w.crypt(call.Argument(3), call.Argument(2), data, true, "wrapKey")
	if err != nil {
		return nil, err
	}
	return w.rt.ToValue(w.rt.NewArrayBuffer(out)), nil
}

// unwrapKey decrypts wrappedKey with unwrappingKey (usage unwrapKey) and
// imports the result as a key in format.
func (w *webCrypto) unwrapKey(call goja.FunctionCall) (goja.Value, error) {
	data, err := w.bufferSource(call.Argument(1), "unwrapKey's wrappedKey")
	if err != nil {
		return nil, err
	}
	plain, err := w.crypt(call.Argument(3), call.Argument(2), data, false, "unwrapKey")
	if err != nil {
		return nil, err
	}
	format := call.Argument(0)
	keyData := w.rt.ToValue(w.rt.NewArrayBuffer(plain))
	if format.String() == "jwk" {
		if keyData, err = w.jsonCall("parse", w.rt.ToValue(string(plain))); err != nil {
			return nil, cerr("DataError", "the unwrapped key is not a JWK's JSON")
		}
	}
	return w.importKey(goja.FunctionCall{Arguments: []goja.Value{
		format, keyData, call.Argument(4), call.Argument(5), call.Argument(6),
	}})
}

// jsonCall calls the runtime's JSON.parse or JSON.stringify.
func (w *webCrypto) jsonCall(fn string, arg goja.Value) (goja.Value, error) {
	j, ok := w.rt.GlobalObject().Get("JSON").(*goja.Object)
	if !ok {
		return nil, cerr("OperationError", "the global JSON is missing")
	}
	f, ok := goja.AssertFunction(j.Get(fn))
	if !ok {
		return nil, cerr("OperationError", "JSON.%s is missing", fn)
	}
	return f(j, arg)
}

// aesCBC is AES-CBC with PKCS#7 padding.
func aesCBC(block cipher.Block, iv, data []byte, encrypt bool) ([]byte, error) {
	if len(iv) != aes.BlockSize {
		return nil, cerr("OperationError", "AES-CBC's iv is %d bytes, not 16", len(iv))
	}
	if encrypt {
		pad := aes.BlockSize - len(data)%aes.BlockSize
		out := append(slices.Clone(data), make([]byte, pad)...)
		for i := len(data); i < len(out); i++ {
			out[i] = byte(pad)
		}
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(out, out)
		return out, nil
	}
	if len(data) == 0 || len(data)%aes.BlockSize != 0 {
		return nil, cerr("OperationError", "AES-CBC ciphertext of %d bytes is not a whole number of blocks", len(data))
	}
	out := slices.Clone(data)
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, out)
	pad := int(out[len(out)-1])
	bad := pad == 0 || pad > aes.BlockSize
	if !bad {
		want := make([]byte, pad)
		for i := range want {
			want[i] = byte(pad)
		}
		bad = subtle.ConstantTimeCompare(out[len(out)-pad:], want) != 1
	}
	if bad {
		return nil, cerr("OperationError", "AES-CBC decryption: bad padding (wrong key or iv, or altered data)")
	}
	return out[:len(out)-pad], nil
}

// aesCTR is AES-CTR as WebCrypto defines it: only the counter block's
// rightmost length bits count up, wrapping within them, and more blocks
// than they can count is an error. (Go's cipher.NewCTR counts with all
// 128 bits, which differs once the low bits wrap.)
func aesCTR(block cipher.Block, counter []byte, length int, data []byte) ([]byte, error) {
	if len(counter) != aes.BlockSize {
		return nil, cerr("OperationError", "AES-CTR's counter is %d bytes, not 16", len(counter))
	}
	if length < 1 || length > 128 {
		return nil, cerr("OperationError", "AES-CTR's length is %d bits: give 1 to 128", length)
	}
	blocks := (len(data) + aes.BlockSize - 1) / aes.BlockSize
	if length < 63 && uint64(blocks) > uint64(1)<<length {
		return nil, cerr("OperationError", "AES-CTR: %d blocks overflow a %d-bit counter", blocks, length)
	}
	hi, lo := binary.BigEndian.Uint64(counter[:8]), binary.BigEndian.Uint64(counter[8:])
	out := make([]byte, len(data))
	var cb, ks [aes.BlockSize]byte
	for off := 0; off < len(data); off += aes.BlockSize {
		binary.BigEndian.PutUint64(cb[:8], hi)
		binary.BigEndian.PutUint64(cb[8:], lo)
		block.Encrypt(ks[:], cb[:])
		end := min(off+aes.BlockSize, len(data))
		subtle.XORBytes(out[off:end], data[off:end], ks[:end-off])
		hi, lo = ctrIncrement(hi, lo, length)
	}
	return out, nil
}

// ctrIncrement adds one to the low length bits of the 128-bit hi:lo,
// leaving the other bits alone.
func ctrIncrement(hi, lo uint64, length int) (uint64, uint64) {
	if length < 64 {
		mask := uint64(1)<<length - 1
		return hi, lo&^mask | (lo+1)&mask
	}
	lo++
	if lo == 0 && length > 64 {
		mask := uint64(1)<<(length-64) - 1 // all ones at length 128: the shift by 64 is 0
		hi = hi&^mask | (hi+1)&mask
	}
	return hi, lo
}

// aesGCM is AES-GCM with the tag appended to the ciphertext.
func aesGCM(block cipher.Block, iv, aad []byte, tagBits int, data []byte, encrypt bool) ([]byte, error) {
	switch tagBits {
	case 96, 104, 112, 120, 128:
	case 32, 64:
		return nil, cerr("NotSupportedError", "AES-GCM tagLength %d is not supported: use 96 to 128", tagBits)
	default:
		return nil, cerr("OperationError", "AES-GCM tagLength %d: use 96, 104, 112, 120 or 128", tagBits)
	}
	if len(iv) == 0 {
		return nil, cerr("OperationError", "AES-GCM's iv is empty")
	}
	var aead cipher.AEAD
	var err error
	switch {
	case len(iv) == 12:
		aead, err = cipher.NewGCMWithTagSize(block, tagBits/8)
	case tagBits == 128:
		aead, err = cipher.NewGCMWithNonceSize(block, len(iv))
	default:
		return nil, cerr("NotSupportedError", "AES-GCM with a %d-byte iv and a %d-bit tag: use a 12-byte iv or a 128-bit tag", len(iv), tagBits)
	}
	if err != nil {
		return nil, cerr("OperationError", "%v", err)
	}
	if encrypt {
		return aead.Seal(nil, iv, data, aad), nil
	}
	if len(data) < tagBits/8 {
		return nil, cerr("OperationError", "AES-GCM ciphertext of %d bytes is shorter than its tag", len(data))
	}
	out, err := aead.Open(nil, iv, data, aad)
	if err != nil {
		return nil, cerr("OperationError", "AES-GCM decryption failed (wrong key, iv or additionalData, or altered data)")
	}
	return out, nil
}

// deriveBits is ECDH's shared secret or PBKDF2's output, length bits of it
// (ECDH: all of it when length is null).
func (w *webCrypto) deriveBits(call goja.FunctionCall) (goja.Value, error) {
	b, err := w.derive(call.Argument(0), call.Argument(1), call.Argument(2), "deriveBits")
	if err != nil {
		return nil, err
	}
	return w.rt.ToValue(w.rt.NewArrayBuffer(b)), nil
}

// deriveKey derives as many bits as derivedKeyType's key needs and
// imports them as a raw key of that type (AES-CBC/CTR/GCM, HMAC).
func (w *webCrypto) deriveKey(call goja.FunctionCall) (goja.Value, error) {
	typ, params, err := w.algorithm(call.Argument(2))
	if err != nil {
		return nil, err
	}
	var bits int64
	switch {
	case isAES(typ):
		if l := params.Get("length"); l != nil {
			bits = l.ToInteger()
		}
		if bits != 128 && bits != 192 && bits != 256 {
			return nil, cerr("OperationError", "deriveKey: %s key length %d: give 128, 192 or 256", typ, bits)
		}
	case typ == "HMAC":
		h, err := w.hashName(params.Get("hash"))
		if err != nil {
			return nil, err
		}
		bits = int64(newHash(h)().BlockSize() * 8)
		if l := params.Get("length"); l != nil && !goja.IsUndefined(l) {
			bits = l.ToInteger()
		}
		if bits <= 0 || bits%8 != 0 {
			return nil, cerr("OperationError", "deriveKey: HMAC key length %d bits: give a positive multiple of 8", bits)
		}
	default:
		return nil, cerr("NotSupportedError", "deriveKey: derived key algorithm %q: use AES-CBC, AES-CTR, AES-GCM or HMAC", typ)
	}
	b, err := w.derive(call.Argument(0), call.Argument(1), w.rt.ToValue(bits), "deriveKey")
	if err != nil {
		return nil, err
	}
	return w.importKey(goja.FunctionCall{Arguments: []goja.Value{
		w.rt.ToValue("raw"), w.rt.ToValue(w.rt.NewArrayBuffer(b)), call.Argument(2), call.Argument(3), call.Argument(4),
	}})
}

// derive is deriveBits' and deriveKey's bits.
func (w *webCrypto) derive(algArg, keyArg, lengthArg goja.Value, op string) ([]byte, error) {
	alg, params, err := w.algorithm(algArg)
	if err != nil {
		return nil, err
	}
	if alg != "ECDH" && alg != "PBKDF2" {
		return nil, badAlg(op, alg)
	}
	k, err := w.key(keyArg)
	if err != nil {
		return nil, err
	}
	if err := usable(k, alg, op); err != nil {
		return nil, err
	}
	if alg == "PBKDF2" {
		return w.pbkdf2(k, params, lengthArg)
	}
	pk, err := w.key(params.Get("public"))
	if err != nil {
		return nil, cerr("TypeError", "ECDH's public must be a CryptoKey")
	}
	if pk.typ != "public" || pk.alg != "ECDH" || pk.curve != k.curve {
		return nil, cerr("InvalidAccessError", "ECDH's public must be a public ECDH %s key", k.curve)
	}
	priv, err := k.priv.ECDH()
	if err != nil {
		return nil, cerr("OperationError", "%v", err)
	}
	pub, err := pk.pub.ECDH()
	if err != nil {
		return nil, cerr("OperationError", "%v", err)
	}
	secret, err := priv.ECDH(pub)
	if err != nil {
		return nil, cerr("OperationError", "ECDH: %v", err)
	}
	if goja.IsUndefined(lengthArg) || goja.IsNull(lengthArg) {
		return secret, nil
	}
	bits := lengthArg.ToInteger()
	if bits < 0 || bits > int64(len(secret)*8) {
		return nil, cerr("OperationError", "%s length %d exceeds the %d bits ECDH %s gives", op, bits, len(secret)*8, k.curve)
	}
	secret = secret[:(bits+7)/8]
	if r := bits % 8; r != 0 {
		secret[len(secret)-1] &= byte(0xff << (8 - r))
	}
	return secret, nil
}

// pbkdf2 is PBKDF2 with HMAC over params.hash, params.salt and
// params.iterations; length is a positive multiple of 8, as in k6.
func (w *webCrypto) pbkdf2(k *cryptoKey, params *goja.Object, lengthArg goja.Value) ([]byte, error) {
	h, err := w.hashName(params.Get("hash"))
	if err != nil {
		return nil, err
	}
	salt, err := w.bufferSource(params.Get("salt"), "PBKDF2's salt")
	if err != nil {
		return nil, err
	}
	iter := int64(0)
	if v := params.Get("iterations"); v != nil {
		iter = v.ToInteger()
	}
	if iter <= 0 {
		return nil, cerr("OperationError", "PBKDF2's iterations is %d: give 1 or more", iter)
	}
	if goja.IsUndefined(lengthArg) || goja.IsNull(lengthArg) {
		return nil, cerr("OperationError", "PBKDF2 needs a length")
	}
	bits := lengthArg.ToInteger()
	if bits <= 0 || bits%8 != 0 {
		return nil, cerr("OperationError", "PBKDF2 length %d: give a positive multiple of 8", bits)
	}
	out, err := pbkdf2.Key(newHash(h), string(k.secret), salt, int(iter), int(bits/8))
	if err != nil {
		return nil, cerr("OperationError", "PBKDF2: %v", err)
	}
	return out, nil
}
