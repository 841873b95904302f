package k6script

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"math/big"
	"strings"

	"github.com/dop251/goja"
)

// WebCrypto's RSA algorithms: RSASSA-PKCS1-v1_5 and RSA-PSS sign and
// verify, RSA-OAEP encrypts and decrypts; each key carries its hash.

const (
	rsaPKCS1 = "RSASSA-PKCS1-v1_5"
	rsaPSS   = "RSA-PSS"
	rsaOAEP  = "RSA-OAEP"
)

func isRSA(alg string) bool { return alg == rsaPKCS1 || alg == rsaPSS || alg == rsaOAEP }

func cryptoHash(name string) crypto.Hash {
	switch name {
	case "SHA-1":
		return crypto.SHA1
	case "SHA-256":
		return crypto.SHA256
	case "SHA-384":
		return crypto.SHA384
	}
	return crypto.SHA512
}

// rsaJWKAlg is the JWK "alg" of an RSA key: RS256, PS384, RSA-OAEP-256,
// RSA-OAEP (SHA-1)...
func rsaJWKAlg(k *cryptoKey) string {
	bits := strings.TrimPrefix(k.hash, "SHA-")
	switch k.alg {
	case rsaPKCS1:
		return "RS" + bits
	case rsaPSS:
		return "PS" + bits
	}
	if bits == "1" {
		return "RSA-OAEP"
	}
	return "RSA-OAEP-" + bits
}

// generateRSA makes an RSA key pair. Go makes keys with the public
// exponent 65537 only, the one nearly every script asks for.
func (w *webCrypto) generateRSA(alg string, params *goja.Object, extractable bool, usagesArg goja.Value) (goja.Value, error) {
	h, err := w.hashName(params.Get("hash"))
	if err != nil {
		return nil, err
	}
	bits := int64(0)
	if v := params.Get("modulusLength"); v != nil {
		bits = v.ToInteger()
	}
	if bits < 1024 || bits > 16384 {
		return nil, cerr("OperationError", "%s modulusLength %d: give 1024 to 16384 bits", alg, bits)
	}
	e, err := w.bufferSource(params.Get("publicExponent"), alg+"'s publicExponent")
	if err != nil {
		return nil, err
	}
	if new(big.Int).SetBytes(e).Int64() != 65537 {
		return nil, cerr("NotSupportedError", "%s publicExponent %x: knee makes RSA keys with 65537 (new Uint8Array([1, 0, 1])) only", alg, e)
	}
	all, err := w.usages(usagesArg, append(keyUsagesFor(alg, "private"), keyUsagesFor(alg, "public")...)...)
	if err != nil {
		return nil, err
	}
	priv := &cryptoKey{typ: "private", extractable: extractable, alg: alg, hash: h, usages: usagesOf(alg, "private", all)}
	if len(priv.usages) == 0 {
		return nil, cerr("SyntaxError", "an %s private key needs a usage (%s)", alg, strings.Join(keyUsagesFor(alg, "private"), " or "))
	}
	key, err := rsa.GenerateKey(rand.Reader, int(bits))
	if err != nil {
		return nil, cerr("OperationError", "%s key generation: %v", alg, err)
	}
	priv.rsaPriv, priv.rsaPub = key, &key.PublicKey
	pub := &cryptoKey{typ: "public", extractable: true, alg: alg, hash: h, usages: usagesOf(alg, "public", all), rsaPub: &key.PublicKey}
	pair := w.rt.NewObject()
	must(pair.Set("privateKey", w.keyObject(priv)))
	must(pair.Set("publicKey", w.keyObject(pub)))
	return pair, nil
}

