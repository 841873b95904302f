// Command target is the benchmarks' loopback HTTP server: every request gets
// 200 "ok", after -delay if one is given (a slow endpoint, to hold many VUs
// busy at once). It prints its address on stdout once it listens, so a
// script can start it on port 0 and read where it went.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	delay := flag.Duration("delay", 0, "wait this long before each reply")
	flag.Parse()
	if err := serve(*addr, *delay); err != nil {
		fmt.Fprintln(os.Stderr, "target:", err)
		os.Exit(1)
	}
}

func serve(addr string, delay time.Duration) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Println(ln.Addr().String())
	srv := &http.Server{Handler: handler(delay), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut) // best effort on the way out; Serve's error says how it ended
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

func handler(delay time.Duration) http.Handler {
	body := []byte("ok")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})
}
