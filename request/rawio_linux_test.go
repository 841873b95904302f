package request

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rawPair is a loopback TCP connection: the client end read and written
// through rawIO, and the server end.
func rawPair(t *testing.T) (client net.Conn, raw io.ReadWriter, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	raw = newRawIO(client)
	if _, ok := raw.(*rawIO); !ok {
		t.Fatalf("newRawIO(%T) = %T, want *rawIO", client, raw)
	}
	return client, raw, server
}

func TestRawIOReadsWritesAndEnds(t *testing.T) {
	_, raw, server := rawPair(t)
	// Larger than a socket buffer: the write waits for the reader.
	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = byte(i)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(server, int64(len(big))))
		got <- b
	}()
	if n, err := raw.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write: %d, %v; want %d, nil", n, err, len(big))
	}
	if b := <-got; len(b) != len(big) || b[len(b)-1] != big[len(big)-1] || b[12345] != big[12345] {
		t.Fatalf("the server read %d bytes, not what was written", len(b))
	}
	if _, err := server.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := io.ReadFull(raw, buf[:5]); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("Read: %q, %v; want hello", buf[:n], err)
	}
	server.Close()
	if n, err := raw.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("Read after the peer closed: %d, %v; want 0, EOF", n, err)
	}
}

func TestRawIODeadlineAndClose(t *testing.T) {
	client, raw, _ := rawPair(t)
	client.SetDeadline(time.Now().Add(20 * time.Millisecond))
	begin := time.Now()
	if _, err := raw.Read(make([]byte, 8)); !isTimeout(err) {
		t.Fatalf("Read past the deadline: %v; want a timeout", err)
	}
	if took := time.Since(begin); took < 20*time.Millisecond {
		t.Errorf("the read timed out after %v, before its deadline", took)
	}
	client.SetDeadline(time.Time{})
	go func() { time.Sleep(20 * time.Millisecond); client.Close() }()
	if _, err := raw.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read on a closed conn: %v; want net.ErrClosed", err)
	}
}

func TestRawIOReportsReset(t *testing.T) {
	_, raw, server := rawPair(t)
	// Linger 0: the server's close sends a reset.
	if err := server.(*net.TCPConn).SetLinger(0); err != nil {
		t.Fatal(err)
	}
	server.Close()
	time.Sleep(20 * time.Millisecond)
	_, err := raw.Read(make([]byte, 8))
	if !errors.Is(err, syscall.ECONNRESET) || Classify(err) != ClassReset {
		t.Fatalf("Read after a reset: %v (class %q); want ECONNRESET", err, Classify(err))
	}
}

// TestRawIOErrorsAreTheConnections: rawIO fails with the error the
// connection's own Read or Write gives in the same state, word for word
// but for the addresses.
func TestRawIOErrorsAreTheConnections(t *testing.T) {
	tests := []struct {
		name  string
		write bool
		set   func(client, server net.Conn)
	}{
		{"deadline", false, func(c, _ net.Conn) { c.SetDeadline(time.Unix(1, 0)) }},
		{"write deadline", true, func(c, _ net.Conn) { c.SetDeadline(time.Unix(1, 0)) }},
		{"closed", false, func(c, _ net.Conn) { c.Close() }},
		{"write closed", true, func(c, _ net.Conn) { c.Close() }},
		{"reset", false, func(_, s net.Conn) {
			s.(*net.TCPConn).SetLinger(0) //nolint:errcheck // the read below says
			s.Close()
			time.Sleep(20 * time.Millisecond)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errs [2]error
			for i, raw := range []bool{false, true} {
				client, rw, server := rawPair(t)
				if !raw {
					rw = client
				}
				tt.set(client, server)
				if tt.write {
					_, errs[i] = rw.Write([]byte("x"))
				} else {
					_, errs[i] = rw.Read(make([]byte, 8))
				}
				oe, ok := errs[i].(*net.OpError)
				if !ok || oe.Source != client.LocalAddr() || oe.Addr != client.RemoteAddr() {
					t.Fatalf("raw %v: %#v; want a *net.OpError naming the connection's addresses", raw, errs[i])
				}
			}
			conn, raw := errs[0].(*net.OpError), errs[1].(*net.OpError)
			if raw.Op != conn.Op || raw.Net != conn.Net || raw.Err.Error() != conn.Err.Error() || Classify(raw) != Classify(conn) || isTimeout(raw) != isTimeout(conn) {
				t.Errorf("rawIO: %v; the connection's own: %v", raw, conn)
			}
		})
	}
}

// untilStamped calls exchange with 0, 1, 2, … until it reports that its
// reply carried the kernel's receive time, for up to 10 s, and returns how
// many it made. Linux turns receive stamps on for the whole machine from a
// work queue after the first socket asks for them, so the first replies of
// a process (CI on d0edf69: the first) can come unstamped; those are timed
// at the read.
func untilStamped(t *testing.T, exchange func(iter uint64) (stamped bool)) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for iter := uint64(0); ; iter++ {
		if exchange(iter) {
			t.Logf("stamped at exchange %d", iter+1)
			return iter + 1
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reply carried the kernel's receive time in %d exchanges over 10 s", iter+1)
		}
	}
}

// A read takes the kernel's receive time of the bytes: between the start
// and the end of the peer's write on loopback, not the read a few
// milliseconds later (see untilStamped).
func TestRawIOTakesTheReceiveTime(t *testing.T) {
	_, raw, server := rawPair(t)
	r := raw.(*rawIO)
	buf := make([]byte, 1)
	untilStamped(t, func(uint64) bool {
		writing := time.Now()
		if _, err := server.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		wrote := time.Now()
		time.Sleep(2 * time.Millisecond)
		if _, err := io.ReadFull(raw, buf); err != nil {
			t.Fatal(err)
		}
		rx := r.received()
		if rx != 0 && (rx < writing.UnixNano() || rx > wrote.UnixNano()) {
			t.Fatalf("received at %v, want within the write, %v to %v", time.Unix(0, rx), writing, wrote)
		}
		return rx != 0
	})
}

