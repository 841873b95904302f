package k6script

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/dop251/goja"
)

// cryptoModule is "k6/crypto": the digests (md5, sha1, sha256, sha384,
// sha512, sha512_224, sha512_256), hmac, createHash, createHMAC and
// randomBytes, with k6's output encodings (hex, base64, base64url,
// base64rawurl, binary: an ArrayBuffer).
func cryptoModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	newHash := func(alg string) func() hash.Hash {
		switch alg {
		case "md5":
			return md5.New
		case "sha1":
			return sha1.New
		case "sha256":
			return sha256.New
		case "sha384":
			return sha512.New384
		case "sha512":
			return sha512.New
		case "sha512_224":
			return sha512.New512_224
		case "sha512_256":
			return sha512.New512_256
		}
		panic(rt.NewGoError(fmt.Errorf("k6/crypto: algorithm %q: use md5, sha1, sha256, sha384, sha512, sha512_224 or sha512_256", alg)))
	}
	bytesOf := func(val goja.Value) []byte {
		if ab, ok := val.Export().(goja.ArrayBuffer); ok {
			return ab.Bytes()
		}
		return []byte(val.String())
	}
	encode := func(sum []byte, enc goja.Value) goja.Value {
		name := ""
		if !goja.IsUndefined(enc) && !goja.IsNull(enc) {
			name = enc.String()
		}
		switch name {
		case "hex", "":
			return rt.ToValue(hex.EncodeToString(sum))
		case "base64":
			return rt.ToValue(base64.StdEncoding.EncodeToString(sum))
		case "base64url":
			return rt.ToValue(base64.URLEncoding.EncodeToString(sum))
		case "base64rawurl":
			return rt.ToValue(base64.RawURLEncoding.EncodeToString(sum))
		case "binary":
			return rt.ToValue(rt.NewArrayBuffer(sum))
		}
		panic(rt.NewGoError(fmt.Errorf("k6/crypto: output encoding %q: use hex, base64, base64url, base64rawurl or binary", name)))
	}
	for _, alg := range []string{"md5", "sha1", "sha256", "sha384", "sha512", "sha512_224", "sha512_256"} {
		mk := newHash(alg)
		must(o.Set(alg, func(call goja.FunctionCall) goja.Value {
			h := mk()
			h.Write(bytesOf(call.Argument(0)))
			return encode(h.Sum(nil), call.Argument(1))
		}))
	}
	must(o.Set("hmac", func(call goja.FunctionCall) goja.Value {
		h := hmac.New(newHash(call.Argument(0).String()), bytesOf(call.Argument(1)))
		h.Write(bytesOf(call.Argument(2)))
		return encode(h.Sum(nil), call.Argument(3))
	}))
	hasher := func(h hash.Hash) *goja.Object {
		obj := rt.NewObject()
		must(obj.Set("update", func(call goja.FunctionCall) goja.Value {
			h.Write(bytesOf(call.Argument(0)))
			return obj
		}))
		must(obj.Set("digest", func(call goja.FunctionCall) goja.Value { return encode(h.Sum(nil), call.Argument(0)) }))
		return obj
	}
	must(o.Set("createHash", func(alg string) *goja.Object { return hasher(newHash(alg)()) }))
	must(o.Set("createHMAC", func(alg string, secret goja.Value) *goja.Object {
		return hasher(hmac.New(newHash(alg), bytesOf(secret)))
	}))
	must(o.Set("randomBytes", func(n int) goja.Value {
		if n < 0 || n > 1<<20 {
			panic(rt.NewGoError(fmt.Errorf("k6/crypto: randomBytes(%d): give 0 to 1048576 bytes", n)))
		}
		b := make([]byte, n)
		rand.Read(b)
		return rt.ToValue(rt.NewArrayBuffer(b))
	}))
	return o
}
