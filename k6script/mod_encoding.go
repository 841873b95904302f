package k6script

import (
	"encoding/base64"
	"fmt"

	"github.com/dop251/goja"
)

// encodingModule is "k6/encoding": b64encode and b64decode as k6 has
// them. The second argument picks std, rawstd, url or rawurl; anything
// else (null, undefined, an unknown name) is std, as in k6. b64decode's
// third argument "s" returns a string; anything else (k6 knows no
// 'utf8') returns an ArrayBuffer.
func encodingModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	enc := func(val goja.Value) *base64.Encoding {
		if goja.IsUndefined(val) || goja.IsNull(val) {
			return base64.StdEncoding
		}
		switch val.String() {
		case "rawstd":
			return base64.RawStdEncoding
		case "url":
			return base64.URLEncoding
		case "rawurl":
			return base64.RawURLEncoding
		}
		return base64.StdEncoding
	}
	must(o.Set("b64encode", func(call goja.FunctionCall) goja.Value {
		var in []byte
		switch x := call.Argument(0).Export().(type) {
		case string:
			in = []byte(x)
		case goja.ArrayBuffer:
			in = x.Bytes()
		case []byte: // a Uint8Array
			in = x
		default:
			panic(rt.NewTypeError(fmt.Sprintf("b64encode: input is %s; pass a string or an ArrayBuffer", call.Argument(0).ToString())))
		}
		return rt.ToValue(enc(call.Argument(1)).EncodeToString(in))
	}))
	must(o.Set("b64decode", func(call goja.FunctionCall) goja.Value {
		out, err := enc(call.Argument(1)).DecodeString(call.Argument(0).String())
		if err != nil {
			panic(rt.NewGoError(fmt.Errorf("b64decode: %w", err)))
		}
		if f := call.Argument(2); !goja.IsUndefined(f) && !goja.IsNull(f) && f.String() == "s" {
			return rt.ToValue(string(out))
		}
		return rt.ToValue(rt.NewArrayBuffer(out))
	}))
	return o
}
