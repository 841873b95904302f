package cli

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/knee-dev/knee/internal/kneetest"
)

// The progress line in a real terminal: knee runs in a tmux pane 80 columns
// wide with standard output redirected to a file (so only standard error is
// the terminal), and the pane, scrollback included, is read back with wrapped
// rows joined. The live line must fit (no joined line over 80 columns) and
// leave exactly one row behind (every redraw lands on the same row).
func TestProgressLineInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three short loads in a terminal (about 25 s); not with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("SKIP: tmux is not installed (apt-get install tmux; scripts/test.sh installs it): the progress line is not tested in a real terminal")
	}
	knee := kneetest.BuildKnee(t)
	url := loopbackServer(t) + "/"
	dir := t.TempDir()
	// A process of the test's own for the fault to freeze (SIGSTOP, then
	// SIGCONT): the fault's message must stand on its own line.
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	pid := strconv.Itoa(sleeper.Process.Pid)
	for _, tc := range []struct {
		name string
		args []string
		rows int // progress rows left behind: one per load phase
	}{
		{"closed", []string{"run", "--executor", "constant-vus", "--vus", "5", "--think", "20ms", "--duration", "5s", "--url", url}, 1},
		{"open", []string{"run", "--executor", "constant-arrival-rate", "--rate", "200", "--max-vus", "3000", "--duration", "5s", "--url", url}, 1},
		{"fault", []string{"run", "--executor", "constant-arrival-rate", "--rate", "100", "--max-vus", "300", "--duration", "4s", "--url", url, "--fault", "freeze@2s:1s", "--target-pid", pid}, 1},
		{"stepped", []string{"steps", "--start", "50", "--step", "50", "--steps", "2", "--step-duration", "3s", "--warmup", "1s", "--url", url}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			args := append(tc.args, "--out", out)
			pane := runInTmux(t, knee, args, filepath.Join(dir, tc.name+".stdout"))
			var rows []string
			for _, line := range strings.Split(pane, "\n") {
				if n := utf8.RuneCountInString(line); n > 80 {
					t.Errorf("line of %d columns on an 80-column terminal: %q", n, line)
				}
				if strings.Contains(line, "achieved") {
					rows = append(rows, line)
				}
			}
			if len(rows) != tc.rows {
				t.Errorf("%d progress rows left on the terminal, want %d (stale rows):\n%s", len(rows), tc.rows, strings.Join(rows, "\n"))
			}
			if tc.name == "fault" {
				// Both the freeze and the thaw, each a line of its own.
				for _, what := range []string{"fault: freeze pid:" + pid, "fault: thaw pid:" + pid} {
					if n := linesStarting(pane, what); n != 1 {
						t.Errorf("%d lines start with %q, want 1 (a message glued to the progress line starts none)", n, what)
					}
				}
			}
			if len(rows) > 0 && !strings.Contains(rows[len(rows)-1], "p99") {
				t.Errorf("the progress row lost its p99: %q", rows[len(rows)-1])
			}
			if t.Failed() {
				t.Logf("pane:\n%s", pane)
			}
		})
	}
}

// runInTmux runs knee with args in a detached tmux session of 80x24 on a
// server of its own, waits for it to exit (at most a minute) and returns the
// pane with its scrollback, wrapped rows joined into their lines. Standard
// output goes to the file stdout, or, when stdout is "", to the terminal.
func runInTmux(t *testing.T, knee string, args []string, stdout string) string {
	t.Helper()
	socket := fmt.Sprintf("knee-test-%d", time.Now().UnixNano())
	tmux := func(a ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", socket}, a...)...).CombinedOutput()
		return string(out), err
	}
	quoted := []string{shellQuote(knee)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	redirect := ""
	if stdout != "" {
		redirect = " >" + shellQuote(stdout)
	}
	script := fmt.Sprintf("%s%s; echo KNEE-EXIT $?; sleep 120", strings.Join(quoted, " "), redirect)
	if out, err := tmux("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "knee", script); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { tmux("kill-server") })
	if out, err := tmux("set-option", "-t", "knee", "history-limit", "5000"); err != nil {
		t.Fatalf("tmux set-option: %v: %s", err, out)
	}
	if w, err := tmux("display-message", "-p", "-t", "knee", "#{pane_width}"); err != nil || strings.TrimSpace(w) != "80" {
		t.Fatalf("tmux pane width %q (%v), want 80", w, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		pane, err := tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "knee")
		if err != nil {
			t.Fatalf("tmux capture-pane: %v: %s", err, pane)
		}
		if strings.Contains(pane, "KNEE-EXIT") {
			if !strings.Contains(pane, "KNEE-EXIT 0") {
				t.Errorf("knee %s failed:\n%s", strings.Join(args, " "), pane)
			}
			return pane
		}
		if time.Now().After(deadline) {
			t.Fatalf("knee %s still running after a minute:\n%s", strings.Join(args, " "), pane)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// linesStarting counts the pane's lines that start with prefix.
func linesStarting(pane, prefix string) int {
	n := 0
	for _, line := range strings.Split(pane, "\n") {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
