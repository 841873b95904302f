package request

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/textproto"
	"strings"
)

// Limits of the lean client's response parser. Each is net/http's, so that
// both clients accept and refuse the same responses.
const (
	// maxHeadBytes bounds the status lines and headers of a response and of
	// the 1xx responses before it: net/http Transport's default
	// MaxResponseHeaderBytes.
	maxHeadBytes = 10 << 20
	// maxChunkLine bounds a chunk-size line with its CRLF: net/http reads it
	// from its 4 KiB bufio buffer.
	maxChunkLine = 4096
	// maxTrailerScan: the trailer section's CRLFCRLF must come within this
	// many bytes, as net/http peeks its buffer for it.
	maxTrailerScan = 4096
	// maxChunkExcess bounds chunk overhead beyond 16 bytes plus twice the
	// data of each chunk (long chunk extensions), as net/http does.
	maxChunkExcess = 16 << 10
	// keepScratch bounds the scratch space a connection keeps between
	// responses; a longer header's buffer is dropped after its response.
	keepScratch = 64 << 10
)

// errMalformed marks a response the lean client cannot parse (class other).
var errMalformed = errors.New("malformed HTTP response")

// response is what the lean client keeps of a response.
type response struct {
	status    int
	bytesIn   int64 // body bytes, after chunked decoding
	wireIn    int64 // bytes received: status lines, headers, framed body (set by the caller)
	wireOut   int64 // bytes of the request written (set by the caller)
	keepAlive bool  // the connection may carry another request
	started   bool  // any byte of the response arrived
	rx        int64 // the kernel's receive time of its last bytes (Unix ns); 0 if unknown
}

// kept is what a client that hands responses on (Conns) keeps of one
// besides the lean client's counts: what net/http's ReadResponse would
// give it, header fields as net/http leaves them and the body decoded
// from its framing.
type kept struct {
	proto    string // "HTTP/1.1"; "" until the final response's head arrived
	fields   fields // set by readResponse
	body     []byte // the body, when keepBody
	keepBody bool   // false: the body is counted and discarded
}

// fields are a response's header fields as Conns read them, kept in one
// string until asked for (header): a script that never reads a response's
// headers then costs no map. Each field is "Name\x00value\x00", the name
// canonical (net/textproto's), in the order they came; neither holds a
// NUL, which readFields refuses in a field.
type fields struct {
	head bool // the fields of a head that arrived (Reply.Headers makes them a Header)
	text string
	// The framing fields that net/http's ReadResponse leaves out of the
	// header (its readTransfer), besides Transfer-Encoding, always left
	// out: Connection when it said close from HTTP/1.1 on, a chunked
	// body's Content-Length, a chunked response's Trailer.
	dropConnection, dropContentLength, dropTrailer bool
	setCookie                                      bool // a Set-Cookie field is among them
}

