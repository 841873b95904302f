package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/internal/limits"
	"io"
)

// maxLine bounds one line (or one quoted CSV record spanning lines).
const maxLine = limits.Line

// lineReader reads lines without copying when they fit the buffer.
type lineReader struct {
	r       *bufio.Reader
	name    string
	n       int64  // number of the line last returned, 1-based
	long    []byte // assembles lines longer than the buffer
	partial bool   // the last line returned had no newline (a truncated file?)
}

func newLineReader(r *bufio.Reader, name string) *lineReader {
	return &lineReader{r: r, name: name}
}

// next returns the next line without its "\n" or "\r\n"; it is valid until
// the following call. At the end it returns io.EOF.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(l.long) > maxLine {
				return nil, fmt.Errorf("%s:%d: line longer than %s: %w (fix: is this a k6 CSV/JSON output, an hlog or a latency list? their lines are short)", l.name, l.n+1, limits.MiB(maxLine), ErrBadRow)
			}
			line, err = l.r.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s:%d: %w", l.name, l.n+1, err)
	}
	if len(line) == 0 {
		return nil, io.EOF
	}
	l.n++
	l.partial = line[len(line)-1] != '\n'
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}

// scan is next for the data loops: it also stops, every 4096 lines, when
// ctx is done, and wraps read errors for Import. io.EOF ends the loop.
func (l *lineReader) scan(ctx context.Context) ([]byte, error) {
	line, err := l.next()
	if errors.Is(err, io.EOF) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if l.n%4096 == 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("import: %s: stopped at line %d: %w", l.name, l.n, err)
		}
	}
	return line, nil
}

// csvSplitter splits k6's CSV lines: plain fields fast, quoted fields
// (RFC 4180, as encoding/csv writes them) on a slower path.
type csvSplitter struct {
	fields [][]byte
	joined []byte // a quoted record that spans lines
}

// split returns the fields of line. more is true when a quoted field is
// still open at the end of the line: call again with the next line appended.
func (s *csvSplitter) split(line []byte) (fields [][]byte, more bool) {
	s.fields = s.fields[:0]
	if bytes.IndexByte(line, '"') < 0 {
		for {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				s.fields = append(s.fields, line)
				return s.fields, false
			}
			s.fields = append(s.fields, line[:i])
			line = line[i+1:]
		}
	}
	return s.splitQuoted(line)
}

func (s *csvSplitter) splitQuoted(line []byte) ([][]byte, bool) {
	for {
		if len(line) == 0 || line[0] != '"' {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				s.fields = append(s.fields, line)
				return s.fields, false
			}
			s.fields = append(s.fields, line[:i])
			line = line[i+1:]
			continue
		}
		// Quoted. Without "" escapes inside, the field is a slice of the line;
		// with them it is copied unescaped (rare, so a fresh slice is fine).
		j := bytes.IndexByte(line[1:], '"')
		if j < 0 {
			return nil, true // the quote closes on a later line
		}
		f, i := line[1:1+j], 2+j
		if i < len(line) && line[i] == '"' {
			f = append([]byte(nil), f...)
			for i < len(line) && line[i] == '"' {
				f = append(f, '"')
				k := bytes.IndexByte(line[i+1:], '"')
				if k < 0 {
					return nil, true
				}
				f = append(f, line[i+1:i+1+k]...)
				i += k + 2
			}
		}
		s.fields = append(s.fields, f)
		if i == len(line) {
			return s.fields, false
		}
		if line[i] != ',' {
			// Text after a closing quote: keep it, as encoding/csv's LazyQuotes would.
			k := bytes.IndexByte(line[i:], ',')
			if k < 0 {
				k = len(line) - i
			}
			f = append(append([]byte(nil), f...), line[i:i+k]...)
			s.fields[len(s.fields)-1] = f
			if i+k == len(line) {
				return s.fields, false
			}
			i += k
		}
		line = line[i+1:]
	}
}
