package k6script

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/knee-dev/knee/load"
)

// The script reads a response body decoded of the Content-Encodings k6
// decodes (v1.8.1 lib/netext/httpext/compression.go: gzip, deflate as
// zlib, zstd, br; several undone from the last), and any other as sent; a
// body its encoding cannot undo is an iteration error, never the encoded
// bytes. The server encodes the same JSON document as each path says.
func TestResponseBodyDecoded(t *testing.T) {
	const doc = `{"greeting":"hello","n":42}`
	// encode writes b through a compressing writer of w's.
	encode := func(w func(io.Writer) io.WriteCloser) func([]byte) []byte {
		return func(b []byte) []byte {
			var buf bytes.Buffer
			zw := w(&buf)
			zw.Write(b)
			zw.Close()
			return buf.Bytes()
		}
	}
	gz := encode(func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
	zl := encode(func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
	bro := encode(func(w io.Writer) io.WriteCloser { return brotli.NewWriter(w) })
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
			body, enc = bro(body), "br"
		case "/br-then-gzip":
			body, enc = gz(bro(body)), "br, gzip"
		case "/corrupt-gzip":
			body, enc = []byte("not gzip at all"), "gzip"
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
		{"/identity", 0}, {"/gzip", 0}, {"/deflate", 0}, {"/zstd", 0}, {"/deflate-then-gzip", 0}, {"/unknown", 0},
		{"/br", 0}, {"/br-then-gzip", 0}, {"/corrupt-gzip", 1},
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

// params.compression compresses the request body as k6 does (v1.8.1
// lib/netext/httpext/compression.go compressBody: each algorithm in turn,
// Content-Encoding their list), while res.request.body stays the body as
// given; an algorithm k6 does not know is k6's error. The server undoes the encodings
// from the last, as a reader of Content-Encoding must, and echoes what it
// read with the header.
func TestRequestBodyCompressed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := r.Header.Get("Content-Encoding")
		var body io.Reader = r.Body
		encs := strings.Split(enc, ",")
		for i := len(encs) - 1; i >= 0 && enc != ""; i-- {
			var err error
			switch strings.TrimSpace(encs[i]) {
			case "gzip":
				body, err = gzip.NewReader(body)
			case "deflate":
				body, err = zlib.NewReader(body)
			case "zstd":
				body, err = zstd.NewReader(body)
			case "br":
				body = brotli.NewReader(body)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		read, _ := io.ReadAll(body)
		w.Write([]byte(enc + "|" + string(read)))
	}))
	defer srv.Close()
	for _, tt := range []struct {
		compression string
		echo        string // what the server read; "" when the request throws
	}{
		{"", "|hello hello hello"},
		{"gzip", "gzip|hello hello hello"},
		{"deflate", "deflate|hello hello hello"},
		{"zstd", "zstd|hello hello hello"},
		{" gzip , deflate ", "gzip, deflate|hello hello hello"},
		{"br", "br|hello hello hello"},
		{"zstd,br", "zstd, br|hello hello hello"},
		{"lz4", ""},
	} {
		t.Run(tt.compression, func(t *testing.T) {
			s := loadScript(t, `import http from 'k6/http';
import { check } from 'k6';
export default function () {
  const r = http.post(__ENV.BASE, 'hello hello hello', { compression: __ENV.C });
  check(r, { 'echo': (x) => x.body === __ENV.WANT, 'request body as given': (x) => x.request.body === 'hello hello hello' });
}`, map[string]string{"BASE": srv.URL, "C": tt.compression, "WANT": tt.echo})
			it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
			it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Called: time.Now()}, &samples{})
			n, first := s.IterationErrors()
			if tt.echo == "" {
				if n != 1 {
					t.Errorf("%d iteration errors; want the request refused", n)
				}
				return
			}
			if rate, total := s.Checks.Rate(); n != 0 || rate != 1 || total != 2 {
				t.Errorf("checks passed at rate %v of %d, %d iteration errors (%s); want the server to read the body", rate, total, n, first)
			}
		})
	}
}
