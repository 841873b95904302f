package lab

import (
	"strings"
	"testing"
)

// widthBuffer is a terminal of a given width (runner.Widther).
type widthBuffer struct {
	strings.Builder
	width int
}

func (w *widthBuffer) Width() int { return w.width }

// The experiment's 92-column heading on an 80-column terminal: the last
// space within 79 columns follows "Bookstore" (column 76; "frozen" would end
// at 83), so the rest goes below, indented by two. To a pipe, as is.
func TestSayWrapsOnATerminal(t *testing.T) {
	const heading = "\n== open model: constant-arrival-rate, 200 req/s, maxVUs 2000, 10s, Bookstore frozen 2s at 4s\n"
	term := &widthBuffer{width: 80}
	say(term, "\n== %s model: %s, Bookstore frozen %s at %s\n", "open", "constant-arrival-rate, 200 req/s, maxVUs 2000, 10s", "2s", "4s")
	want := "\n== open model: constant-arrival-rate, 200 req/s, maxVUs 2000, 10s, Bookstore\n  frozen 2s at 4s\n"
	if term.String() != want {
		t.Errorf("terminal:\n got %q\nwant %q", term.String(), want)
	}
	var pipe strings.Builder
	say(&pipe, "%s", heading)
	if pipe.String() != heading {
		t.Errorf("pipe: got %q, want %q", pipe.String(), heading)
	}
}
