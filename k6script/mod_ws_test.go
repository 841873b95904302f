package k6script

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/load"
)

// wsServer upgrades every request and hands the connection to serve.
func wsServer(t *testing.T, serve func(c *websocket.Conn)) *httptest.Server {
	t.Helper()
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade has answered the error
		}
		defer c.Close()
		serve(c)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// echo sends back every message as it came (type and payload) until the
// client closes; gorilla's default ping handler answers pings.
func echo(c *websocket.Conn) {
	for {
		mt, b, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(mt, b); err != nil {
			return
		}
	}
}

func wsURL(srv *httptest.Server) string { return "ws" + strings.TrimPrefix(srv.URL, "http") }

// runWS runs iters iterations of the script's default function on one VU
// and fails on an iteration error (the scripts throw on a wrong value).
func runWS(t *testing.T, s *Script, iters int) {
	t.Helper()
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	for i := 0; i < iters; i++ {
		it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Iter: uint64(i), Called: time.Now()}, &got)
	}
	if n, first := s.IterationErrors(); n != 0 {
		t.Fatalf("%d iteration errors, the first: %s", n, first)
	}
}

func k6Count(t *testing.T, s *Script, name string) (count int64, sum float64) {
	t.Helper()
	st, ok := s.k6.Stat(name)
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	return st.Count, st.Sum
}

// A session that sends N messages and closes after the N-th echo: per
// iteration one ws_sessions, N ws_msgs_sent and N ws_msgs_received, the
// close handler called once, the Response's status 101 and url; a text
// message comes back a string and a binary one an ArrayBuffer.
func TestWSEchoSessions(t *testing.T) {
	srv := wsServer(t, echo)
	cases := []struct {
		name         string
		n, iters     int
		binaryEveryK int // every K-th message sent with sendBinary; 0: none
	}{
		{"one message, one iteration", 1, 1, 0},
		{"five messages, three iterations", 5, 3, 0},
		{"text and binary", 6, 2, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := loadScript(t, `import ws from 'k6/ws';
const N = Number(__ENV.N), K = Number(__ENV.K);
export default function () {
  let texts = 0, binaries = 0, closes = 0, opens = 0;
  const res = ws.connect(__ENV.URL, { headers: { 'X-Test': 'yes' }, tags: { my: 'tag' } }, function (socket) {
    socket.on('open', function () {
      opens++;
      for (let i = 1; i <= N; i++) {
        if (K > 0 && i % K === 0) {
          socket.sendBinary(new Uint8Array([i, 2, 3]).buffer);
        } else {
          socket.send('m' + i);
        }
      }
    });
    socket.on('message', function (m) {
      if (typeof m !== 'string' || m[0] !== 'm') throw new Error('text message ' + m);
      texts++;
      if (texts + binaries === N) socket.close();
    });
    socket.on('binaryMessage', function (m) {
      if (!(m instanceof ArrayBuffer) || m.byteLength !== 3) throw new Error('binary message ' + m);
      binaries++;
      if (texts + binaries === N) socket.close();
    });
    socket.on('close', function (code) {
      closes++;
      if (code !== 1001) throw new Error('close code ' + code);
    });
  });
  const wantBin = K > 0 ? Math.floor(N / K) : 0;
  if (res.status !== 101) throw new Error('status ' + res.status);
  if (res.url !== __ENV.URL) throw new Error('url ' + res.url);
  if (res.error !== '') throw new Error('error ' + res.error);
  if (res.headers['Upgrade'] !== 'websocket') throw new Error('headers ' + JSON.stringify(res.headers));
  if (opens !== 1 || closes !== 1) throw new Error('opens ' + opens + ', closes ' + closes);
  if (texts !== N - wantBin || binaries !== wantBin) throw new Error('texts ' + texts + ', binaries ' + binaries);
}`, map[string]string{"URL": wsURL(srv), "N": strconv.Itoa(c.n), "K": strconv.Itoa(c.binaryEveryK)})
			// k6's tags on a session's samples: the params' tags, url, status, scenario
			tagged := map[string]string{"my": "tag", "url": wsURL(srv), "status": "101", "scenario": "x"}
			s.k6.want(k6metric.WSMsgsSent, tagged)
			runWS(t, s, c.iters)
			if _, sum := k6Count(t, s, SubmetricName(k6metric.WSMsgsSent, tagged)); sum != float64(c.n*c.iters) {
				t.Errorf("%s = %v, want %v", SubmetricName(k6metric.WSMsgsSent, tagged), sum, c.n*c.iters)
			}
			// handleSummary's data has them under k6's types
			ms := s.SummaryData(SummaryInput{Duration: time.Second})["metrics"].(map[string]any)
			for name, want := range map[string][2]string{
				k6metric.WSSessions: {"counter", "default"}, k6metric.WSMsgsReceived: {"counter", "default"},
				k6metric.WSConnecting: {"trend", "time"}, k6metric.WSSessionDuration: {"trend", "time"},
			} {
				e, _ := ms[name].(map[string]any)
				if e == nil || e["type"] != want[0] || e["contains"] != want[1] {
					t.Errorf("data.metrics[%s] = %v, want type %s contains %s", name, e, want[0], want[1])
				}
			}
			if got := ms[k6metric.WSMsgsReceived].(map[string]any)["values"].(map[string]float64)["count"]; got != float64(c.n*c.iters) {
				t.Errorf("data.metrics.ws_msgs_received.values.count = %v, want %d", got, c.n*c.iters)
			}
			for _, w := range []struct {
				metric string
				sum    float64
			}{
				{k6metric.WSSessions, float64(c.iters)},
				{k6metric.WSMsgsSent, float64(c.n * c.iters)},
				{k6metric.WSMsgsReceived, float64(c.n * c.iters)},
				{k6metric.Iterations, float64(c.iters)},
			} {
				if _, sum := k6Count(t, s, w.metric); sum != w.sum {
					t.Errorf("%s = %v, want %v", w.metric, sum, w.sum)
				}
			}
			// one handshake and one session time per iteration
			for _, m := range []string{k6metric.WSConnecting, k6metric.WSSessionDuration} {
				if n, _ := k6Count(t, s, m); n != int64(c.iters) {
					t.Errorf("%s has %d values, want %d", m, n, c.iters)
				}
			}
		})
	}
}

