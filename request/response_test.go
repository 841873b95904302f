package request

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// responseCase is a response as a server sends it and what any HTTP/1.1
// client must make of it, worked out by hand from RFC 9112 and net/http's
// rules. They seed FuzzReadResponse too.
type responseCase struct {
	name string
	in   string
	head bool // the response to a HEAD request
	fail bool
	want outcome
}

var responseCases = []responseCase{
	{name: "Content-Length", in: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", want: outcome{200, 3, true}},
	{name: "chunked with extension and trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x\r\nhello\r\n0\r\nT: 1\r\n\r\n", want: outcome{200, 5, true}},
	{name: "HTTP/1.0 body to close", in: "HTTP/1.0 404 Not Found\r\n\r\nrest", want: outcome{404, 4, false}},
	{name: "100 Continue skipped", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", want: outcome{204, 0, true}},
	{name: "bare LF in the head", in: "HTTP/1.1 304\nConnection: close\n\n", want: outcome{304, 0, false}},
	{name: "HEAD: no body whatever the length", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", head: true, want: outcome{200, 0, true}},
	{name: "101 ends the exchange", in: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n", want: outcome{101, 0, false}},
	{name: "HTTP/2.0 status line read as 1.1", in: "HTTP/2.0 200 OK\r\nContent-Length: 1\r\n\r\na", want: outcome{200, 1, true}},
	{name: "status below 100: never reused", in: "HTTP/1.1 099 X\r\nContent-Length: 1\r\n\r\na", want: outcome{99, 1, false}},
	{name: "HTTP/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nab", want: outcome{200, 2, true}},

	// Obsolete line folding (RFC 9112 §5.2): the lines join with a space.
	{name: "folded header", in: "HTTP/1.1 200 OK\r\nX-A: a\r\n  b\r\n\tc\r\nContent-Length: 3\r\n\r\nabc", want: outcome{200, 3, true}},
	{name: "folded Connection: close", in: "HTTP/1.1 200 OK\r\nConnection: keep-alive,\r\n close\r\nContent-Length: 0\r\n\r\n", want: outcome{200, 0, false}},
	{name: "folded Content-Length", in: "HTTP/1.1 200 OK\r\nContent-Length:\r\n 2\r\n\r\nab", want: outcome{200, 2, true}},
	{name: "fold of spaces leaves one: chunked  is not chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n \r\n\r\n0\r\n\r\n", fail: true},
	{name: "space before the first header", in: "HTTP/1.1 200 OK\r\n X: 1\r\nContent-Length: 0\r\n\r\n", fail: true},

	// A space before the colon: net/http keeps the field under the name
	// "Content-Length " and never reads it as the length, so the body runs
	// to the connection's close (checked against net/http's Transport too,
	// TestDoSpaceBeforeColon).
	{name: "Content-Length space colon", in: "HTTP/1.1 200 OK\r\nContent-Length : 3\r\n\r\nabcdef", want: outcome{200, 6, false}},
	{name: "tab in a header name", in: "HTTP/1.1 200 OK\r\nContent-Length\t: 3\r\n\r\nabc", fail: true},
	{name: "control byte in a value", in: "HTTP/1.1 200 OK\r\nX: a\x01b\r\nContent-Length: 0\r\n\r\n", fail: true},
	{name: "obs-text in a value", in: "HTTP/1.1 200 OK\r\nX: caf\xe9\r\nContent-Length: 0\r\n\r\n", want: outcome{200, 0, true}},
	{name: "no colon", in: "HTTP/1.1 200 OK\r\nX\r\n\r\n", fail: true},
	// A chunked response's Trailer may not name a framing field (net/http's fixTrailer).
	{name: "Trailer names Content-Length", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X, content-length\r\n\r\n0\r\n\r\n", fail: true},
	{name: "Trailer names Content-Length, not chunked", in: "HTTP/1.1 200 OK\r\nTrailer: Content-Length\r\nContent-Length: 0\r\n\r\n", want: outcome{200, 0, true}},

	// Content-Length as net/http reads it.
	{name: "Content-Length -0", in: "HTTP/1.1 200 OK\r\nContent-Length: -0\r\n\r\n", fail: true},
	{name: "Content-Length +3", in: "HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc", fail: true},
	{name: "Content-Length empty", in: "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", fail: true},
	{name: "Content-Length list", in: "HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc", fail: true},
	{name: "Content-Length twice alike", in: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\ncontent-length:  3 \r\n\r\nabc", want: outcome{200, 3, true}},
	{name: "Content-Length 3 and 03", in: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 03\r\n\r\nabc", fail: true},
	{name: "Content-Length conflicting", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", fail: true},
	{name: "Content-Length above 2^63-1", in: "HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775808\r\n\r\n", fail: true},
	{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", fail: true},

	// Transfer-Encoding as net/http reads it.
	{name: "Transfer-Encoding chunked twice", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", fail: true},
	{name: "Transfer-Encoding gzip", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", fail: true},
	{name: "Transfer-Encoding ignored in HTTP/1.0", in: "HTTP/1.0 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\nxyz", want: outcome{200, 3, false}},
	{name: "chunked wins over Content-Length", in: "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nTransfer-Encoding: CHUNKED\r\n\r\n2\r\nab\r\n0\r\n\r\n", want: outcome{200, 2, true}},

	// Chunk lines as net/http reads them since the CVE-2025-22871 fix.
	{name: "bare LF after a chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", fail: true},
	{name: "bare LF after chunk data", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\n0\r\n\r\n", fail: true},
	{name: "CR inside a chunk line", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;a\rb\r\nabc\r\n0\r\n\r\n", fail: true},
	{name: "space before a chunk extension", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3 ;a\r\nabc\r\n0\r\n\r\n", fail: true},
	{name: "trailing space after a chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n", want: outcome{200, 3, true}},
	{name: "chunk size of 17 digits", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000003\r\nabc\r\n0\r\n\r\n", fail: true},
	{name: "chunk line of 4096 bytes", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0;" + strings.Repeat("e", 4092) + "\r\n\r\n", want: outcome{200, 0, true}},
	{name: "chunk line over 4096 bytes", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0;" + strings.Repeat("e", 4093) + "\r\n\r\n", fail: true},
	// 4 chunks of 1 byte with 3,000-byte extensions stay under 16 KiB of
	// overhead (4 × (3,004+2-16-2)); 6 go over it.
	{name: "chunk extensions under the overhead limit", in: chunks(4, 3000), want: outcome{200, 4, true}},
	{name: "chunk extensions over the overhead limit", in: chunks(6, 3000), fail: true},

	// Trailers: the section must end (CRLFCRLF) within 4 KiB.
	{name: "trailer of 4 KiB", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: " + strings.Repeat("t", 4000) + "\r\n\r\n", want: outcome{200, 0, true}},
	{name: "trailer over 4 KiB", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: " + strings.Repeat("t", 4100) + "\r\n\r\n", fail: true},
	{name: "trailer ended by bare LFs", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: 1\n\n", fail: true},
	{name: "trailer without a colon", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT\r\n\r\n", fail: true},

	// Status lines as net/http's ReadResponse reads them.
	{name: "two spaces before the code", in: "HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n", want: outcome{200, 0, true}},
	{name: "signed code", in: "HTTP/1.1 +20 X\r\nContent-Length: 0\r\n\r\n", want: outcome{20, 0, false}},
	{name: "negative code", in: "HTTP/1.1 -20 X\r\nContent-Length: 0\r\n\r\n", fail: true},
	{name: "four-digit code", in: "HTTP/1.1 2000 X\r\nContent-Length: 0\r\n\r\n", fail: true},
	{name: "HTTP/1.10", in: "HTTP/1.10 200 OK\r\nContent-Length: 0\r\n\r\n", fail: true},
	{name: "HTTP/0.9: never reused", in: "HTTP/0.9 200 OK\r\nContent-Length: 0\r\n\r\n", want: outcome{200, 0, false}},
	{name: "header line over the read buffer", in: "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("l", 9000) + "\r\nContent-Length: 1\r\n\r\nz", want: outcome{200, 1, true}},
	{name: "folded line over the read buffer", in: "HTTP/1.1 200 OK\r\nX-Long: a\r\n " + strings.Repeat("l", 9000) + "\r\nConnection: close\r\nContent-Length: 1\r\n\r\nz", want: outcome{200, 1, false}},
	{name: "nothing", in: "", fail: true},
	{name: "head cut short", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", fail: true},
}

// chunks is a chunked response of n one-byte chunks, each with an
// extension of ext bytes.
func chunks(n, ext int) string {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
	for range n {
		b.WriteString("1;" + strings.Repeat("e", ext-2) + "\r\nX\r\n")
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// TestReadResponseAgreesWithNetHTTP checks both parsers against the
// hand-worked outcome of each case.
func TestReadResponseAgreesWithNetHTTP(t *testing.T) {
	for _, c := range responseCases {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range []struct {
				name string
				read func([]byte, bool) (outcome, error)
			}{{"lean", leanRead}, {"net/http", netHTTPRead}} {
				got, err := p.read([]byte(c.in), c.head)
				switch {
				case c.fail && err == nil:
					t.Errorf("%s: read %+v, want an error", p.name, got)
				case !c.fail && err != nil:
					t.Errorf("%s: %v, want %+v", p.name, err, c.want)
				case !c.fail && got != c.want:
					t.Errorf("%s: %+v, want %+v", p.name, got, c.want)
				}
			}
		})
	}
}

// The lean parser's verdict does not depend on how the bytes arrive: one
// at a time, every case reads as it does from a full buffer (a folded
// field is then peeked for with nothing buffered, the trailer's end found
// by growing peeks).
func TestReadResponseOneByteAtATime(t *testing.T) {
	for _, c := range responseCases {
		var s scratch
		br := bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(c.in)), leanReadBuffer)
		r, err := readResponse(br, c.head, &s, nil)
		got := outcome{r.status, r.bytesIn, r.keepAlive}
		if (err != nil) != c.fail || !c.fail && got != c.want {
			t.Errorf("%s: %+v, err %v; want %+v, failure %v", c.name, got, err, c.want, c.fail)
		}
	}
}

// TestReadResponseKept checks what Conns keeps of a response (protocol,
// header fields, body) against what net/http's ReadResponse gives, worked
// out by hand from its rules (net/http/transfer.go), with the bytes
// arriving all at once and one at a time.
func TestReadResponseKept(t *testing.T) {
	for _, c := range []struct {
		name, in   string
		head       bool
		proto, hdr string // hdr as http.Header.Write writes it, sorted
		body       string
	}{
		{name: "folded field", in: "HTTP/1.1 200 OK\r\nx-a: a\r\n  b\r\nContent-Length: 3\r\n\r\nabc",
			proto: "HTTP/1.1", hdr: "Content-Length: 3\r\nX-A: a b\r\n", body: "abc"},
		{name: "chunked: framing fields go", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: T\r\ncontent-length: 9\r\nX: 1\r\n\r\n5;x\r\nhello\r\n3\r\n, w\r\n0\r\nT: 1\r\n\r\n",
			proto: "HTTP/1.1", hdr: "X: 1\r\n", body: "hello, w"},
		{name: "1xx skipped, close said by 1.1 goes", in: "HTTP/1.1 100 Continue\r\nX: 100\r\n\r\nHTTP/1.1 201 Created\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
			proto: "HTTP/1.1", hdr: "Content-Length: 2\r\n", body: "ok"},
		{name: "close said by 1.0 stays", in: "HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nrest",
			proto: "HTTP/1.0", hdr: "Connection: close\r\n", body: "rest"},
		{name: "equal lengths become one", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length:  2 \r\n\r\nab",
			proto: "HTTP/1.1", hdr: "Content-Length: 2\r\n", body: "ab"},
		{name: "HEAD: chunked keeps its length", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n", head: true,
			proto: "HTTP/1.1", hdr: "Content-Length: 7\r\n", body: ""},
		{name: "repeated fields in order", in: "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nContent-Length: 0\r\n\r\n",
			proto: "HTTP/1.1", hdr: "Content-Length: 0\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n", body: ""},
		{name: "HTTP/2.0 line", in: "HTTP/2.0 204 No Content\r\n\r\n", proto: "HTTP/2.0", hdr: "", body: ""},
		{name: "a name repeated after nine others", in: "HTTP/1.1 200 OK\r\nx-a: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\nH: 8\r\nI: 9\r\nJ: 10\r\nX-A: 11\r\nContent-Length: 0\r\n\r\n",
			proto: "HTTP/1.1", hdr: "B: 2\r\nC: 3\r\nContent-Length: 0\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\nH: 8\r\nI: 9\r\nJ: 10\r\nX-A: 1\r\nX-A: 11\r\n", body: ""},
	} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			var s scratch
			k := kept{keepBody: true}
			_, err := readResponse(bufio.NewReaderSize(r, leanReadBuffer), c.head, &s, &k)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if got := headerText(k.fields.header()); k.proto != c.proto || got != c.hdr || string(k.body) != c.body {
				t.Errorf("%s (one byte at a time %v): %s %q %q, want %s %q %q", c.name, oneByte, k.proto, got, k.body, c.proto, c.hdr, c.body)
			}
		}
	}
}

// The kept fields' values share one allocation, yet each name's are its
// own: a value added to one name changes no other; and the names a
// connection has seen before come out canonical as the first time.
func TestReadResponseKeptFieldsAreTheirOwn(t *testing.T) {
	var s scratch
	for round := range 2 {
		k := kept{}
		in := "HTTP/1.1 200 OK\r\nx-a: 1\r\nx-b: 2\r\nContent-Length: 0\r\n\r\n"
		if _, err := readResponse(bufio.NewReaderSize(strings.NewReader(in), leanReadBuffer), false, &s, &k); err != nil {
			t.Fatal(err)
		}
		h := k.fields.header()
		h.Add("X-A", "added")
		if got, want := headerText(h), "Content-Length: 0\r\nX-A: 1\r\nX-A: added\r\nX-B: 2\r\n"; got != want {
			t.Errorf("round %d: %q, want %q", round, got, want)
		}
	}
}