// importRSA reads an RSA key from spki, pkcs8 or jwk.
func (w *webCrypto) importRSA(k *cryptoKey, params *goja.Object, format string, raw []byte, j *jwk) error {
	var err error
	if k.hash, err = w.hashName(params.Get("hash")); err != nil {
		return err
	}
	switch format {
	case "spki":
		pk, err := x509.ParsePKIXPublicKey(raw)
		if err != nil {
			return cerr("DataError", "the spki key: %v", err)
		}
		pub, ok := pk.(*rsa.PublicKey)
		if !ok {
			return cerr("DataError", "the spki key is not an RSA public key")
		}
		k.typ, k.rsaPub = "public", pub
	case "pkcs8":
		pk, err := x509.ParsePKCS8PrivateKey(raw)
		if err != nil {
			return cerr("DataError", "the pkcs8 key: %v", err)
		}
		priv, ok := pk.(*rsa.PrivateKey)
		if !ok {
			return cerr("DataError", "the pkcs8 key is not an RSA private key")
		}
		k.typ, k.rsaPriv, k.rsaPub = "private", priv, &priv.PublicKey
	case "jwk":
		if j.Kty != "RSA" {
			return cerr("DataError", "the JWK's kty is %q, want RSA for %s", j.Kty, k.alg)
		}
		if j.Alg != "" && j.Alg != rsaJWKAlg(k) {
			return cerr("DataError", "the JWK's alg is %q, want %q for this key", j.Alg, rsaJWKAlg(k))
		}
		if k.rsaPub, k.rsaPriv, err = rsaFromJWK(j); err != nil {
			return err
		}
		k.typ = "public"
		if k.rsaPriv != nil {
			k.typ = "private"
		}
	default:
		return cerr("NotSupportedError", "importKey format %q for %s: use spki, pkcs8 or jwk", format, k.alg)
	}
	if k.rsaPub.N.BitLen() < 1024 {
		return cerr("DataError", "an RSA key of %d bits: knee (Go) takes 1024 bits or more", k.rsaPub.N.BitLen())
	}
	return nil
}

// rsaFromJWK is a JWK's RSA public key, and its private key when it has
// d (p and q are needed too; dp, dq and qi are computed again).
func rsaFromJWK(j *jwk) (*rsa.PublicKey, *rsa.PrivateKey, error) {
	num := func(s, member string) (*big.Int, error) {
		if s == "" {
			return nil, cerr("DataError", "the JWK lacks %q", member)
		}
		b, err := b64url(s, member)
		if err != nil {
			return nil, err
		}
		return new(big.Int).SetBytes(b), nil
	}
	n, err := num(j.N, "n")
	if err != nil {
		return nil, nil, err
	}
	e, err := num(j.E, "e")
	if err != nil {
		return nil, nil, err
	}
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
		return nil, nil, cerr("DataError", "the JWK's e is out of range")
	}
	pub := &rsa.PublicKey{N: n, E: int(e.Int64())}
	if j.D == "" {
		return pub, nil, nil
	}
	var parts [3]*big.Int
	for i, m := range [][2]string{{j.D, "d"}, {j.P, "p"}, {j.Q, "q"}} {
		if parts[i], err = num(m[0], m[1]); err != nil {
			return nil, nil, err
		}
	}
	priv := &rsa.PrivateKey{PublicKey: *pub, D: parts[0], Primes: []*big.Int{parts[1], parts[2]}}
	if err := priv.Validate(); err != nil {
		return nil, nil, cerr("DataError", "the JWK's RSA private key: %v", err)
	}
	priv.Precompute()
	return &priv.PublicKey, priv, nil
}

// exportRSA writes an RSA key as spki, pkcs8 or jwk.
func (w *webCrypto) exportRSA(k *cryptoKey, format string) (goja.Value, error) {
	buf := func(b []byte, err error) (goja.Value, error) {
		if err != nil {
			return nil, cerr("OperationError", "%v", err)
		}
		return w.rt.ToValue(w.rt.NewArrayBuffer(b)), nil
	}
	switch format {
	case "spki":
		if k.typ != "public" {
			return nil, cerr("InvalidAccessError", "only a public %s key exports as spki", k.alg)
		}
		return buf(x509.MarshalPKIXPublicKey(k.rsaPub))
	case "pkcs8":
		if k.typ != "private" {
			return nil, cerr("InvalidAccessError", "only a private %s key exports as pkcs8", k.alg)
		}
		return buf(x509.MarshalPKCS8PrivateKey(k.rsaPriv))
	case "jwk":
		enc := func(n *big.Int) string { return base64.RawURLEncoding.EncodeToString(n.Bytes()) }
		o := w.jwkObject(k)
		must(o.Set("kty", "RSA"))
		must(o.Set("alg", rsaJWKAlg(k)))
		must(o.Set("n", enc(k.rsaPub.N)))
		must(o.Set("e", enc(big.NewInt(int64(k.rsaPub.E)))))
		if k.typ == "private" && len(k.rsaPriv.Primes) == 2 {
			p := k.rsaPriv
			must(o.Set("d", enc(p.D)))
			must(o.Set("p", enc(p.Primes[0])))
			must(o.Set("q", enc(p.Primes[1])))
			must(o.Set("dp", enc(p.Precomputed.Dp)))
			must(o.Set("dq", enc(p.Precomputed.Dq)))
			must(o.Set("qi", enc(p.Precomputed.Qinv)))
		}
		return o, nil
	}
	return nil, cerr("NotSupportedError", "exportKey format %q for %s: use spki, pkcs8 or jwk", format, k.alg)
}

