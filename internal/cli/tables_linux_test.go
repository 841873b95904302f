package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"
)

// openPTY opens a pseudo-terminal of cols columns and returns its two
// ends: the terminal a program writes to, and the side that reads what
// it wrote. It skips the test, saying why, where the machine has no ptys.
func openPTY(t *testing.T, cols uint16) (tty, master *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("SKIPPED: no pseudo-terminal on this machine (/dev/ptmx: %v); the terminal-width layout is untested here", err)
	}
	t.Cleanup(func() { m.Close() })
	ioctl := func(f *os.File, req uintptr, arg unsafe.Pointer) error {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); e != 0 {
			return e
		}
		return nil
	}
	var unlock int32
	var n uint32
	if err := ioctl(m, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Skipf("SKIPPED: cannot unlock a pseudo-terminal: %v", err)
	}
	if err := ioctl(m, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Skipf("SKIPPED: cannot name a pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("SKIPPED: cannot open the pseudo-terminal /dev/pts/%d: %v", n, err)
	}
	t.Cleanup(func() { s.Close() })
	ws := struct{ Row, Col, X, Y uint16 }{Row: 40, Col: cols}
	if err := ioctl(s, syscall.TIOCSWINSZ, unsafe.Pointer(&ws)); err != nil {
		t.Fatalf("set the terminal to %d columns: %v", cols, err)
	}
	return s, m
}

// knee compare writes its table to a real 80-column terminal: every line
// fits in 80 columns and every column is still there. Written to a file,
// the same table keeps its full width, one line per metric.
func TestTablesFitTheTerminal(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, testRun{id: "a", model: "open", latency: time.Millisecond})
	b := writeRun(t, dir, testRun{id: "b", model: "open", latency: 2 * time.Millisecond})

	var full bytes.Buffer
	if code := Main(Env{Args: []string{"compare", a, "--vs", b}, Stdout: &full, Stderr: io.Discard, Getenv: func(string) string { return "" }}); code != 0 {
		t.Fatalf("compare to a buffer: exit %d", code)
	}
	widest := 0
	for _, l := range strings.Split(full.String(), "\n") {
		widest = max(widest, utf8.RuneCountInString(l))
	}
	if widest <= 80 {
		t.Fatalf("the full table is only %d wide: this test needs one wider than the terminal", widest)
	}
	if !strings.Contains(full.String(), "p50_ms") || strings.Count(full.String(), "within run-to-run spread")+strings.Count(full.String(), "real difference")+strings.Count(full.String(), "cannot be told from noise") < 10 {
		t.Errorf("full-width table lost rows:\n%s", full.String())
	}

	tty, master := openPTY(t, 80)
	code := Main(Env{Args: []string{"compare", a, "--vs", b}, Stdout: tty, Stderr: io.Discard, IsTerminal: true, Width: terminalWidth(tty), Getenv: func(string) string { return "" }})
	if code != 0 {
		t.Fatalf("compare to a terminal: exit %d", code)
	}
	tty.Close()
	got, _ := io.ReadAll(master) // ends with EIO once the terminal side is closed
	text := strings.ReplaceAll(string(got), "\r\n", "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "  WARNING:") {
			continue // prose, which the terminal wraps itself; tables are what must not break
		}
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d columns on an 80-column terminal: %q", n, l)
		}
	}
	header := strings.Join(strings.Fields(lines[1]), " ")
	for _, col := range []string{"metric", "baseline", "candidate", "ratio", "verdict"} {
		if !strings.Contains(header, col) {
			t.Errorf("column %q lost on the terminal; header %q", col, lines[1])
		}
	}
	if len(lines) <= strings.Count(full.String(), "\n") {
		t.Errorf("%d lines on the terminal, %d in the file: the wide cells were not wrapped", len(lines), strings.Count(full.String(), "\n"))
	}
}
