package request

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
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

// FuzzReadResponse feeds the same bytes to the lean client's parser and
// to net/http (http.ReadResponse for the same method, skipping 1xx as the
// Transport does, then the body read to its end): both must succeed or
// both fail, and when they succeed agree on the status, the body's length
// and whether the connection may be reused; and Conns' reading of the same
// bytes (header fields and body kept) agrees with net/http on the protocol,
// every header field and the body, byte for byte.
func FuzzReadResponse(f *testing.F) {
	for _, c := range responseCases {
		f.Add([]byte(c.in), c.head)
	}
	f.Fuzz(func(t *testing.T, data []byte, head bool) {
		got, gerr := leanRead(data, head)
		wantKept, werr := netHTTPReadKept(data, head)
		want := wantKept.outcome
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: lean error %v, net/http error %v", data, gerr, werr)
		}
		if gerr == nil && got != want {
			t.Fatalf("%q: lean %+v, net/http %+v", data, got, want)
		}
		kgot, kerr := keptRead(data, head)
		if (kerr == nil) != (werr == nil) {
			t.Fatalf("%q: kept error %v, net/http error %v", data, kerr, werr)
		}
		if kerr == nil && kgot != wantKept {
			t.Fatalf("%q: kept %+v\nnet/http %+v", data, kgot, wantKept)
		}
	})
}

// outcome is what both clients must agree on for a response.
type outcome struct {
	status    int
	body      int64
	keepAlive bool
}

// keptOutcome is what Conns and net/http must agree on besides.
type keptOutcome struct {
	outcome
	proto   string
	header  string // http.Header written out, sorted
	content string
}

// keptRead parses data as Conns does: fields and body kept.
func keptRead(data []byte, head bool) (keptOutcome, error) {
	var s scratch
	k := kept{keepBody: true}
	r, err := readResponse(bufio.NewReaderSize(bytes.NewReader(data), leanReadBuffer), head, &s, &k)
	if int64(len(k.body)) != r.bytesIn {
		return keptOutcome{}, fmt.Errorf("kept %d body bytes, counted %d", len(k.body), r.bytesIn)
	}
	return keptOutcome{outcome{r.status, r.bytesIn, r.keepAlive}, k.proto, headerText(k.fields.header()), string(k.body)}, err
}

// headerText writes h out sorted by name, values in order, so two headers
// compare as strings.
func headerText(h http.Header) string {
	var b strings.Builder
	h.Write(&b) //nolint:errcheck // a strings.Builder does not fail
	return b.String()
}

// leanRead parses data with the lean client, through a read buffer of the
// lean client's size (net/http's too: limits on chunk lines and trailers
// depend on it).
func leanRead(data []byte, head bool) (outcome, error) {
	var s scratch
	r, err := readResponse(bufio.NewReaderSize(bytes.NewReader(data), leanReadBuffer), head, &s, nil)
	return outcome{r.status, r.bytesIn, r.keepAlive}, err
}

// netHTTPRead parses data as net/http's Transport does: ReadResponse until
// a status other than a non-final 1xx, the body to its end, and the
// connection kept only when the response does not close it and its status
// is 200 or more.
func netHTTPRead(data []byte, head bool) (outcome, error) {
	k, err := netHTTPReadKept(data, head)
	return k.outcome, err
}

// netHTTPReadKept is netHTTPRead with the protocol, header fields and body
// net/http gives.
func netHTTPReadKept(data []byte, head bool) (keptOutcome, error) {
	method := http.MethodGet
	if head {
		method = http.MethodHead
	}
	br := bufio.NewReader(bytes.NewReader(data))
	for {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			return keptOutcome{}, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode <= 199 && resp.StatusCode != 101 {
			continue
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return keptOutcome{}, err
		}
		o := outcome{resp.StatusCode, int64(len(body)), !resp.Close && resp.StatusCode >= 200}
		return keptOutcome{o, resp.Proto, headerText(resp.Header), string(body)}, nil
	}
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
