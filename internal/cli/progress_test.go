package cli

import (
	"bytes"
	"testing"

	"github.com/knee-dev/knee/runner"
)

// The progress line is live, and tells the runner its width, only when the
// Env says stderr is a terminal; its writes go to the Env's stderr.
func TestProgressStreamFollowsTheEnv(t *testing.T) {
	var stderr bytes.Buffer
	width := 72
	live := &app{env: Env{Stderr: &stderr, StderrIsTerminal: true, StderrWidth: func() int { return width }}}
	w, ok := live.progressStream()
	wd, isWidther := w.(runner.Widther)
	if !ok || !isWidther || wd.Width() != 72 {
		t.Fatalf("terminal stderr: live %v, widther %v; want live with width 72", ok, isWidther)
	}
	width = 100 // a resized window is followed
	if wd.Width() != 100 {
		t.Errorf("after a resize: width %d, want 100", wd.Width())
	}
	w.Write([]byte("line"))
	if stderr.String() != "line" {
		t.Errorf("stderr got %q", stderr.String())
	}
	if _, ok := (&app{env: Env{Stderr: &stderr, StderrIsTerminal: true}}).progressStream(); !ok {
		t.Error("a terminal of unknown width is still live")
	}
	plain := &app{env: Env{Stderr: &stderr, IsTerminal: true, Width: func() int { return 80 }}}
	if w, ok := plain.progressStream(); ok || w != &stderr {
		t.Errorf("stdout a terminal, stderr not: live %v, writer %T; want stderr as it is, not live", ok, w)
	}
}
