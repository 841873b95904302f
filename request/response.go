package request

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Limits of the lean client's response parser, as generous as net/http's
// defaults need to be for a load test's targets.
const (
	maxHeaderBytes = 1 << 20 // status line and headers of one response
	maxInformation = 10      // 1xx responses before the final one
)

// errMalformed marks a response the lean client cannot parse (class other).
var errMalformed = errors.New("malformed HTTP response")

// response is what the lean client keeps of a response.
type response struct {
	status    int
	bytesIn   int64 // body bytes, after chunked decoding
	keepAlive bool  // the connection may carry another request
	started   bool  // any byte of the response arrived
}

// headerInfo is what the parser takes from a response's headers.
type headerInfo struct {
	contentLength int64 // -1 when absent
	chunked       bool
	close         bool
	keepAlive     bool // HTTP/1.0 "Connection: keep-alive"
}

// readResponse reads one response to a request (head: to a HEAD request)
// from br, discarding its body and counting it. Informational (1xx)
// responses before the final one are skipped.
func readResponse(br *bufio.Reader, head bool, scratch *[]byte) (response, error) {
	var r response
	for range maxInformation + 1 {
		line, err := readLine(br, scratch, maxHeaderBytes)
		if len(line) > 0 || err == nil {
			r.started = true
		}
		if err != nil {
			return r, err
		}
		minor, status, err := parseStatusLine(line)
		if err != nil {
			return r, err
		}
		info, err := readHeaders(br, scratch, maxHeaderBytes-len(line))
		if err != nil {
			return r, err
		}
		if status >= 100 && status < 200 && status != 101 {
			continue // 100 Continue, 103 Early Hints: the final response follows
		}
		r.status = status
		r.keepAlive = !info.close && (minor >= 1 || info.keepAlive)
		if status == 101 {
			r.keepAlive = false // the connection now speaks another protocol
			return r, nil
		}
		if head || status == 204 || status == 304 {
			return r, nil
		}
		switch {
		case info.chunked && minor >= 1: // HTTP/1.0 has no chunked coding; net/http ignores it too

			r.bytesIn, err = discardChunked(br, scratch)
		case info.contentLength >= 0:
			r.bytesIn, err = discardN(br, info.contentLength)
		default: // the body ends when the server closes the connection
			r.keepAlive = false
			r.bytesIn, err = io.Copy(io.Discard, br)
		}
		return r, err
	}
	return r, fmt.Errorf("%w: more than %d informational responses", errMalformed, maxInformation)
}

