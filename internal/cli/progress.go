package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// progressStream is where a run's progress goes: standard error, so that
// standard output carries only the summary and can be piped. The line is
// live (rewritten in place, fitted to the width) when standard error itself
// is a terminal, whatever standard output is.
func (a *app) progressStream() (io.Writer, bool) {
	if f, ok := a.env.Stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return terminalWriter{f}, true
	}
	return a.env.Stderr, false
}

// terminalWriter is a terminal that tells its width (runner.Widther).
type terminalWriter struct{ f *os.File }

func (t terminalWriter) Write(p []byte) (int, error) { return t.f.Write(p) }

// Width reads the terminal's columns now, so a resized window is followed.
func (t terminalWriter) Width() int {
	w, _, err := term.GetSize(int(t.f.Fd()))
	if err != nil {
		return 0
	}
	return w
}