// header is the fields as net/http's ReadResponse leaves them in a
// Response's Header: the framing fields out, repeated equal
// Content-Length fields as one.
func (f *fields) header() http.Header {
	n := strings.Count(f.text, "\x00") / 2
	h := make(http.Header, n)
	vals := make([]string, 0, n) // the first value of each name, sliced for h
	for rest := f.text; rest != ""; {
		i := strings.IndexByte(rest, 0)
		name := rest[:i]
		rest = rest[i+1:]
		i = strings.IndexByte(rest, 0)
		val := rest[:i]
		rest = rest[i+1:]
		switch name {
		case "Transfer-Encoding":
			continue
		case "Connection":
			if f.dropConnection {
				continue
			}
		case "Content-Length":
			if f.dropContentLength || len(h[name]) > 0 {
				continue
			}
		case "Trailer":
			if f.dropTrailer {
				continue
			}
		}
		if vs, ok := h[name]; ok {
			h[name] = append(vs, val)
			continue
		}
		vals = append(vals, val)
		// Capacity 1: a second value of the name, or an Add by the
		// caller, copies rather than overwrite the next name's.
		h[name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	return h
}

// scratch is a connection's space for lines longer than its read buffer
// and for folded header fields.
type scratch struct {
	line, fold []byte
	fields     []byte // a response's fields, as fields.text has them
	// keys maps header names as they came to their canonical form, so that
	// a connection's responses, which repeat the same names, allocate a
	// name once (up to maxKeys names) rather than once per field.
	keys map[string]string
}

// maxKeys bounds scratch.keys: a server that sends ever new names gets
// them canonicalised per field, as without the map.
const maxKeys = 64

// key is name's canonical form (net/textproto's).
func (s *scratch) key(name []byte) string {
	if k, ok := s.keys[string(name)]; ok {
		return k
	}
	k := textproto.CanonicalMIMEHeaderKey(string(name))
	if len(s.keys) < maxKeys {
		if s.keys == nil {
			s.keys = map[string]string{}
		}
		s.keys[string(name)] = k
	}
	return k
}

// trim drops buffers grown past keepScratch.
func (s *scratch) trim() {
	if cap(s.line) > keepScratch {
		s.line = nil
	}
	if cap(s.fold) > keepScratch {
		s.fold = nil
	}
	if cap(s.fields) > keepScratch {
		s.fields = nil
	}
}

// headerInfo is what the parser takes from a response's headers.
type headerInfo struct {
	clCount   int      // Content-Length fields
	clText    [20]byte // the first one's value, trimmed (digits only)
	clLen     int
	cl        int64
	teCount   int  // Transfer-Encoding fields
	teChunked bool // the (one) Transfer-Encoding is "chunked"
	close     bool // Connection: close
	keepAlive bool // Connection: keep-alive
	// badTrailer: a Trailer field names Transfer-Encoding, Trailer or
	// Content-Length, which net/http refuses in a chunked response.
	badTrailer bool
	setCookie  bool // a Set-Cookie field came
}

// readResponse reads one response to a request (head: to a HEAD request)
// from br, discarding its body and counting it. Informational (1xx)
// responses before the final one are skipped. It mirrors what net/http's
// Transport does with the same bytes (http.ReadResponse, then the body read
// to its end): the same responses succeed and fail, with the same body and
// the same verdict on keeping the connection. k, when not nil, receives
// the final response's protocol, header fields and (if asked) body.
func readResponse(br *bufio.Reader, head bool, s *scratch, k *kept) (response, error) {
	var r response
	budget := maxHeadBytes
	for {
		line, err := readLine(br, &s.line, &budget)
		if len(line) > 0 || err == nil {
			r.started = true
		}
		if err != nil {
			return r, err
		}
		major, minor, status, err := parseStatusLine(line)
		if err != nil {
			return r, err
		}
		var info headerInfo
		var f *[]byte
		if k != nil {
			s.fields = s.fields[:0]
			f = &s.fields
		}
		if err := readFields(br, s, &budget, &info, f); err != nil {
			return r, err
		}
		// Transfer-Encoding counts from HTTP/1.1 on; net/http reads
		// "HTTP/0.0" as 1.1 here (but not when deciding on close).
		chunked := false
		if info.teCount > 0 && (major > 1 || major == 1 && minor >= 1 || major == 0 && minor == 0) {
			if info.teCount != 1 || !info.teChunked {
				return r, fmt.Errorf("%w: unsupported Transfer-Encoding", errMalformed)
			}
			chunked = true
			if info.badTrailer {
				return r, fmt.Errorf("%w: Trailer names a field that frames the message", errMalformed)
			}
		}
		if status >= 100 && status <= 199 && status != 101 {
			continue // 100 Continue, 103 Early Hints: the final response follows
		}
		closing := info.close
		switch {
		case major < 1:
			closing = true
		case major == 1 && minor == 0:
			closing = info.close || !info.keepAlive
		}
		r.status = status
		noBody := head || status >= 100 && status <= 199 || status == 204 || status == 304
		var dst *[]byte
		if k != nil {
			k.proto = protoName(major, minor)
			k.fields = fields{head: true, text: string(s.fields),
				dropConnection:    info.close && major >= 1 && !(major == 1 && minor == 0),
				dropContentLength: chunked && !noBody,
				dropTrailer:       chunked,
				setCookie:         info.setCookie,
			}
			if k.keepBody {
				k.body = []byte{}
				dst = &k.body
			}
		}
		switch {
		case noBody:
		case chunked:
			r.bytesIn, err = takeChunked(br, s, dst)
		case info.clCount > 0:
			r.bytesIn, err = takeN(br, uint64(info.cl), dst)
		default: // the body ends when the server closes the connection
			closing = true
			r.bytesIn, err = takeAll(br, dst)
		}
		// net/http's Transport never reuses a connection after a final
		// 1xx (101 Switching Protocols) or a status below 100.
		r.keepAlive = !closing && status >= 200
		return r, err
	}
}

// protoName is "HTTP/major.minor", without an allocation for the usual two.
func protoName(major, minor int) string {
	switch {
	case major == 1 && minor == 1:
		return "HTTP/1.1"
	case major == 1 && minor == 0:
		return "HTTP/1.0"
	}
	return string([]byte{'H', 'T', 'T', 'P', '/', '0' + byte(major), '.', '0' + byte(minor)})
}

// readRaw returns the next line with its LF. The slice is valid until the
// next read. A line longer than br's buffer is gathered in buf. A line
// longer than *budget bytes is an error; *budget is reduced by the line.
func readRaw(br *bufio.Reader, buf *[]byte, budget *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		b := append((*buf)[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(b) <= *budget {
			line, err = br.ReadSlice('\n')
			b = append(b, line...)
		}
		*buf = b
		line = b
	}
	if len(line) > *budget {
		return nil, fmt.Errorf("%w: line longer than %d bytes", errMalformed, *budget)
	}
	*budget -= len(line)
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return line, err
	}
	return line, nil
}

// readLine is readRaw without the line's CRLF or LF.
func readLine(br *bufio.Reader, buf *[]byte, budget *int) ([]byte, error) {
	line, err := readRaw(br, buf, budget)
	if err != nil {
		return line, err
	}
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, nil
}

// parseStatusLine parses "HTTP/x.y NNN reason" as net/http's ReadResponse
// does: any one-digit version, spaces before the code, a code of three
// characters that strconv.Atoi reads as 0 or more.
func parseStatusLine(line []byte) (major, minor, status int, err error) {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return 0, 0, 0, fmt.Errorf("%w: status line %q", errMalformed, clip(line))
	}
	proto, rest := line[:sp], line[sp+1:]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	code := rest
	if i := bytes.IndexByte(rest, ' '); i >= 0 {
		code = rest[:i]
	}
	status, ok := atoi3(code)
	if !ok {
		return 0, 0, 0, fmt.Errorf("%w: status code in %q", errMalformed, clip(line))
	}
	const prefix = "HTTP/"
	if len(proto) != len("HTTP/1.1") || string(proto[:len(prefix)]) != prefix || proto[6] != '.' ||
		!isDigit(proto[5]) || !isDigit(proto[7]) {
		return 0, 0, 0, fmt.Errorf("%w: version in %q", errMalformed, clip(line))
	}
	return int(proto[5] - '0'), int(proto[7] - '0'), status, nil
}

// atoi3 reads a three-character status code as strconv.Atoi does (an
// optional sign, then digits), refusing negative values.
func atoi3(b []byte) (int, bool) {
	if len(b) != 3 {
		return 0, false
	}
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		b = b[1:]
	}
	n := 0
	for _, ch := range b {
		if !isDigit(ch) {
			return 0, false
		}
		n = n*10 + int(ch-'0')
	}
	if neg && n != 0 {
		return 0, false
	}
	return n, true
}