// pssSalt is RSA-PSS's saltLength. Go takes 0 to mean "any length", so
// WebCrypto's empty salt is refused rather than misread.
func pssSalt(params *goja.Object) (int, error) {
	v := params.Get("saltLength")
	if v == nil || goja.IsUndefined(v) {
		return 0, cerr("TypeError", "RSA-PSS needs a saltLength")
	}
	n := v.ToInteger()
	if n <= 0 || n > 1<<16 {
		return 0, cerr("NotSupportedError", "RSA-PSS saltLength %d: knee takes 1 or more bytes (32 for SHA-256 is usual)", n)
	}
	return int(n), nil
}

func (w *webCrypto) signRSA(k *cryptoKey, params *goja.Object, data []byte) (goja.Value, error) {
	h := cryptoHash(k.hash)
	sum := h.New()
	sum.Write(data)
	var sig []byte
	var err error
	if k.alg == rsaPKCS1 {
		sig, err = rsa.SignPKCS1v15(nil, k.rsaPriv, h, sum.Sum(nil))
	} else {
		salt, serr := pssSalt(params)
		if serr != nil {
			return nil, serr
		}
		sig, err = rsa.SignPSS(rand.Reader, k.rsaPriv, h, sum.Sum(nil), &rsa.PSSOptions{SaltLength: salt, Hash: h})
	}
	if err != nil {
		return nil, cerr("OperationError", "%s signing: %v", k.alg, err)
	}
	return w.rt.ToValue(w.rt.NewArrayBuffer(sig)), nil
}

func (w *webCrypto) verifyRSA(k *cryptoKey, params *goja.Object, sig, data []byte) (goja.Value, error) {
	h := cryptoHash(k.hash)
	sum := h.New()
	sum.Write(data)
	var err error
	if k.alg == rsaPKCS1 {
		err = rsa.VerifyPKCS1v15(k.rsaPub, h, sum.Sum(nil), sig)
	} else {
		salt, serr := pssSalt(params)
		if serr != nil {
			return nil, serr
		}
		err = rsa.VerifyPSS(k.rsaPub, h, sum.Sum(nil), sig, &rsa.PSSOptions{SaltLength: salt, Hash: h})
	}
	return w.rt.ToValue(err == nil), nil
}

// cryptOAEP is RSA-OAEP with the key's hash and params.label.
func (w *webCrypto) cryptOAEP(k *cryptoKey, params *goja.Object, data []byte, encrypt bool) ([]byte, error) {
	var label []byte
	if l := params.Get("label"); l != nil && !goja.IsUndefined(l) {
		var err error
		if label, err = w.bufferSource(l, "RSA-OAEP's label"); err != nil {
			return nil, err
		}
	}
	h := cryptoHash(k.hash).New()
	if encrypt {
		out, err := rsa.EncryptOAEP(h, rand.Reader, k.rsaPub, data, label)
		if err != nil {
			return nil, cerr("OperationError", "RSA-OAEP encryption: %v", err)
		}
		return out, nil
	}
	out, err := rsa.DecryptOAEP(h, nil, k.rsaPriv, data, label)
	if err != nil {
		return nil, cerr("OperationError", "RSA-OAEP decryption failed (wrong key or label, or altered data)")
	}
	return out, nil
}