// A refused upgrade: k6 returns the server's response (status 400, its
// body, no url, no error) and calls no handler; with options.throw it
// throws websocket's "bad handshake". Nothing listening: status 0 and the
// dial's error. Each counts one session and one handshake time.
func TestWSRefused(t *testing.T) {
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no upgrade here", http.StatusBadRequest)
	}))
	t.Cleanup(refuse.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := wsURL(gone)
	gone.Close()
	cases := []struct {
		name, url, throw string
		check            string // the script's test of res
		wantErr          string // "": no iteration error
	}{
		{"400", wsURL(refuse), "false",
			`res.status === 400 && res.error === '' && res.url === '' && res.body === 'no upgrade here\n'`, ""},
		{"400 with throw", wsURL(refuse), "true", "false", "websocket: bad handshake"},
		{"connection refused", goneURL, "false", `res.status === 0 && res.error.indexOf('connect') >= 0`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := loadScript(t, `import ws from 'k6/ws';
export const options = { throw: `+c.throw+` };
export default function () {
  let called = 0;
  const res = ws.connect(__ENV.URL, function (socket) {
    called++;
    socket.on('error', function () { called++; });
  });
  if (called !== 0) throw new Error('callback called');
  if (!(`+c.check+`)) throw new Error('res ' + JSON.stringify(res));
}`, map[string]string{"URL": c.url})
			iterateOnce(t, s)
			n, first := s.IterationErrors()
			switch {
			case c.wantErr == "" && n != 0:
				t.Fatalf("iteration error: %s", first)
			case c.wantErr != "" && !strings.Contains(first, c.wantErr):
				t.Fatalf("iteration error %q, want one with %q", first, c.wantErr)
			}
			if _, sum := k6Count(t, s, k6metric.WSSessions); sum != 1 {
				t.Errorf("ws_sessions = %v, want 1", sum)
			}
			if n, _ := k6Count(t, s, k6metric.WSConnecting); n != 1 {
				t.Errorf("ws_connecting has %d values, want 1", n)
			}
		})
	}
}

