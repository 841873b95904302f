package k6script

import (
	"crypto/aes"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"math/big"

	"github.com/dop251/goja"
)

// WebCrypto's operations on keys: sign, verify, encrypt, decrypt,
// wrapKey, unwrapKey, deriveBits and deriveKey.

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
