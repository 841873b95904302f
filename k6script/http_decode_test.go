package k6script

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/knee-dev/knee/load"
)

// The script reads a response body decoded of the Content-Encodings k6
// decodes (v1.8.1 lib/netext/httpext/compression.go: gzip, deflate as
// zlib, zstd; several undone from the last), and any other as sent; a
// brotli body, which k6 decodes and knee cannot, is an iteration error
// saying so, never the encoded bytes. The server encodes the same JSON
// document as each path says.
func TestResponseBodyDecoded(t *testing.T) {
	const doc = `{"greeting":"hello","n":42}`
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	zl := func(b []byte) []byte {
		var buf bytes.Buffer
		w := zlib.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	zs := func(b []byte) []byte {
		w, _ := zstd.NewWriter(nil)
		defer w.Close()
		return w.EncodeAll(b, nil)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, enc := []byte(doc), ""
		switch r.URL.Path {
		case "/gzip":
			body, enc = gz(body), "gzip"
		case "/deflate":
			body, enc = zl(body), "deflate"
		case "/zstd":
			body, enc = zs(body), "zstd"
		case "/deflate-then-gzip":
			body, enc = gz(zl(body)), "deflate, gzip"
		case "/br":
			body, enc = []byte{0x0b, 0x02, 0x80}, "br"
		case "/unknown":
			enc = "x-custom"
		}
		if enc != "" {
			w.Header().Set("Content-Encoding", enc)
		}
		w.Write(body)
	}))
	defer srv.Close()
	for _, tt := range []struct {
		path   string
		errors int64 // iteration errors: the body could not be read
	}{
		{"/identity", 0}, {"/gzip", 0}, {"/deflate", 0}, {"/zstd", 0}, {"/deflate-then-gzip", 0}, {"/unknown", 0}, {"/br", 1},
	} {
		t.Run(tt.path, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
import { check } from 'k6';
export default function () {
  const r = http.get(__ENV.BASE + __ENV.P);
  check(r, { 'decoded': (x) => x.json('greeting') === 'hello' && x.json('n') === 42 && x.body.length === 27 });
}`, map[string]string{"BASE": srv.URL, "P": tt.path})
			it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
			it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Called: time.Now()}, &samples{})
			n, first := s.IterationErrors()
			if n != tt.errors {
				t.Fatalf("%d iteration errors (%s); want %d", n, first, tt.errors)
			}
			pass, fail := s.Checks.Rate()
			if tt.errors == 0 && (pass != 1 || fail != 1) {
				t.Errorf("check passed at rate %v of %d; want the decoded document", pass, fail)
			}
		})
	}
}
