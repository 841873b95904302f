package k6script

import (
	"encoding/base64"
	"fmt"

	"github.com/dop251/goja"
)

// encodingModule is "k6/encoding": b64encode and b64decode with k6's
// encodings (std, rawstd, url, rawurl) and the "s" format for a string.
func encodingModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	enc := func(name string) *base64.Encoding {
		switch name {
		case "", "std":
			return base64.StdEncoding
		case "rawstd":
			return base64.RawStdEncoding
		case "url":
			return base64.URLEncoding
		case "rawurl":
			return base64.RawURLEncoding
		}
		panic(rt.NewGoError(fmt.Errorf("encoding %q: use std, rawstd, url or rawurl", name)))
	}
	str := func(val goja.Value) string {
		if goja.IsUndefined(val) {
			return ""
		}
		return val.String()
	}
	must(o.Set("b64encode", func(call goja.FunctionCall) goja.Value {
		var in []byte
		if ab, ok := call.Argument(0).Export().(goja.ArrayBuffer); ok {
			in = ab.Bytes()
		} else {
			in = []byte(call.Argument(0).String())
		}
		return rt.ToValue(enc(str(call.Argument(1))).EncodeToString(in))
	}))
	must(o.Set("b64decode", func(call goja.FunctionCall) goja.Value {
		out, err := enc(str(call.Argument(1))).DecodeString(call.Argument(0).String())
		if err != nil {
			panic(rt.NewGoError(fmt.Errorf("b64decode: %w", err)))
		}
		if str(call.Argument(2)) == "s" {
			return rt.ToValue(string(out))
		}
		return rt.ToValue(rt.NewArrayBuffer(out))
	}))
	return o
}
