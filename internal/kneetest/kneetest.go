// Package kneetest holds helpers shared by knee's tests. Only test files
// import it.
package kneetest

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// WriteFiles writes files (path relative to root → content) under root,
// making parent directories: fake /proc and cgroup trees for the probes.
func WriteFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// BuildKnee builds the knee command into the test's temporary directory, for
// tests that need real knee processes. The build cache makes every build
// after the first one a link.
func BuildKnee(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "knee")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/knee-dev/knee/cmd/knee").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/knee: %v\n%s", err, out)
	}
	return bin
}

// DelayServer answers every request with "ok" after delay, on loopback, and
// stops when the test ends. It returns the URL of its /item path.
func DelayServer(t testing.TB, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Write([]byte("ok"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/item"
}

// HybridMountinfo is the cgroup part of /proc/self/mountinfo of a machine
// with cgroup v1 controllers plus a cgroup2 "unified" mount (this project's
// development machines).
const HybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

// Buffer is a bytes.Buffer that a process, a goroutine or a signal watcher
// may write while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
