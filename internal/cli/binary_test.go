package cli

import (
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildKnee builds the knee command into the test's temporary directory,
// for tests that need a real process (a real terminal, examples run as a
// shell runs them). The build cache makes every build after the first a link.
func buildKnee(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "knee")
	out, err := exec.Command("go", "build", "-o", path, "github.com/knee-dev/knee/cmd/knee").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/knee: %v\n%s", err, out)
	}
	return path
}

// loopbackServer starts an HTTP server on 127.0.0.1 answering "ok" to
// everything, stopped when the test ends. It returns its base URL.
func loopbackServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}
