package proc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/procfs"
)

// FS.Stat and AllStats read /proc/PID/stat as procfs does: the same comm,
// state, parent and CPU seconds for lines with awkward process names, read
// by both from the same fake tree.
func TestStatMatchesProcfs(t *testing.T) {
	tail := " 1 1 0 -1 4194560 100 0 0 0 %s 0 0 20 0 1 0 5 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	lines := map[int]string{
		10: "10 (bash) S 1" + strings.Replace(tail, "%s", "250 37", 1),
		11: "11 (a) b) (c) R 10" + strings.Replace(tail, "%s", "0 0", 1),
		12: "12 (with space) D 1" + strings.Replace(tail, "%s", "123456789 987654321", 1),
		13: "13 () Z 12" + strings.Replace(tail, "%s", "1 2", 1),
		14: "14 (" + strings.Repeat("x", 64) + ") S 1" + strings.Replace(tail, "%s", "7 8", 1),
	}
	root := t.TempDir()
	for pid, line := range lines {
		dir := filepath.Join(root, "proc", strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref, err := procfs.NewFS(filepath.Join(root, "proc"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := FS{Root: root}.AllStats()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(lines) {
		t.Errorf("AllStats read %d processes, the tree has %d", len(all), len(lines))
	}
	for pid := range lines {
		p, err := ref.Proc(pid)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := p.Stat()
		if err != nil {
			t.Fatalf("procfs, pid %d: %v", pid, err)
		}
		want := Stat{CPU: rs.CPUTime(), State: rs.State, PPID: rs.PPID, Comm: rs.Comm}
		got, err := FS{Root: root}.Stat(pid)
		if err != nil {
			t.Fatalf("pid %d: %v", pid, err)
		}
		if got != want {
			t.Errorf("pid %d: Stat = %+v, procfs reads %+v", pid, got, want)
		}
		if all[pid] != want {
			t.Errorf("pid %d: AllStats = %+v, procfs reads %+v", pid, all[pid], want)
		}
	}
}

// A line that is not a stat line is an error naming the file; a process
// that is not there is ErrGone.
func TestStatErrors(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proc", "20")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte("20 bash S 1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (FS{Root: root}).Stat(20); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "stat")) {
		t.Errorf("a malformed line: err = %v, want one naming %s", err, filepath.Join(dir, "stat"))
	}
	if _, err := (FS{Root: root}).Stat(21); !errors.Is(err, ErrGone) {
		t.Errorf("a missing process: err = %v, want %v", err, ErrGone)
	}
}

// BenchmarkAllStats scans this machine's processes, as the environment note
// does four times a run.
func BenchmarkAllStats(b *testing.B) {
	for b.Loop() {
		if _, err := (FS{}).AllStats(); err != nil {
			b.Fatal(err)
		}
	}
}
