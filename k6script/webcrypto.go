package k6script

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
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
// RSASSA-PKCS1-v1_5, RSA-PSS and RSA-OAEP (webcrypto_keys.go, _ops.go,
// _aes.go, _rsa.go). Every subtle method returns a Promise settled before
// it returns (the work is done on the VU's goroutine, as asyncRequest's
// is); a failure rejects it with an Error whose name is the spec's
// (NotSupportedError, InvalidAccessError, OperationError, DataError,
// SyntaxError, TypeError).
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

// installLazyWebCrypto defines the global crypto as a getter that builds
// it (installWebCrypto) on first use: its ~180 objects cost each VU ~14 KB,
// and most scripts never touch it.
func installLazyWebCrypto(rt *goja.Runtime) {
	g := rt.GlobalObject()
	getter := rt.ToValue(func(goja.FunctionCall) goja.Value {
		must(g.Delete("crypto")) // the accessor gives way to the object
		installWebCrypto(rt)
		return g.Get("crypto")
	})
	setter := rt.ToValue(func(call goja.FunctionCall) goja.Value {
		must(g.Delete("crypto")) // a script's own crypto replaces it
		must(g.Set("crypto", call.Argument(0)))
		return goja.Undefined()
	})
	must(g.DefineAccessorProperty("crypto", getter, setter, goja.FLAG_TRUE, goja.FLAG_FALSE))
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

// usagesOf are the usages of all (a generated pair's, as asked) that a key
// of alg and typ ("private", "public") may have, in all's order.
func usagesOf(alg, typ string, all []string) []string {
	var u []string
	for _, s := range all {
		if slices.Contains(keyUsagesFor(alg, typ), s) {
			u = append(u, s)
		}
	}
	return u
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