func isDigit(ch byte) bool { return '0' <= ch && ch <= '9' }

func isOWS(ch byte) bool { return ch == ' ' || ch == '\t' }

// readFields reads header fields up to the empty line as net/textproto's
// ReadMIMEHeader does: obsolete line folding joins a field's lines with one
// space (RFC 9112 §5.2), a name holds token bytes (or spaces, which
// net/http keeps but never matches), a value no control bytes but tab.
// info (nil for trailers) takes the fields that frame the body and the
// connection; f, when not nil, every field under net/textproto's
// canonical name, as fields.text has them.
func readFields(br *bufio.Reader, s *scratch, budget *int, info *headerInfo, f *[]byte) error {
	if b, err := br.Peek(1); err == nil && isOWS(b[0]) {
		return fmt.Errorf("%w: header block starts with a space", errMalformed)
	}
	for {
		line, err := readLine(br, &s.line, budget)
		if err != nil {
			return unexpected(err)
		}
		if len(line) == 0 {
			return nil
		}
		if bytes.IndexByte(line, ':') < 0 {
			return fmt.Errorf("%w: header line %q", errMalformed, clip(line))
		}
		field := trimSpace(line)
		// Peek only what is buffered, lest a refill move line's bytes.
		if br.Buffered() == 0 || nextIsOWS(br) {
			s.fold = append(s.fold[:0], field...)
			for nextIsOWS(br) {
				for nextIsOWS(br) {
					if *budget <= 0 {
						return fmt.Errorf("%w: headers longer than %d bytes", errMalformed, maxHeadBytes)
					}
					br.Discard(1) //nolint:errcheck // the byte was peeked
					*budget--
				}
				cont, err := readLine(br, &s.line, budget)
				if err != nil {
					return unexpected(err)
				}
				s.fold = append(s.fold, ' ')
				s.fold = append(s.fold, trimSpace(cont)...)
			}
			field = s.fold
		}
		colon := bytes.IndexByte(field, ':')
		name, value := field[:colon], field[colon+1:]
		if !validFieldName(name) || !validFieldValue(value) {
			return fmt.Errorf("%w: header line %q", errMalformed, clip(field))
		}
		for len(value) > 0 && isOWS(value[0]) {
			value = value[1:]
		}
		if info != nil {
			if err := info.add(name, value); err != nil {
				return err
			}
		}
		if f != nil {
			b := append(*f, s.key(name)...)
			b = append(b, 0)
			b = append(b, value...)
			*f = append(b, 0)
		}
	}
}

