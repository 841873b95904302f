package k6script

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// decodeBody is a response's body as k6 gives it to the script: undone of
// each Content-Encoding it knows, the last applied first (k6 v1.8.1
// lib/netext/httpext/compression.go readResponseBody: gzip, deflate as
// zlib, zstd and br, names matched exactly); any other encoding is left
// as it is. knee has no brotli decoder: a br body is an error saying so.
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
			return nil, errors.New("the response body is brotli-encoded (Content-Encoding: br), which knee cannot decode; leave br out of the request's Accept-Encoding header")
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