// The lean client times a response from the arrival of its last bytes:
// its Done is no later than the end of the server's write, which on
// loopback puts them in knee's socket, and knee's own wake-up to read them
// is left out (see untilStamped).
func TestDoTimesResponsesFromTheirArrival(t *testing.T) {
	wrote := make(chan time.Time, 1)
	url, _, _ := scriptServer(t, func(_ int, _ *http.Request, conn net.Conn) bool {
		_, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		wrote <- time.Now()
		return err == nil
	})
	s := newSender(t, []Spec{{URL: url + "/"}}, Options{})
	untilStamped(t, func(iter uint64) bool {
		res := s.Do(context.Background(), 1, iter)
		end := <-wrote
		if res.Err != nil || res.Status != 200 {
			t.Fatalf("status %d, err %v", res.Status, res.Err)
		}
		lc := s.lean.slot(1).c.Load()
		if lc == nil {
			t.Fatal("the VU's connection was not kept")
		}
		stamped := lc.rw.(*rawIO).received() != 0
		if stamped && (res.Done.Before(res.Sent) || res.Done.After(end)) {
			t.Fatalf("sent at 0, done at %v, the server's write ended at %v: want done between", res.Done.Sub(res.Sent), end.Sub(res.Sent))
		}
		return stamped
	})
}

// A VU's own connections (Conns) time a reply by the lean client's rule:
// from the arrival of its last bytes. The server holds the only processor
// for 5 ms after its write (GOMAXPROCS 1), so knee reads the reply at least
// that late, yet Done is no later than the write's end; the phases still
// add up to Done-Sent (see untilStamped).
func TestConnsTimeRepliesFromTheirArrival(t *testing.T) {
	wrote := make(chan time.Time, 1)
	url, _, _ := scriptServer(t, func(_ int, _ *http.Request, conn net.Conn) bool {
		_, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		end := time.Now()
		for time.Since(end) < 5*time.Millisecond {
		}
		wrote <- end
		return err == nil
	})
	caller := NewCaller(TransportOptions{})
	defer caller.Close()
	conns := NewConns()
	defer conns.Close()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	untilStamped(t, func(uint64) bool {
		rep := caller.Do(context.Background(), Call{URL: url + "/"}, nil, conns)
		end := <-wrote
		if rep.Err != nil || rep.Status != 200 {
			t.Fatalf("status %d, err %v", rep.Status, rep.Err)
		}
		c := conns.idle[strings.TrimPrefix(url, "http://")]
		if c == nil {
			t.Fatal("the VU's connection was not kept")
		}
		stamped := c.rw.(*rawIO).received() != 0
		if stamped && (rep.Done.Before(rep.Sent) || rep.Done.After(end)) {
			t.Fatalf("sent at 0, done at %v, the server's write ended at %v: want done between", rep.Done.Sub(rep.Sent), end.Sub(rep.Sent))
		}
		if tm := rep.Timings; tm.Sending < 0 || tm.Waiting < 0 || tm.Receiving < 0 || tm.Duration != rep.Done.Sub(rep.Sent) {
			t.Fatalf("timings %+v, done-sent %v: want phases >= 0 adding up to it", tm, rep.Done.Sub(rep.Sent))
		}
		return stamped
	})
}

// A request written ahead of its reply's read (writeAhead) arrives whole,
// small or larger than a socket buffer (then written in part inside the
// read, the rest as any write), and the reply is read after it; a write
// that fails is reported as the write's error, as Write reports it.
func TestRawIOWritesAheadOfTheRead(t *testing.T) {
	for _, tt := range []struct {
		name   string
		size   int
		closed bool // the server end is reset before the write
	}{
		{"small", 100, false},
		{"beyond a socket buffer", 8 << 20, false},
		{"peer reset", 100, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, raw, server := rawPair(t)
			r := raw.(*rawIO)
			req := make([]byte, tt.size)
			for i := range req {
				req[i] = byte(i)
			}
			if tt.closed {
				server.(*net.TCPConn).SetLinger(0)
				server.Close()
				time.Sleep(50 * time.Millisecond) // the reset reaches the client
			}
			got := make(chan []byte, 1)
			if !tt.closed {
				go func() {
					b, _ := io.ReadAll(io.LimitReader(server, int64(len(req))))
					server.Write([]byte("reply"))
					got <- b
				}()
			}
			r.writeAhead(req)
			buf := make([]byte, 16)
			n, err := r.Read(buf)
			wn, at, werr := r.written()
			if tt.closed {
				var oe *net.OpError
				if !errors.As(err, &oe) || oe.Op != "write" || werr != err {
					t.Fatalf("Read: %d, %v; written %v; want the write's *net.OpError from both", n, err, werr)
				}
				return
			}
			if err != nil || string(buf[:n]) != "reply" || wn != len(req) || at.IsZero() || werr != nil {
				t.Fatalf("Read: %q, %v; written %d at %v, %v; want %q, nil, %d at a time, nil", buf[:n], err, wn, at, werr, "reply", len(req))
			}
			if b := <-got; len(b) != len(req) || b[len(b)-1] != req[len(req)-1] {
				t.Fatalf("the server read %d bytes, not the request", len(b))
			}
		})
	}
}