// nextIsOWS reports whether br's next byte is a space or a tab.
func nextIsOWS(br *bufio.Reader) bool {
	b, err := br.Peek(1)
	return err == nil && isOWS(b[0])
}

// add takes one header field, refusing the Content-Length values net/http
// refuses: empty, not plain digits (no sign), above 2^63-1, or different
// from the first.
func (h *headerInfo) add(name, value []byte) error {
	switch {
	case equalFold(name, "content-length"):
		v := trimSpace(value)
		if h.clCount > 0 {
			if string(v) != string(h.clText[:h.clLen]) {
				return fmt.Errorf("%w: conflicting Content-Length headers", errMalformed)
			}
			h.clCount++
			return nil
		}
		n, ok := parseContentLength(v)
		if !ok {
			return fmt.Errorf("%w: Content-Length %q", errMalformed, clip(v))
		}
		h.clCount, h.cl, h.clLen = 1, n, copy(h.clText[:], v)
	case equalFold(name, "transfer-encoding"):
		h.teCount++
		h.teChunked = equalFold(value, "chunked")
	case equalFold(name, "connection"):
		h.close = h.close || hasToken(value, "close")
		h.keepAlive = h.keepAlive || hasToken(value, "keep-alive")
	case equalFold(name, "set-cookie"):
		h.setCookie = true
	case equalFold(name, "trailer"):
		h.badTrailer = h.badTrailer || hasToken(value, "transfer-encoding") || hasToken(value, "trailer") || hasToken(value, "content-length")
	}
	return nil
}

