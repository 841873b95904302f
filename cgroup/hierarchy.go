package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Hierarchy says where the cgroup filesystems are mounted. The zero value
// has no cgroups; Mounts fills one from /proc/self/mountinfo, and tests
// build one rooted in a temporary directory.
type Hierarchy struct {
	V2   string            // cgroup2 mount point, "" when none
	V1   map[string]string // v1 controller ("cpu", "cpuacct", "freezer", ...) → mount point
	CPUs int               // CPUs on the machine, the ceiling of a CPU limit; 0 means runtime.NumCPU()
}

// Version is the cgroup version knee uses for the limits and freezes it
// creates: 1 when the cpu or freezer controller is mounted as v1 (hybrid
// machines included), 2 when only cgroup2 is mounted, 0 without cgroups.
func (h Hierarchy) Version() int {
	switch {
	case h.V1["cpu"] != "" || h.V1["freezer"] != "":
		return 1
	case h.V2 != "":
		return 2
	}
	return 0
}

// NumCPU is h.CPUs, or runtime.NumCPU() when unset.
func (h Hierarchy) NumCPU() int {
	if h.CPUs > 0 {
		return h.CPUs
	}
	return runtime.NumCPU()
}

// Mounts reads root/proc/self/mountinfo and returns the cgroup mounts, each
// taken under root ("" or "/" is the real filesystem).
func Mounts(root string) (Hierarchy, error) {
	if root == "" {
		root = "/"
	}
	f, err := os.Open(filepath.Join(root, "proc/self/mountinfo"))
	if err != nil {
		return Hierarchy{}, fmt.Errorf("cannot read mountinfo: %w", err)
	}
	defer f.Close()
	h, err := ParseMountinfo(f)
	if err != nil {
		return Hierarchy{}, err
	}
	return h.under(root), nil
}

// ParseMountinfo reads a /proc/PID/mountinfo and returns where the cgroup
// filesystems are mounted. Lines that are not cgroup mounts are skipped; a
// malformed cgroup line is an error naming the line.
func ParseMountinfo(r io.Reader) (Hierarchy, error) {
	h := Hierarchy{V1: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		// "36 25 0:32 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu"
		left, right, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fsFields := strings.Fields(right)
		if len(fsFields) < 1 || (fsFields[0] != "cgroup" && fsFields[0] != "cgroup2") {
			continue
		}
		mountFields := strings.Fields(left)
		if len(mountFields) < 5 {
			return Hierarchy{}, fmt.Errorf("mountinfo line %d: want at least 5 fields before \" - \", got %d", n, len(mountFields))
		}
		mountPoint := unescapeMount(mountFields[4])
		if fsFields[0] == "cgroup2" {
			h.V2 = mountPoint
			continue
		}
		if len(fsFields) < 3 {
			return Hierarchy{}, fmt.Errorf("mountinfo line %d: cgroup mount without super options", n)
		}
		for _, opt := range strings.Split(fsFields[2], ",") {
			if isMountOption(opt) {
				continue
			}
			h.V1[opt] = mountPoint
		}
	}
	if err := sc.Err(); err != nil {
		return Hierarchy{}, fmt.Errorf("read mountinfo: %w", err)
	}
	return h, nil
}

func isMountOption(opt string) bool {
	switch opt {
	case "", "rw", "ro", "relatime", "noatime", "nosuid", "nodev", "noexec",
		"clone_children", "noprefix", "xattr", "cpuset_v2_mode", "favordynmods":
		return true
	}
	return strings.HasPrefix(opt, "release_agent=")
}

// unescapeMount undoes mountinfo's octal escapes ("\040" for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// under prefixes every mount point with root (a no-op for "/").
func (h Hierarchy) under(root string) Hierarchy {
	if root == "/" || root == "" {
		return h
	}
	out := Hierarchy{V1: map[string]string{}, CPUs: h.CPUs}
	if h.V2 != "" {
		out.V2 = filepath.Join(root, h.V2)
	}
	for k, v := range h.V1 {
		out.V1[k] = filepath.Join(root, v)
	}
	return out
}
