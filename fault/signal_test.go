package fault

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/knee-dev/knee/internal/kneetest"
)

// statLine is a /proc/PID/stat line with the fields knee reads set.
func statLine(pid int, comm string, state byte, ppid int, utime, stime, start uint64) string {
	// fields 3..22: state ppid pgrp session tty tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime
	// then vsize rss rsslim and fields 26..52, as a 5.x kernel writes them.
	return fmt.Sprintf("%d (%s) %c %d 1 1 0 -1 4194304 10 0 0 0 %d %d 0 0 20 0 1 0 %d 1000 200 18446744073709551615"+
		" 1 1 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		pid, comm, state, ppid, utime, stime, start)
}

type fakeProc struct {
	pid, ppid int
	comm      string
	uid       int
	start     uint64
}

// fakeProcTree writes stat and status files for procs under a temp /proc.
func fakeProcTree(t *testing.T, procs []fakeProc) string {
	root := t.TempDir()
	files := map[string]string{}
	for _, p := range procs {
		files[fmt.Sprintf("%d/stat", p.pid)] = statLine(p.pid, p.comm, 'S', p.ppid, 0, 0, p.start)
		files[fmt.Sprintf("%d/status", p.pid)] = fmt.Sprintf("Name:\t%s\nUid:\t%d\t%d\t%d\t%d\nGid:\t0\t0\t0\t0\n", p.comm, p.uid, p.uid, p.uid, p.uid)
	}
	kneetest.WriteFiles(t, root, files)
	return root
}

func TestSignalFreezerValidation(t *testing.T) {
	root := fakeProcTree(t, []fakeProc{
		{pid: 1, ppid: 0, comm: "init", uid: 0, start: 1},
		{pid: 100, ppid: 1, comm: "bash", uid: 1000, start: 50},
		{pid: 200, ppid: 100, comm: "knee", uid: 1000, start: 60},
		{pid: 300, ppid: 1, comm: "bookstore api", uid: 1000, start: 70},
		{pid: 400, ppid: 1, comm: "postgres", uid: 999, start: 80},
	})
	user := procEnv{root: root, self: 200, euid: 1000}
	rootUser := procEnv{root: root, self: 200, euid: 0}
	tests := []struct {
		name string
		env  procEnv
		pid  int
		want error // nil: accepted
		msg  string
	}{
		{"own target", user, 300, nil, ""},
		{"other user's process as root", rootUser, 400, nil, ""},
		{"other user's process", user, 400, ErrNotOurs, "pid 400 belongs to another user"},
		{"knee itself", user, 200, ErrForbiddenPID, "knee itself"},
		{"knee's shell", user, 100, ErrForbiddenPID, "ancestor of knee"},
		{"init", rootUser, 1, ErrForbiddenPID, "pid 1 is init"},
		{"missing", user, 999, ErrNoSuchPID, "pid 999 does not exist"},
		{"zero", user, 0, ErrNoSuchPID, "pid 0 does not exist"},
		{"negative", user, -3, ErrNoSuchPID, "pid -3 does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := newSignalFreezer(tt.env, tt.pid)
			if tt.want == nil {
				if err != nil || f.PID() != tt.pid {
					t.Fatalf("newSignalFreezer(%d) = %v, %v", tt.pid, f, err)
				}
				return
			}
			var ve *ValidationError
			if !errors.Is(err, tt.want) || !errors.As(err, &ve) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v containing %q", err, tt.want, tt.msg)
			}
		})
	}
}

func TestSignalFreezerRealRefusals(t *testing.T) {
	// The real /proc: knee's own test process and its parent are refused.
	for _, pid := range []int{1, os.Getpid(), os.Getppid()} {
		if _, err := NewSignalFreezer(pid); !errors.Is(err, ErrForbiddenPID) {
			t.Errorf("NewSignalFreezer(%d) = %v, want ErrForbiddenPID", pid, err)
		}
	}
	// Above the kernel's largest pid_max (2^22), no process can exist.
	if _, err := NewSignalFreezer(1<<22 + 1); !errors.Is(err, ErrNoSuchPID) {
		t.Errorf("NewSignalFreezer(2^22+1) = %v, want ErrNoSuchPID", err)
	}
}

func TestReadProcStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want procStat
		bad  bool
	}{
		{"plain", statLine(42, "api", 'R', 7, 1, 2, 12345), procStat{state: 'R', ppid: 7, start: 12345}, false},
		{"comm with spaces and parens", statLine(42, "a) b (c", 'T', 9, 0, 0, 5), procStat{state: 'T', ppid: 9, start: 5}, false},
		{"truncated", "42 (api) S 1 2 3", procStat{}, true},
		{"no paren", "42 api S 1", procStat{}, true},
		{"bad ppid", strings.Replace(statLine(42, "x", 'S', 1, 0, 0, 5), " S 1 ", " S x ", 1), procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			kneetest.WriteFiles(t, root, map[string]string{"42/stat": tt.in})
			got, err := readProcStat(root, 42)
			if (err != nil) != tt.bad || got != tt.want {
				t.Errorf("readProcStat = %+v, %v; want %+v (error %v)", got, err, tt.want, tt.bad)
			}
		})
	}
	if _, err := readProcStat(t.TempDir(), 42); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing pid: %v, want os.ErrNotExist", err)
	}
}
