package importer

import (
	"fmt"
)

// ParseError is bad input at one line of one file. It wraps ErrBadRow.
type ParseError struct {
	File string
	Line int64 // 1-based
	Msg  string
	Fix  string // how to fix it; may be empty
}

// Error names file and line, says what is wrong and how to fix it.
func (e *ParseError) Error() string {
	if e.Fix == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s (%s)", e.File, e.Line, e.Msg, e.Fix)
}

// Unwrap makes errors.Is(err, ErrBadRow) hold.
func (e *ParseError) Unwrap() error { return ErrBadRow }

// fixLenient is the fix suggested for a damaged row.
const fixLenient = "repair the line, or import with --lenient to skip bad rows"

// badRows decides what a bad row does: fail, or (lenient) count and go on.
type badRows struct {
	file    string
	lenient bool
	count   int64
	first   error
}

// bad reports a bad row; the returned error is non-nil when the import must stop.
func (b *badRows) bad(line int64, fix, format string, args ...any) error {
	err := &ParseError{File: b.file, Line: line, Msg: fmt.Sprintf(format, args...), Fix: fix}
	if !b.lenient {
		return err
	}
	b.count++
	if b.first == nil {
		b.first = err
	}
	return nil
}

// note describes the skipped rows for run.json, "" when none.
func (b *badRows) note() string {
	if b.count == 0 {
		return ""
	}
	return fmt.Sprintf("skipped %d bad rows (lenient); first: %v", b.count, b.first)
}
