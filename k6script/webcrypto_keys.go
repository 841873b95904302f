package k6script

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/dop251/goja"
)

// WebCrypto's keys: generateKey, importKey and exportKey (RSA's in
// webcrypto_rsa.go).

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
	pk := &cryptoKey{typ: "private", extractable: extractable, alg: alg, curve: curve, usages: usagesOf(alg, "private", all), priv: priv, pub: &priv.PublicKey}
	if len(pk.usages) == 0 {
		return nil, cerr("SyntaxError", "an %s private key needs a usage (%s)", alg, strings.Join(keyUsagesFor(alg, "private"), " or "))
	}
	// The public key is always extractable, as the spec has it.
	pub := &cryptoKey{typ: "public", extractable: true, alg: alg, curve: curve, usages: usagesOf(alg, "public", all), pub: &priv.PublicKey}
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
		if err := w.importSecret(k, params, format, raw, j); err != nil {
			return nil, err
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
// importSecret reads an HMAC or AES key from raw or jwk.
func (w *webCrypto) importSecret(k *cryptoKey, params *goja.Object, format string, raw []byte, j *jwk) error {
	var err error
	if k.alg == "HMAC" {
		if k.hash, err = w.hashName(params.Get("hash")); err != nil {
			return err
		}
	}
	switch format {
	case "raw":
		k.secret = raw
	case "jwk":
		if j.Kty != "oct" {
			return cerr("DataError", "the JWK's kty is %q, want oct for %s", j.Kty, k.alg)
		}
		if k.secret, err = b64url(j.K, "k"); err != nil {
			return err
		}
		if j.Alg != "" && j.Alg != jwkAlg(k) {
			return cerr("DataError", "the JWK's alg is %q, want %q for this key", j.Alg, jwkAlg(k))
		}
	default:
		return cerr("NotSupportedError", "importKey format %q for %s: use raw or jwk", format, k.alg)
	}
	if k.alg != "HMAC" {
		if n := len(k.secret); n != 16 && n != 24 && n != 32 {
			return cerr("DataError", "an %s key is 16, 24 or 32 bytes, not %d", k.alg, n)
		}
		return nil
	}
	if len(k.secret) == 0 {
		return cerr("DataError", "an HMAC key cannot be empty")
	}
	if l := params.Get("length"); l != nil && !goja.IsUndefined(l) && l.ToInteger() != int64(len(k.secret)*8) {
		return cerr("DataError", "the algorithm's length %d differs from the key's %d bits", l.ToInteger(), len(k.secret)*8)
	}
	return nil
}

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