// parseContentLength reads v as strconv.ParseUint(v, 10, 63) does.
func parseContentLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 19 {
		return 0, false
	}
	var n uint64
	for _, ch := range v {
		if !isDigit(ch) {
			return 0, false
		}
		n = n*10 + uint64(ch-'0')
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// validFieldName: token bytes, or a space (net/http accepts "Name :" but
// does not canonicalise it, so it never matches a known header).
func validFieldName(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, ch := range b {
		if ch != ' ' && !isTokenByte(ch) {
			return false
		}
	}
	return true
}

func isTokenByte(ch byte) bool {
	if isNameChar(ch) {
		return true
	}
	switch ch {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// validFieldValue: visible ASCII, space, tab and obs-text (0x80 and up).
func validFieldValue(b []byte) bool {
	for _, ch := range b {
		if ch < ' ' && ch != '\t' || ch == 0x7f {
			return false
		}
	}
	return true
}

// takeChunked reads a chunked body to its end and its trailers, returning
// the number of data bytes, which it appends to *dst (nil: discards). As
// net/http since the fix of CVE-2025-22871, every chunk line ends in CRLF.
func takeChunked(br *bufio.Reader, s *scratch, dst *[]byte) (int64, error) {
	var total, excess int64
	for {
		budget := maxChunkLine
		line, err := readRaw(br, &s.line, &budget)
		if err != nil {
			return total, unexpected(err)
		}
		if i := bytes.IndexByte(line, '\r'); i < 0 {
			return total, fmt.Errorf("%w: chunk line ends with a bare LF", errMalformed)
		} else if i != len(line)-2 {
			return total, fmt.Errorf("%w: CR inside a chunk line", errMalformed)
		}
		line = line[:len(line)-2]
		excess += int64(len(line)) + 2
		for len(line) > 0 && isOWS(line[len(line)-1]) {
			line = line[:len(line)-1]
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions are ignored
		}
		size, err := parseChunkSize(line)
		if err != nil {
			return total, err
		}
		// The same wrapping int64 sum as net/http's, so a huge size
		// fails here alike.
		excess -= 16 + 2*int64(size)
		excess = max(excess, 0)
		if excess > maxChunkExcess {
			return total, fmt.Errorf("%w: chunked encoding contains too much non-data", errMalformed)
		}
		if size == 0 {
			break
		}
		n, err := takeN(br, size, dst)
		total += n
		if err != nil {
			return total, err
		}
		crlf, err := br.Peek(2)
		if err != nil {
			return total, unexpected(err)
		}
		if crlf[0] != '\r' || crlf[1] != '\n' {
			return total, fmt.Errorf("%w: chunk not followed by CRLF", errMalformed)
		}
		br.Discard(2) //nolint:errcheck // the bytes were peeked
	}
	return total, readTrailer(br, s)
}

// readTrailer reads the trailer section after the last chunk. As net/http,
// it requires the section's CRLFCRLF within maxTrailerScan bytes before
// parsing it, which bounds the trailer lines.
func readTrailer(br *bufio.Reader, s *scratch) error {
	b, err := br.Peek(2)
	if len(b) == 2 && b[0] == '\r' && b[1] == '\n' {
		br.Discard(2) //nolint:errcheck // the bytes were peeked
		return nil
	}
	if len(b) < 2 {
		return io.ErrUnexpectedEOF
	}
	if err != nil {
		return err
	}
	// Peek one byte more at a time: a larger Peek would wait for bytes a
	// keep-alive server never sends.
	found := false
	for n := 4; n <= maxTrailerScan; n++ {
		b, err := br.Peek(n)
		if bytes.HasSuffix(b, []byte("\r\n\r\n")) {
			found = true
			break
		}
		if err != nil {
			break
		}
	}
	if !found {
		return fmt.Errorf("%w: trailer longer than %d bytes", errMalformed, maxTrailerScan)
	}
	budget := maxTrailerScan
	return readFields(br, s, &budget, nil, nil)
}

// parseChunkSize parses a chunk size (hex digits, at most 16) as net/http does.
func parseChunkSize(v []byte) (uint64, error) {
	if len(v) == 0 {
		return 0, fmt.Errorf("%w: empty chunk size", errMalformed)
	}
	var n uint64
	for i, d := range v {
		switch {
		case '0' <= d && d <= '9':
			d -= '0'
		case 'a' <= d && d <= 'f':
			d -= 'a' - 10
		case 'A' <= d && d <= 'F':
			d -= 'A' - 10
		default:
			return 0, fmt.Errorf("%w: chunk size %q", errMalformed, clip(v))
		}
		if i == 16 {
			return 0, fmt.Errorf("%w: chunk size %q too large", errMalformed, clip(v))
		}
		n = n<<4 | uint64(d)
	}
	return n, nil
}

// takeN reads exactly n bytes of body, appending them to *dst (nil:
// discarding them); a short body is io.ErrUnexpectedEOF, as net/http
// reports it. The buffer grows with what arrives, not with what a
// Content-Length claims.
func takeN(br *bufio.Reader, n uint64, dst *[]byte) (int64, error) {
	if dst != nil {
		var done int64
		for n > 0 {
			b, err := br.Peek(int(min(n, uint64(br.Size()))))
			*dst = append(*dst, b...)
			br.Discard(len(b)) //nolint:errcheck // the bytes were peeked
			done += int64(len(b))
			n -= uint64(len(b))
			if err != nil && n > 0 {
				return done, unexpected(err)
			}
		}
		return done, nil
	}
	var done int64
	for n > 0 {
		k, err := br.Discard(int(min(n, 1<<30)))
		done += int64(k)
		n -= uint64(k)
		if err != nil {
			return done, unexpected(err)
		}
	}
	return done, nil
}

// takeAll reads the body up to the connection's end, appending it to
// *dst (nil: discarding it).
func takeAll(br *bufio.Reader, dst *[]byte) (int64, error) {
	if dst == nil {
		return io.Copy(io.Discard, br)
	}
	b := bytes.NewBuffer(*dst)
	n, err := b.ReadFrom(br)
	*dst = b.Bytes()
	return n, err
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// hasToken reports whether a comma-separated header value lists token
// (lower case), ignoring case.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		if equalFold(trimSpace(v[:i]), token) {
			return true
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return false
}

// clip shortens what an error quotes of a response.
func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
