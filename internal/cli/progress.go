package cli

import "io"

// progressStream is where a run's progress goes: standard error, so that
// standard output carries only the summary and can be piped. The line is
// live (rewritten in place, fitted to the width) when standard error itself
// is a terminal, whatever standard output is.
func (a *app) progressStream() (io.Writer, bool) {
	if a.env.StderrIsTerminal {
		return terminalWriter{a.env.Stderr, a.env.StderrWidth}, true
	}
	return a.env.Stderr, false
}

// terminalWriter is a terminal that tells its width (runner.Widther).
type terminalWriter struct {
	io.Writer
	width func() int // nil: unknown
}

// Width reads the terminal's columns now, so a resized window is followed.
func (t terminalWriter) Width() int {
	if t.width == nil {
		return 0
	}
	return t.width()
}
