package k6script

import (
	"errors"
	"fmt"

	"github.com/dop251/goja"
)

// blobData is a Blob's bytes and type; a Blob object keeps it under the
// module's symbol, out of the script's reach.
type blobData struct {
	b   []byte
	typ string
}

// newBlob is new Blob([parts], [options]) as k6/websockets has it: parts
// are strings (UTF-8), ArrayBuffers, typed arrays, DataViews and Blobs;
// options.type is kept as given.
func (m *wsAPI) newBlob(call goja.ConstructorCall) *goja.Object {
	rt := m.v.rt
	var buf []byte
	if parts := call.Argument(0); !goja.IsUndefined(parts) && !goja.IsNull(parts) {
		po, ok := parts.(*goja.Object)
		if !ok {
			panic(rt.NewGoError(fmt.Errorf("failed to process [blobParts]: %s is not an array", parts.String())))
		}
		n := po.Get("length").ToInteger()
		for i := int64(0); i < n; i++ {
			part := po.Get(fmt.Sprint(i))
			if s, ok := part.Export().(string); ok {
				buf = append(buf, s...)
				continue
			}
			if ab, ok := part.Export().(goja.ArrayBuffer); ok {
				buf = append(buf, ab.Bytes()...)
				continue
			}
			if b, ok := m.blobBytes(part); ok {
				buf = append(buf, b...)
				continue
			}
			if b, ok := viewBytes(rt, part); ok {
				buf = append(buf, b...)
				continue
			}
			panic(rt.NewGoError(fmt.Errorf("failed to process [blobParts]: unsupported type: %s", jsTypeName(rt, part))))
		}
	}
	typ := ""
	if opts := call.Argument(1); !goja.IsUndefined(opts) {
		o, ok := opts.(*goja.Object)
		if !ok {
			panic(rt.NewGoError(errors.New("[options] must be an object")))
		}
		if t := o.Get("type"); t != nil && !goja.IsUndefined(t) {
			typ = t.String()
		}
	}
	return m.blob(buf, typ)
}

// blob makes a Blob object of b (kept, not copied).
func (m *wsAPI) blob(b []byte, typ string) *goja.Object {
	rt := m.v.rt
	d := &blobData{b: b, typ: typ}
	o := rt.NewObject()
	must(o.SetPrototype(m.blobCtor.Get("prototype").ToObject(rt)))
	must(o.DefineDataPropertySymbol(m.blobKey, rt.ToValue(d), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))
	getter := func(name string, get func() any) {
		must(o.DefineAccessorProperty(name, rt.ToValue(get), nil, goja.FLAG_FALSE, goja.FLAG_TRUE))
	}
	getter("size", func() any { return len(d.b) })
	getter("type", func() any { return d.typ })
	resolved := func(val func() (any, error)) func() goja.Value {
		return func() goja.Value {
			p, resolve, reject := rt.NewPromise()
			x, err := val()
			if err != nil {
				err = reject(err)
			} else {
				err = resolve(x)
			}
			if err != nil {
				panic(err)
			}
			return rt.ToValue(p)
		}
	}
	must(o.Set("arrayBuffer", resolved(func() (any, error) { return rt.NewArrayBuffer(append([]byte(nil), d.b...)), nil })))
	must(o.Set("text", resolved(func() (any, error) { return string(d.b), nil })))
	must(o.Set("bytes", resolved(func() (any, error) {
		return rt.New(rt.Get("Uint8Array"), rt.ToValue(rt.NewArrayBuffer(append([]byte(nil), d.b...))))
	})))
	must(o.Set("slice", func(call goja.FunctionCall) goja.Value {
		n := int64(len(d.b))
		// the spec's clamping: negative counts from the end
		at := func(arg goja.Value, dflt int64) int64 {
			if goja.IsUndefined(arg) {
				return dflt
			}
			i := arg.ToInteger()
			if i < 0 {
				i += n
			}
			return min(max(i, 0), n)
		}
		from, to := at(call.Argument(0), 0), at(call.Argument(1), n)
		to = max(to, from)
		typ := ""
		if t := call.Argument(2); !goja.IsUndefined(t) {
			typ = t.String()
		}
		return m.blob(append([]byte(nil), d.b[from:to]...), typ)
	}))
	must(o.Set("stream", func() goja.Value {
		panic(rt.NewGoError(errors.New("Blob.stream() is not supported by knee; use blob.arrayBuffer() or blob.text()")))
	}))
	return o
}

// blobBytes is val's bytes if it is a Blob of this module.
func (m *wsAPI) blobBytes(val goja.Value) ([]byte, bool) {
	o, ok := val.(*goja.Object)
	if !ok {
		return nil, false
	}
	sv := o.GetSymbol(m.blobKey)
	if sv == nil {
		return nil, false
	}
	d, ok := sv.Export().(*blobData)
	if !ok {
		return nil, false
	}
	return d.b, true
}
