package k6script

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// data_sent and data_received count what went over the wire, as k6's do:
// request line, headers and body out; status line, headers and body in.
// The server answers fixed bytes and notes how many bytes each request
// took on the wire; both are checked against the request and response
// written out by hand.
func TestBytesCountedOnTheWire(t *testing.T) {
	const resp = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" // 17 + 19 + 2 + 5 = 43
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		read []int64 // each request's bytes, as the server read them
	)
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				cr := &countedReader{r: conn}
				br := bufio.NewReader(cr)
				for {
					from := cr.n - int64(br.Buffered())
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					mu.Lock()
					read = append(read, cr.n-int64(br.Buffered())-from)
					mu.Unlock()
					if _, err := io.WriteString(conn, resp); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	host := ln.Addr().String()
	s := loadScript(t, `import http from 'k6/http';
export default function () {
  http.get('http://`+host+`/x');
  http.post('http://`+host+`/y', 'abc');
}`, nil)
	it := s.Iteration("s", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	it.DoRecord(context.Background(), load.Start{Scenario: "s", VU: 1, Called: time.Now()}, &got)
	h := int64(len(host))
	// "GET /x HTTP/1.1\r\n" 17, "Host: " H CRLF 8+H,
	// "User-Agent: knee (k6 script)\r\n" 30, blank line 2; the POST's
	// request line is 18, with "Content-Length: 3\r\n" 19 and the body 3.
	wantOut := []int64{17 + 8 + h + 30 + 2, 18 + 8 + h + 30 + 19 + 2 + 3}
	if len(got.all) != 2 {
		t.Fatalf("%d samples, want 2", len(got.all))
	}
	mu.Lock()
	defer mu.Unlock()
	for i, smp := range got.all {
		if smp.BytesIn != int64(len(resp)) || smp.BytesOut != wantOut[i] {
			t.Errorf("request %d: %d bytes in, %d out; want %d in, %d out", i, smp.BytesIn, smp.BytesOut, len(resp), wantOut[i])
		}
		if i < len(read) && read[i] != wantOut[i] {
			t.Errorf("request %d: the server read %d bytes, the hand count is %d", i, read[i], wantOut[i])
		}
	}
	// k6's data_sent and data_received: the iteration's bytes, added once
	// at its end (k6's Dialer.IOSamples).
	for _, c := range []struct {
		metric string
		want   int64
	}{{"data_sent", wantOut[0] + wantOut[1]}, {"data_received", 2 * int64(len(resp))}} {
		st, ok := s.k6.Stat(c.metric)
		if !ok || st.Sum != float64(c.want) || st.Count != 1 {
			t.Errorf("%s: %+v (found %v), want a sum of %d in 1 add", c.metric, st, ok, c.want)
		}
	}
}

type countedReader struct {
	r io.Reader
	n int64
}

func (c *countedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
