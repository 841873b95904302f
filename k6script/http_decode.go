package k6script

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/dop251/goja"
	"github.com/klauspost/compress/zstd"
)

// compressionParam reads params.compression as k6 does (v1.8.1
// js/modules/k6/http/request.go): "" or none for no compression, else
// algorithms separated by commas, each exactly gzip, deflate, zstd or br,
// applied in that order.
func compressionParam(val goja.Value) ([]string, error) {
	if val == nil || goja.IsUndefined(val) || goja.IsNull(val) {
		return nil, nil
	}
	list := strings.TrimSpace(val.String())
	if list == "" {
		return nil, nil
	}
	var out []string
	for _, algo := range strings.Split(list, ",") {
		switch algo = strings.TrimSpace(algo); algo {
		case "gzip", "deflate", "zstd", "br":
			out = append(out, algo)
		default:
			return nil, fmt.Errorf("unknown compression algorithm %s, supported algorithms are [gzip deflate zstd br]", algo)
		}
	}
	return out, nil
}

// encodeBody compresses a request body with each algorithm in turn, as
// k6's compressBody does (lib/netext/httpext/compression.go), and sets
// Content-Encoding to their list unless the script set its own (k6 keeps
// the script's, with a warning when they differ).
func (v *vu) encodeBody(body []byte, algos []string, h http.Header) []byte {
	for _, algo := range algos {
		var buf bytes.Buffer
		var w io.WriteCloser
		switch algo {
		case "gzip":
			w = gzip.NewWriter(&buf)
		case "deflate":
			w = zlib.NewWriter(&buf)
		case "zstd":
			w, _ = zstd.NewWriter(&buf) // no options given: no error
		case "br":
			w = brotli.NewWriter(&buf) // the library's default quality, as k6
		}
		if _, err := w.Write(body); err != nil {
			panic(v.rt.NewGoError(fmt.Errorf("params compression %s: %w", algo, err)))
		}
		if err := w.Close(); err != nil {
			panic(v.rt.NewGoError(fmt.Errorf("params compression %s: %w", algo, err)))
		}
		body = buf.Bytes()
	}
	enc := strings.Join(algos, ", ")
	if cur := h.Get("Content-Encoding"); cur == "" {
		h.Set("Content-Encoding", enc)
	} else if cur != enc {
		v.s.con.line("warn", fmt.Sprintf("the compression param (%s) and the Content-Encoding header set (%s) differ: the header is kept, as k6 keeps it, and the server may not read the body", enc, cur))
	}
	return body
}

// decodeBody is a response's body as k6 gives it to the script: undone of
// each Content-Encoding it knows, the last applied first (k6 v1.8.1
// lib/netext/httpext/compression.go readResponseBody: gzip, deflate as
// zlib, zstd and br, names matched exactly); any other encoding is left
// as it is.
// The request's timings and data_received keep the bytes on the wire.
func decodeBody(h http.Header, body []byte) ([]byte, error) {
	encs := strings.Split(h.Get("Content-Encoding"), ",")
	for i := len(encs) - 1; i >= 0; i-- {
		var r io.Reader
		var err error
		switch enc := strings.TrimSpace(encs[i]); enc {
		case "gzip":
			r, err = gzip.NewReader(bytes.NewReader(body))
		case "deflate":
			r, err = zlib.NewReader(bytes.NewReader(body))
		case "zstd":
			var d *zstd.Decoder
			if d, err = zstd.NewReader(bytes.NewReader(body)); err == nil {
				defer d.Close()
				r = d
			}
		case "br":
			r = brotli.NewReader(bytes.NewReader(body))
		default:
			continue
		}
		if err == nil {
			body, err = io.ReadAll(r)
		}
		if err != nil {
			return nil, fmt.Errorf("the response body's Content-Encoding %s cannot be decoded: %w", strings.TrimSpace(encs[i]), err)
		}
	}
	return body, nil
}