// Pings both ways: the script's ping gets the server's pong (one ws_ping
// value per ping, its pong handler called), and the server's ping gets a
// pong with its payload (the script's ping handler called).
func TestWSPing(t *testing.T) {
	var pongs atomic.Int64
	srv := wsServer(t, func(c *websocket.Conn) {
		c.SetPongHandler(func(data string) error {
			if data == "from server" {
				pongs.Add(1)
			}
			return nil
		})
		if err := c.WriteControl(websocket.PingMessage, []byte("from server"), time.Now().Add(time.Second)); err != nil {
			return
		}
		echo(c) // its reads run the handlers: answer the client's pings, see the pong
	})
	s := loadScript(t, `import ws from 'k6/ws';
export default function () {
  let pings = 0, pongs = 0;
  ws.connect(__ENV.URL, function (socket) {
    socket.on('open', function () { socket.ping(); socket.ping(); });
    socket.on('ping', function () { pings++; if (pings === 1 && pongs === 2) socket.close(); });
    socket.on('pong', function () { pongs++; if (pings === 1 && pongs === 2) socket.close(); });
  });
  if (pings !== 1 || pongs !== 2) throw new Error('pings ' + pings + ', pongs ' + pongs);
}`, map[string]string{"URL": wsURL(srv)})
	runWS(t, s, 1)
	if n, _ := k6Count(t, s, k6metric.WSPing); n != 2 {
		t.Errorf("ws_ping has %d values, want 2", n)
	}
	// the server saw the pong before the client's close ended its reads
	deadline := time.Now().Add(5 * time.Second)
	for pongs.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := pongs.Load(); got != 1 {
		t.Errorf("the server got %d pongs, want 1", got)
	}
}

// The server's close: its code reaches the close handler, once, and
// connect returns; a close without a status is 1005 (gorilla's
// CloseNoStatusReceived), as k6 reports it.
func TestWSServerCloses(t *testing.T) {
	cases := []struct {
		name string
		msg  []byte
		want int
	}{
		{"normal", websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"), 1000},
		{"policy", websocket.FormatCloseMessage(websocket.ClosePolicyViolation, ""), 1008},
		{"no status", nil, 1005},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := wsServer(t, func(conn *websocket.Conn) {
				conn.WriteControl(websocket.CloseMessage, c.msg, time.Now().Add(time.Second))
				conn.ReadMessage() // until the client's close
			})
			s := loadScript(t, `import ws from 'k6/ws';
export default function () {
  const codes = [];
  ws.connect(__ENV.URL, function (socket) { socket.on('close', function (code) { codes.push(code); }); });
  if (codes.length !== 1 || codes[0] !== Number(__ENV.WANT)) throw new Error('codes ' + codes);
}`, map[string]string{"URL": wsURL(srv), "WANT": strconv.Itoa(c.want)})
			runWS(t, s, 1)
		})
	}
}

// socket.setInterval and setTimeout run in the socket's loop; a
// non-positive delay throws k6's message.
func TestWSTimers(t *testing.T) {
	srv := wsServer(t, echo)
	cases := []struct {
		name, body, wantErr string
	}{
		{"interval three times, then a timeout closes", `let ticks = 0, timeouts = 0;
  ws.connect(__ENV.URL, function (socket) {
    socket.setInterval(function () { ticks++; if (ticks === 3) socket.setTimeout(function () { timeouts++; socket.close(); }, 5); }, 5);
  });
  if (ticks < 3 || timeouts !== 1) throw new Error('ticks ' + ticks + ', timeouts ' + timeouts);`, ""},
		{"zero interval", `ws.connect(__ENV.URL, function (socket) { socket.setInterval(function () {}, 0); });`,
			"setInterval requires a >0 timeout parameter, received 0.00"},
		{"a handler's exception ends connect", `ws.connect(__ENV.URL, function (socket) {
    socket.on('open', function () { throw new Error('boom'); });
  });`, "boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := loadScript(t, "import ws from 'k6/ws';\nexport default function () {\n  "+c.body+"\n}", map[string]string{"URL": wsURL(srv)})
			iterateOnce(t, s)
			n, first := s.IterationErrors()
			switch {
			case c.wantErr == "" && n != 0:
				t.Fatalf("iteration error: %s", first)
			case c.wantErr != "" && !strings.Contains(first, c.wantErr):
				t.Fatalf("iteration error %q, want one with %q", first, c.wantErr)
			}
		})
	}
}

