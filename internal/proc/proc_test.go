package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// A Scan's second reading reads each process of the first again, the kept
// files and, past heldScanFiles, the ones opened again by name, and sees
// what changed meanwhile; a process started since is not read, and one
// whose file is gone is left out.
func TestScanAgain(t *testing.T) {
	root := t.TempDir()
	line := func(pid int, utime int) string {
		return strconv.Itoa(pid) + " (p" + strconv.Itoa(pid) + ") S 1 1 1 0 -1 4194560 100 0 0 0 " + strconv.Itoa(utime) +
			" 0 0 0 20 0 1 0 5 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	}
	write := func(pid, utime int) {
		dir := filepath.Join(root, "proc", strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line(pid, utime)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := heldScanFiles + 10 // some read again by name
	for pid := 1; pid <= n; pid++ {
		write(pid, 100)
	}
	sc, first, err := FS{Root: root}.StartScan()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if len(first) != n || len(sc.files) != heldScanFiles {
		t.Fatalf("first reading: %d processes, %d files kept; want %d, %d", len(first), len(sc.files), n, heldScanFiles)
	}
	for pid := 1; pid <= n; pid++ {
		write(pid, 100+pid) // each used pid/100 s of CPU more
	}
	write(n+1, 5) // started since
	var byName int
	for pid := range n {
		if _, kept := sc.files[pid+1]; !kept {
			byName = pid + 1
		}
	}
	if err := os.RemoveAll(filepath.Join(root, "proc", strconv.Itoa(byName))); err != nil {
		t.Fatal(err)
	}
	second, err := sc.Again()
	if err != nil {
		t.Fatal(err)
	}
	if len(second) != n-1 {
		t.Errorf("second reading: %d processes, want %d", len(second), n-1)
	}
	if _, ok := second[byName]; ok {
		t.Errorf("process %d, gone, was read", byName)
	}
	if _, ok := second[n+1]; ok {
		t.Errorf("process %d, started since the first reading, was read", n+1)
	}
	for pid, st := range second {
		if want := float64(100+pid) / 100; st.CPU != want {
			t.Fatalf("process %d: CPU %v s, want %v", pid, st.CPU, want)
		}
	}
}

// On the real /proc, a process that exits between the two readings is
// left out of the second, though its file was kept open.
func TestScanAgainExited(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here:", err)
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	pid := cmd.Process.Pid
	sc, first, err := FS{}.StartScan()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, ok := first[pid]; !ok {
		t.Fatalf("the first reading lacks the child %d", pid)
	}
	if _, kept := sc.files[pid]; !kept {
		t.Skipf("the child's file was not among the %d kept", heldScanFiles)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() //nolint:errcheck // killed
	second, err := sc.Again()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := second[pid]; ok {
		t.Errorf("the child %d, killed and reaped, was read again", pid)
	}
	if _, ok := second[os.Getpid()]; !ok {
		t.Errorf("the second reading lacks this process %d", os.Getpid())
	}
}

// BenchmarkScanPair is the environment note's two readings of every
// process (hostinfo.Top): two whole scans, against a Scan read again
// through its kept files. Compare the two in one run.
func BenchmarkScanPair(b *testing.B) {
	b.Run("two scans", func(b *testing.B) {
		for b.Loop() {
			for range 2 {
				if _, err := (FS{}).AllStats(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("scan and again", func(b *testing.B) {
		for b.Loop() {
			sc, _, err := FS{}.StartScan()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := sc.Again(); err != nil {
				b.Fatal(err)
			}
			sc.Close()
		}
	})
}

// Out of file descriptors, a Scan keeps none and still reads every
// process, twice: the second reading opens each file again.
func TestScanOutOfDescriptors(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here:", err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// Leave a few descriptors above those open now: fewer than the processes.
	open := 0
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		open = len(fds)
	}
	low := lim
	low.Cur = uint64(open + 8)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip("cannot lower RLIMIT_NOFILE:", err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) //nolint:errcheck // restores the test's limit
	all, err := FS{}.AllStats()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 10 {
		t.Skipf("only %d processes: too few to run out of descriptors", len(all))
	}
	sc, first, err := FS{}.StartScan()
	if err != nil {
		t.Fatalf("StartScan with %d descriptors free: %v", 8, err)
	}
	defer sc.Close()
	if len(sc.files) != 0 {
		t.Errorf("%d files kept, out of descriptors", len(sc.files))
	}
	second, err := sc.Again()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first[os.Getpid()]; !ok {
		t.Error("the first reading lacks this process")
	}
	if _, ok := second[os.Getpid()]; !ok {
		t.Error("the second reading lacks this process")
	}
}