// readLine returns the next line without its CRLF (or LF). The slice is
// valid until the next read. A line longer than br's buffer is gathered in
// scratch, up to limit bytes.
func readLine(br *bufio.Reader, scratch *[]byte, limit int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		buf := append((*scratch)[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(buf) <= limit {
			line, err = br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		*scratch = buf
		line = buf
		if err == nil && len(buf) > limit {
			err = fmt.Errorf("%w: headers longer than %d bytes", errMalformed, limit)
		}
	}
	if len(line) > limit {
		return nil, fmt.Errorf("%w: headers longer than %d bytes", errMalformed, limit)
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return line, err
	}
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, nil
}

// parseStatusLine parses "HTTP/1.x NNN reason" into x and NNN.
func parseStatusLine(line []byte) (minor, status int, err error) {
	const proto = "HTTP/1."
	if len(line) < len(proto)+5 || string(line[:len(proto)]) != proto ||
		line[len(proto)] < '0' || line[len(proto)] > '9' || line[len(proto)+1] != ' ' {
		return 0, 0, fmt.Errorf("%w: status line %q", errMalformed, clip(line))
	}
	minor = int(line[len(proto)] - '0')
	code := line[len(proto)+2:]
	if len(code) > 3 && code[3] != ' ' {
		return 0, 0, fmt.Errorf("%w: status line %q", errMalformed, clip(line))
	}
	if len(code) < 3 {
		return 0, 0, fmt.Errorf("%w: status line %q", errMalformed, clip(line))
	}
	for _, ch := range code[:3] {
		if ch < '0' || ch > '9' {
			return 0, 0, fmt.Errorf("%w: status code in %q", errMalformed, clip(line))
		}
		status = status*10 + int(ch-'0')
	}
	if status < 100 {
		return 0, 0, fmt.Errorf("%w: status code in %q", errMalformed, clip(line))
	}
	return minor, status, nil
}

// readHeaders reads header lines up to the empty line, keeping only those
// that frame the body and the connection.
func readHeaders(br *bufio.Reader, scratch *[]byte, limit int) (headerInfo, error) {
	info := headerInfo{contentLength: -1}
	for {
		line, err := readLine(br, scratch, limit)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return info, err
		}
		if len(line) == 0 {
			return info, nil
		}
		limit -= len(line)
		colon := 0
		for colon < len(line) && line[colon] != ':' {
			colon++
		}
		if colon == 0 || colon == len(line) {
			return info, fmt.Errorf("%w: header line %q", errMalformed, clip(line))
		}
		name, value := line[:colon], trimSpace(line[colon+1:])
		switch {
		case equalFold(name, "content-length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 || len(value) == 0 || value[0] == '+' {
				return info, fmt.Errorf("%w: Content-Length %q", errMalformed, clip(value))
			}
			if info.contentLength >= 0 && info.contentLength != n {
				return info, fmt.Errorf("%w: conflicting Content-Length headers", errMalformed)
			}
			info.contentLength = n
		case equalFold(name, "transfer-encoding"):
			if !equalFold(value, "chunked") {
				return info, fmt.Errorf("%w: unsupported Transfer-Encoding %q", errMalformed, clip(value))
			}
			info.chunked = true
		case equalFold(name, "connection"):
			info.close = info.close || hasCloseToken(value)
			info.keepAlive = info.keepAlive || hasToken(value, "keep-alive")
		}
	}
}

// discardChunked reads a chunked body to its end and its trailers,
// returning the number of data bytes.
func discardChunked(br *bufio.Reader, scratch *[]byte) (int64, error) {
	var total int64
	for {
		line, err := readLine(br, scratch, 4096)
		if err != nil {
			return total, unexpected(err)
		}
		size, err := parseChunkSize(line)
		if err != nil {
			return total, err
		}
		if size == 0 {
			break
		}
		n, err := discardN(br, size)
		total += n
		if err != nil {
			return total, err
		}
		if line, err = readLine(br, scratch, 4096); err != nil {
			return total, unexpected(err)
		}
		if len(line) != 0 {
			return total, fmt.Errorf("%w: chunk not followed by CRLF", errMalformed)
		}
	}
	for { // trailers, up to the empty line
		line, err := readLine(br, scratch, maxHeaderBytes)
		if err != nil {
			return total, unexpected(err)
		}
		if len(line) == 0 {
			return total, nil
		}
	}
}

// parseChunkSize parses a chunk-size line: hex digits, then optional
// extensions after ';'.
func parseChunkSize(line []byte) (int64, error) {
	var size int64
	i := 0
	for ; i < len(line) && isHex(line[i]); i++ {
		if i >= 15 {
			return 0, fmt.Errorf("%w: chunk size %q too large", errMalformed, clip(line))
		}
		d := line[i]
		switch {
		case d <= '9':
			d -= '0'
		case d >= 'a':
			d -= 'a' - 10
		default:
			d -= 'A' - 10
		}
		size = size<<4 | int64(d)
	}
	rest := trimSpace(line[i:])
	if i == 0 || len(rest) > 0 && rest[0] != ';' {
		return 0, fmt.Errorf("%w: chunk size line %q", errMalformed, clip(line))
	}
	return size, nil
}

// discardN discards exactly n bytes of body; a short body is
// io.ErrUnexpectedEOF, as net/http reports it.
func discardN(br *bufio.Reader, n int64) (int64, error) {
	var done int64
	for done < n {
		k, err := br.Discard(int(min(n-done, 1<<30)))
		done += int64(k)
		if err != nil {
			return done, unexpected(err)
		}
	}
	return done, nil
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
