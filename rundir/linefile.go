package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// LineFile appends whole lines to a file: what is written between two
// Flushes lands whole or not at all, so a full disk never leaves a line
// half-written for a reader to trip on. Not safe for concurrent use.
type LineFile struct {
	f    *os.File
	buf  bytes.Buffer
	size int64 // bytes in f, every one of them part of a whole line
}

// NewLineFile appends to f from its current size on.
func NewLineFile(f *os.File) (*LineFile, error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return &LineFile{f: f, size: size}, nil
}

// Write buffers b until Flush.
func (l *LineFile) Write(b []byte) (int, error) { return l.buf.Write(b) }

// Flush writes what was buffered in one write. If it fails part way (ENOSPC),
// the part that was written is cut off again and the buffer dropped.
func (l *LineFile) Flush() error {
	if l.buf.Len() == 0 {
		return nil
	}
	defer l.buf.Reset()
	n, err := l.f.Write(l.buf.Bytes())
	if err == nil {
		l.size += int64(n)
		return nil
	}
	if n > 0 {
		_, serr := l.f.Seek(l.size, io.SeekStart)
		err = errors.Join(err, l.f.Truncate(l.size), serr)
	}
	return err
}