// The run's end (graceful stop's context) ends a session that would never
// close: connect returns, the iteration is interrupted, not counted, and
// no session time is recorded (k6 drops a stopped VU's samples).
func TestWSStopsAtContextEnd(t *testing.T) {
	srv := wsServer(t, echo)
	s := loadScript(t, `import ws from 'k6/ws';
export default function () {
  ws.connect(__ENV.URL, function (socket) {
    socket.on('open', function () { socket.send('hello'); });
  });
}`, map[string]string{"URL": wsURL(srv)})
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var got samples
		it.DoRecord(ctx, load.Start{Scenario: "x", VU: 1, Called: time.Now()}, &got)
	}()
	// wait for the echo, so the session is in its loop when the run ends
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, sum := k6Count(t, s, k6metric.WSMsgsReceived); sum == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a bound on a hang, not a timing
		t.Fatal("the iteration did not end after its context did")
	}
	if got := s.Iterations(); got != 0 {
		t.Errorf("iterations = %d, want 0 (interrupted)", got)
	}
	if _, sum := k6Count(t, s, k6metric.WSSessions); sum != 1 {
		t.Errorf("ws_sessions = %v, want 1", sum)
	}
	if n, _ := k6Count(t, s, k6metric.WSSessionDuration); n != 0 {
		t.Errorf("ws_session_duration has %d values, want 0", n)
	}
}

// In the init code, ws.connect throws, as in k6.
func TestWSInInitCode(t *testing.T) {
	path := writeScript(t, "s.js", map[string]string{"s.js": "import ws from 'k6/ws';\nws.connect('ws://127.0.0.1:1/', function () {});\nexport default function () {}\n"})
	s, err := Load(context.Background(), path, Config{})
	if err == nil {
		s.Close()
		t.Fatal("Load succeeded")
	}
	if !strings.Contains(err.Error(), "ws.connect in the init code") {
		t.Fatalf("error %q", err)
	}
}

// Thresholds on the ws metrics are judged on k6's sums, a tagged
// submetric too: 2 iterations of 3 messages are 6 sent, 2 sessions.
func TestWSThresholds(t *testing.T) {
	srv := wsServer(t, echo)
	s := loadScript(t, `import ws from 'k6/ws';
export default function () {
  let got = 0;
  ws.connect(__ENV.URL, { tags: { kind: 'chat' } }, function (socket) {
    socket.on('open', function () { socket.send('a'); socket.send('b'); socket.send('c'); });
    socket.on('message', function () { if (++got === 3) socket.close(); });
  });
}`, map[string]string{"URL": wsURL(srv)})
	rest, own, err := s.SplitThresholds(map[string][]string{
		"ws_msgs_sent":                {"count==6", "count>6"},
		"ws_msgs_received{kind:chat}": {"count==6"},
		"ws_msgs_sent{kind:other}":    {"count==0"},
		"ws_sessions":                 {"count==2"},
		"ws_connecting":               {"p(95)>=0"},
	})
	if err != nil || len(rest) != 0 {
		t.Fatalf("SplitThresholds: rest %v, err %v", rest, err)
	}
	runWS(t, s, 2)
	want := map[string]bool{"ws_msgs_sent: count==6": true, "ws_msgs_sent: count>6": false,
		"ws_msgs_received{kind:chat}: count==6": true, "ws_msgs_sent{kind:other}: count==0": true,
		"ws_sessions: count==2": true, "ws_connecting: p(95)>=0": true}
	res := s.EvaluateOwn(own, time.Second)
	if len(res) != 6 {
		t.Fatalf("%d results, want 6: %+v", len(res), res)
	}
	for _, r := range res {
		if w, ok := want[r.Expr]; !ok || r.Pass != w {
			t.Errorf("%s: pass %v, want %v, %v (value %v)", r.Expr, r.Pass, w, ok, r.Value)
		}
	}
}
