package cli

import (
	"net"
	"net/http"
	"testing"
)

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
