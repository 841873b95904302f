package request

import (
	"errors"
	"io"
	"net"
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
