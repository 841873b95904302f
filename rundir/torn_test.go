package rundir

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenTornLastLine: a run whose latency.hlog and counters.jsonl end in a
// line cut short (what a full disk used to leave) opens, drops those lines,
// reads the two whole intervals before them and says which files were torn;
// Stream reads the same.
func TestOpenTornLastLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  []string // files whose last line is cut short
	}{
		{"hlog", []string{LatencyFile}},
		{"counters", []string{CountersFile}},
		{"both", []string{LatencyFile, CountersFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, dir, 3, false)
			for _, f := range tc.cut {
				cutLastLine(t, filepath.Join(dir, f))
			}
			r, err := Open(dir)
			if err != nil {
				t.Fatalf("Open: %v, want the torn line dropped", err)
			}
			if len(r.Torn) != len(tc.cut) || !strings.Contains(strings.Join(r.Torn, "\n"), tc.cut[0]+": its last line was cut short") {
				t.Errorf("Torn = %q, want a note for each of %v", r.Torn, tc.cut)
			}
			// Interval 2 loses its cut file's part: 3 histograms of it in the
			// hlog (the cut one is its last line), one counters line.
			if got := r.Counters(0, 2e9).Requests; got != 200 {
				t.Errorf("requests in the first two intervals %d, want 200", got)
			}
			s, err := OpenStream(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for {
				if _, err := s.Next(); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatalf("Stream.Next: %v", err)
				}
			}
			if len(s.Torn()) != len(tc.cut) {
				t.Errorf("Stream.Torn = %q, want %d notes", s.Torn(), len(tc.cut))
			}
		})
	}
}

// cutLastLine cuts path's last line in half, newline included.
func cutLastLine(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	start := bytes.LastIndexByte(b, '\n') + 1
	if err := os.WriteFile(path, b[:start+(len(b)-start)/2], 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLineFileWholeLines: a write cut short by the file size limit (what a
// full disk does: part of the buffer lands, then ENOSPC/EFBIG) is taken back,
// so the file holds whole lines only. The writing runs in a child process
// under `ulimit -f` (1 KiB blocks in bash), which limits only that child.
func TestLineFileWholeLines(t *testing.T) {
	if path := os.Getenv("KNEE_LINEFILE_CHILD"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		lf, err := NewLineFile(f)
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Repeat("x", 99) + "\n"
		for range 8 { // 800 bytes fit under the 1,024-byte limit
			lf.Write([]byte(line))
		}
		if err := lf.Flush(); err != nil {
			t.Fatalf("first flush: %v", err)
		}
		for range 8 { // 800 more do not: 224 would land, mid-line
			lf.Write([]byte(line))
		}
		if err := lf.Flush(); err == nil {
			t.Fatal("second flush succeeded past the file size limit")
		}
		return
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("SKIP: no bash to run the child under ulimit -f")
	}
	path := filepath.Join(t.TempDir(), "lines")
	cmd := exec.Command(bash, "-c", `ulimit -f 1 && exec "$0" -test.run '^TestLineFileWholeLines$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "KNEE_LINEFILE_CHILD="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 800 {
		t.Errorf("file holds %d bytes, want 800 (8 whole lines)", len(b))
	}
}

// TestWriteFileAtomicKeepsOldFile: a write that fails part way (the file size
// limit, as a full disk) leaves the old file whole and no temporary file
// (knee report --out used to leave the first 4,096 bytes of the report).
func TestWriteFileAtomicKeepsOldFile(t *testing.T) {
	if path := os.Getenv("KNEE_ATOMIC_CHILD"); path != "" {
		if err := WriteFileAtomic(path, bytes.Repeat([]byte("new\n"), 1000), 0o644); err == nil {
			t.Fatal("4,000 bytes written under a 1,024-byte limit")
		}
		return
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("SKIP: no bash to run the child under ulimit -f")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "-c", `ulimit -f 1 && exec "$0" -test.run '^TestWriteFileAtomicKeepsOldFile$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "KNEE_ATOMIC_CHILD="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("report.html holds %d bytes, want the old 4", len(b))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left in the directory, want 1 (no temporary file)", len(entries))
	}
}

// TestOpenMetaLimit: a run.json that never ends (/dev/zero) is read up to
// limits.RunMeta and refused, naming the file and the limit (it read 2 GB
// in 57 s before).
func TestOpenMetaLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("SKIP: %v", err)
	}
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, MetaFile)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), "run.json: too large: a run.json is read up to 16 MiB (fix: ") {
		t.Errorf("error %v, want run.json too large at 16 MiB", err)
	}
}
