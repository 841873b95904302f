package request

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseTemplate checks that any text either parses, and then renders
// without placeholders left and round-trips its literal text, or fails with
// a *TemplateError whose offset lies inside the text.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"", "http://h/{isbn}", "{vu}-{iter}", `{"a":"{isbn}"}`, "{{x}", "{", "{ab", "{a b}", "é{x}"} {
		f.Add(s)
	}
	vars, err := NewVars(map[string][]string{"isbn": {"I"}, "x": {"X"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tpl, err := ParseTemplate(text, vars)
		if err != nil {
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TemplateError", err)
			}
			if te.Offset < 0 || te.Offset >= len(text) {
				t.Fatalf("offset %d outside text of %d bytes", te.Offset, len(text))
			}
			_ = te.Error()
			return
		}
		out := tpl.Render(vars, 1, 2, 3)
		if tpl.Static() {
			// A static template is its text with each {{ unescaped.
			if want := strings.ReplaceAll(text, "{{", "{"); out != want && !strings.Contains(text, "{{{") {
				t.Fatalf("static render %q, want %q", out, want)
			}
			if tpl.Render(vars, 9, 9, 9) != out {
				t.Fatal("static template renders differently for another iteration")
			}
		}
		if len(out) > 2*len(text)+64 {
			t.Fatalf("render of %d bytes from %d bytes of text", len(out), len(text))
		}
	})
}

// FuzzReadResponse checks that the lean client's parser never panics on
// any bytes, and that when it and net/http both read a response, they agree
// on the status and the body's length.
func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x\r\nhello\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.0 404 Not Found\r\n\r\nrest",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 304\nConnection: close\n\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, head bool) {
		var scratch []byte
		got, err := readResponse(bufio.NewReaderSize(bytes.NewReader(data), 16), head, &scratch)
		if err != nil {
			return
		}
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		br := bufio.NewReader(bytes.NewReader(data))
		var want *http.Response
		for { // net/http returns 1xx responses; the lean parser skips them
			want, err = http.ReadResponse(br, &http.Request{Method: method})
			if err != nil {
				return
			}
			if want.StatusCode >= 200 || want.StatusCode == 101 {
				break
			}
		}
		n, err := io.Copy(io.Discard, want.Body)
		if err != nil {
			return
		}
		if got.status != want.StatusCode || got.status != 101 && got.bytesIn != n {
			t.Fatalf("lean: status %d, %d body bytes; net/http: status %d, %d body bytes", got.status, got.bytesIn, want.StatusCode, n)
		}
	})
}

// FuzzSplitURL checks that every URL the lean client takes is sent to the
// host and with the request-target that net/url and net/http would use.
func FuzzSplitURL(f *testing.F) {
	for _, s := range []string{"http://h/", "http://127.0.0.1:8080/a/b?c=d&e", "http://h?x", "http://[::1]:80/%41", "http://h/a b", "https://h/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		authority, uri, ok := splitURL([]byte(raw))
		if !ok {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("lean client takes %q, net/url rejects it: %v", raw, err)
		}
		if string(authority) != u.Host || string(uri) != u.RequestURI() {
			t.Fatalf("%q: lean sends %q to %q; net/http sends %q to %q", raw, uri, authority, u.RequestURI(), u.Host)
		}
	})
}
