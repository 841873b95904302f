package k6script

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/load"
)

// wsCounts are the k6 counts a test expects, worked out by hand.
type wsCounts struct {
	sessions, sent, received, durations, pings int64
}

func checkWSCounts(t *testing.T, s *Script, want wsCounts) {
	t.Helper()
	for _, c := range []struct {
		metric string
		want   int64
	}{
		{k6metric.WSSessions, want.sessions},
		{k6metric.WSConnecting, want.sessions},
		{k6metric.WSMsgsSent, want.sent},
		{k6metric.WSMsgsReceived, want.received},
		{k6metric.WSSessionDuration, want.durations},
		{k6metric.WSPing, want.pings},
	} {
		got := int64(0)
		if st, ok := s.k6.Stat(c.metric); ok {
			got = st.Count
		}
		if c.metric == k6metric.WSSessions || c.metric == k6metric.WSMsgsSent || c.metric == k6metric.WSMsgsReceived {
			if st, ok := s.k6.Stat(c.metric); ok && int64(st.Sum) != got {
				t.Errorf("%s: sum %v, count %d; a counter's values are 1", c.metric, st.Sum, got)
			}
		}
		if got != c.want {
			t.Errorf("%s: %d values, want %d", c.metric, got, c.want)
		}
	}
}

// Echo: a text message, an ArrayBuffer, a typed array's view (its own
// bytes only) and a Blob come back as sent; binaryType 'arraybuffer'
// gives ArrayBuffers, the default 'blob' Blobs. The script closes after
// the fourth echo; the server's close answer is code 1000. Per
// iteration: 1 session, 4 sent, 4 received, 1 session duration.
func TestWebSocketsEcho(t *testing.T) {
	srv := wsServer(t, echo)
	for _, mod := range []string{"k6/websockets", "k6/experimental/websockets"} {
		t.Run(mod, func(t *testing.T) {
			s := loadScript(t, `import { WebSocket, Blob } from '`+mod+`';
export default async function () {
  const ws = new WebSocket(__ENV.URL);
  if (ws.readyState !== 0 || ws.url !== __ENV.URL || ws.binaryType !== 'blob') throw new Error('new: ' + ws.readyState + ' ' + ws.url + ' ' + ws.binaryType);
  const got = [];
  let closeCode = -1;
  ws.onopen = (e) => {
    if (e.type !== 'open' || e.target !== ws || ws.readyState !== 1) throw new Error('open event ' + e.type);
    ws.send('hello');
    ws.send(new Uint8Array([1, 2, 3]).buffer);
    ws.send(new Uint8Array([9, 4, 5, 9]).subarray(1, 3));
    ws.send(new Blob(['ab', new Uint8Array([99])]));
    // 5 + 3 + 2 + 3 bytes: none written can be taken off before this handler returns
    if (ws.bufferedAmount !== 13) throw new Error('bufferedAmount ' + ws.bufferedAmount);
  };
  ws.onmessage = async (e) => {
    if (e.origin !== __ENV.URL || e.type !== 'message') throw new Error('message event ' + e.origin);
    const d = e.data;
    if (typeof d === 'string') got.push(d);
    else if (d instanceof Blob) got.push('blob:' + await d.text());
    else got.push('ab:' + Array.from(new Uint8Array(d)).join('.'));
    if (got.length === 2) ws.binaryType = 'arraybuffer';
    if (got.length === 4) ws.close();
  };
  ws.onclose = (e) => { closeCode = e.code; };
  await new Promise((resolve) => ws.addEventListener('close', resolve));
  // blob, blob, then arraybuffer: binaryType counts when a message arrives
  const want = 'hello,blob:\x01\x02\x03,ab:4.5,ab:97.98.99';
  if (got.join(',') !== want) throw new Error('got ' + JSON.stringify(got.join(',')));
  if (closeCode !== 1000 || ws.readyState !== 3 || ws.bufferedAmount !== 0) throw new Error('close ' + closeCode + ' ' + ws.readyState + ' ' + ws.bufferedAmount);
}`, map[string]string{"URL": wsURL(srv)})
			runWS(t, s, 3)
			checkWSCounts(t, s, wsCounts{sessions: 3, sent: 12, received: 12, durations: 3})
		})
	}
}

// The server closes with 4001 "bye": k6 gives an error event (a code
// other than 1000 and 1001), then the close event with the code and
// reason; nothing throws.
func TestWebSocketsServerCloses(t *testing.T) {
	srv := wsServer(t, func(c *websocket.Conn) {
		_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "bye"), time.Now().Add(time.Second))
		_, _, _ = c.ReadMessage() // until the client's answer
	})
	s := loadScript(t, `import { WebSocket } from 'k6/websockets';
export default function () {
  const ws = new WebSocket(__ENV.URL);
  const log = [];
  ws.onerror = (e) => log.push('error:' + (e.error.includes('4001') ? '4001' : e.error));
  ws.onclose = (e) => {
    log.push('close:' + e.code + ':' + e.reason + ':' + ws.readyState);
    if (log.join(',') !== 'error:4001,close:4001:bye:3') throw new Error(log.join(','));
  };
}`, map[string]string{"URL": wsURL(srv)})
	runWS(t, s, 2)
	checkWSCounts(t, s, wsCounts{sessions: 2, durations: 2})
}

// Pings both ways: the server's ping is answered and is a ping event;
// the script's ping is answered by the server (gorilla's default) and its
// pong is a pong event and one ws_ping. Two iterations: 2 pings.
func TestWebSocketsPings(t *testing.T) {
	srv := wsServer(t, func(c *websocket.Conn) {
		pongs := make(chan string, 1)
		c.SetPongHandler(func(d string) error { pongs <- d; return nil })
		_ = c.WriteControl(websocket.PingMessage, []byte("srv"), time.Now().Add(time.Second))
		echo(c)
	})
	s := loadScript(t, `import { WebSocket } from 'k6/websockets';
export default function () {
  const ws = new WebSocket(__ENV.URL);
  let ping = 0, pong = 0;
  const done = () => { if (ping === 1 && pong === 1) ws.close(); };
  ws.onopen = () => ws.ping();
  ws.onping = (e) => { if (e.type !== 'ping') throw new Error(e.type); ping++; done(); };
  ws.addEventListener('pong', () => { pong++; done(); });
}`, map[string]string{"URL": wsURL(srv)})
	runWS(t, s, 2)
	checkWSCounts(t, s, wsCounts{sessions: 2, durations: 2, pings: 2})
}

// Several listeners of one event run in k6's order: the on-handler first,
// then those added, in the order added; a null on-handler is unset.
func TestWebSocketsListeners(t *testing.T) {
	srv := wsServer(t, echo)
	n, first := runOnce(t, `import { WebSocket } from 'k6/websockets';
export default function () {
  const ws = new WebSocket('`+wsURL(srv)+`');
  const log = [];
  ws.addEventListener('message', () => log.push('a'));
  ws.onmessage = () => log.push('never');
  ws.onmessage = () => log.push('on');
  ws.addEventListener('message', () => log.push('b'));
  ws.onerror = () => log.push('never');
  ws.onerror = null;
  ws.onopen = () => ws.send('x');
  ws.addEventListener('message', () => ws.close());
  ws.onclose = () => { throw new Error('order ' + log.join(',') + ' ' + ws.onerror); };
}`)
	if n != 1 || !strings.Contains(first, "order on,a,b null") {
		t.Errorf("%d errors, first %q; want the close handler's 'order on,a,b null'", n, first)
	}
}

// N sockets opened in one iteration and closed by a timer: the iteration
// ends when all N have closed, so right after it each of its sessions
// has its ws_session_duration; N messages sent and echoed per iteration.
func TestWebSocketsManySocketsClosedByATimer(t *testing.T) {
	const n, iters = 4, 3
	srv := wsServer(t, echo)
	s := loadScript(t, `import { WebSocket } from 'k6/websockets';
export default function () {
  const all = [];
  let echoed = 0;
  for (let i = 0; i < 4; i++) {
    const ws = new WebSocket(__ENV.URL);
    ws.onopen = () => ws.send('m' + i);
    ws.onmessage = () => echoed++;
    all.push(ws);
  }
  // a timer closes them all once every echo is back (it looks again
  // every 20 ms), so the counts never hang on the machine's speed
  const closeAll = () => {
    if (echoed < all.length) { setTimeout(closeAll, 20); return; }
    all.forEach((ws) => ws.close());
  };
  setTimeout(closeAll, 20);
}`, map[string]string{"URL": wsURL(srv)})
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	got := &trendSamples{trends: map[string]int{}}
	for i := 0; i < iters; i++ {
		it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Iter: uint64(i), Called: time.Now()}, got)
		if st, _ := s.k6.Stat(k6metric.WSSessionDuration); st.Count != int64(n*(i+1)) {
			t.Fatalf("after iteration %d: %d sessions ended, want %d", i, st.Count, n*(i+1))
		}
	}
	if e, first := s.IterationErrors(); e != 0 {
		t.Fatalf("%d errors: %s", e, first)
	}
	// each socket sends one message and gets its echo before the timer closes it
	checkWSCounts(t, s, wsCounts{sessions: n * iters, sent: n * iters, received: n * iters, durations: n * iters})
	// the time Trends also reach the run's records, as an import of k6's output has them
	want := map[string]int{"x/" + k6metric.WSConnecting: n * iters, "x/" + k6metric.WSSessionDuration: n * iters}
	if !maps.Equal(got.trends, want) {
		t.Errorf("trend values %v, want %v", got.trends, want)
	}
}

// trendSamples counts the Trend values recorded, by scenario/name.
type trendSamples struct {
	samples
	trends map[string]int
}

func (s *trendSamples) RecordTrend(scenario, name string, _ time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trends[scenario+"/"+name]++
}

// An exception in a message handler ends the iteration with it (an
// iteration error each time), closing the socket, and so does an async
// handler's rejection (k6's "Uncaught (in promise)", though the socket
// would stay open); a WebSocket's misuse
// throws with k6's messages; a refused handshake is an error event then a
// close event, not an exception.
func TestWebSocketsErrors(t *testing.T) {
	srv := wsServer(t, echo)
	url := wsURL(srv)
	plain := "ws" + strings.TrimPrefix(okServer(t).URL, "http") // answers 200: no upgrade
	for _, tc := range []struct {
		name, body, want string
	}{
		{"throw in onmessage", `const ws = new WebSocket('` + url + `'); ws.onopen = () => ws.send('x'); ws.onmessage = () => { throw new Error('boom'); };`, "Error: boom"},
		{"async onmessage rejects", `const ws = new WebSocket('` + url + `'); ws.onopen = () => ws.send('x'); ws.onmessage = async () => { throw new Error('later'); };`, "Uncaught (in promise) Error: later"},
		{"scheme", `new WebSocket('http://localhost/');`, `WebSocket requires url with scheme ws or wss, but got "http"`},
		{"fragment", `new WebSocket('ws://localhost/#x');`, `WebSocket requires no url fragment, but got "x"`},
		{"unknown option", `new WebSocket('` + url + `', null, { timeout: 1 });`, "unknown WebSocket's option timeout"},
		{"compression", `new WebSocket('` + url + `', null, { compression: 'gzip' });`, "unsupported compression algorithm 'gzip', supported algorithm is 'deflate'"},
		{"send before open", `new WebSocket('` + url + `').send('x');`, "InvalidStateError"},
		{"close code", `const ws = new WebSocket('` + url + `'); ws.onopen = () => ws.close(1001);`, "The close code must be either 1000, or between 3000 and 4999. 1001 is neither"},
		{"binaryType", `new WebSocket('` + url + `').binaryType = 'text';`, `unknown binaryType text, the supported ones are "blob" and "arraybuffer"`},
		{"not callable", `new WebSocket('` + url + `').onopen = 3;`, "a value for 'onopen' should be callable"},
		{"refused handshake", `const ws = new WebSocket('` + plain + `/', null); const log = [];
ws.onerror = (e) => log.push('error:' + e.error); ws.onclose = (e) => { throw new Error('then ' + log.join() + ' close ' + e.code); };`,
			"then error:websocket: bad handshake close undefined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, first := runOnce(t, `import { WebSocket } from 'k6/websockets';
export default function () { `+tc.body+` }`)
			if n != 1 || !strings.Contains(first, tc.want) {
				t.Errorf("%d errors, first %q; want one with %q", n, first, tc.want)
			}
		})
	}
}

// The run's end closes an open socket at once: the server reads the close
// frame (1000) and the iteration is interrupted, not an error. The run
// ends once the socket is open (the server has read its first message).
func TestWebSocketsStopWithTheRun(t *testing.T) {
	ready, closed := make(chan struct{}), make(chan int, 1)
	srv := wsServer(t, func(c *websocket.Conn) {
		if _, _, err := c.ReadMessage(); err != nil {
			closed <- -2
			return
		}
		close(ready)
		_, _, err := c.ReadMessage()
		code := -1
		if ce, ok := err.(*websocket.CloseError); ok {
			code = ce.Code
		}
		closed <- code
	})
	s := loadScript(t, `import { WebSocket } from 'k6/websockets';
export default function () { const ws = new WebSocket(__ENV.URL); ws.onopen = () => ws.send('ready'); }`,
		map[string]string{"URL": wsURL(srv)})
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-ready:
			cancel()
		case <-ctx.Done():
		}
	}()
	var got samples
	it.DoRecord(ctx, load.Start{Scenario: "x", VU: 1, Called: time.Now()}, &got)
	select {
	case code := <-closed:
		if code != websocket.CloseNormalClosure {
			t.Errorf("the server read close code %d, want 1000", code)
		}
	case <-time.After(10 * time.Second): // a bound on a hang, not a timing
		t.Fatal("the socket stayed open after the run's end")
	}
	if n, first := s.IterationErrors(); n != 0 || s.Iterations() != 0 {
		t.Errorf("%d errors (%q), %d iterations; want one interrupted", n, first, s.Iterations())
	}
}

// Blob as k6/websockets has it: parts joined, size, type, text,
// arrayBuffer, bytes, slice with negative indexes.
func TestWebSocketsBlob(t *testing.T) {
	n, first := runOnce(t, `import { Blob } from 'k6/websockets';
export default async function () {
  const b = new Blob(['ab', new Uint8Array([99, 100]).buffer, new Blob(['e'])], { type: 'text/plain' });
  const got = [b.size, b.type, await b.text(), new Uint8Array(await b.arrayBuffer()).join('.'),
    (await b.bytes()).length, await b.slice(1, -1).text(), await b.slice(-2).text(), b.slice(3, 1).size, String(b)];
  throw new Error('got ' + got.join('|'));
}`)
	want := "got 5|text/plain|abcde|97.98.99.100.101|5|bcd|de|0|[object Object]"
	if n != 1 || !strings.Contains(first, want) {
		t.Errorf("%d errors, first %q; want %q", n, first, want)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// k6's CSV and JSON outputs carry the ws_* samples with k6's tags: one
// session of 2 messages each way is ws_sessions 1, ws_connecting 1,
// ws_msgs_sent 2, ws_msgs_received 2, ws_session_duration 1, each with
// url, status 101, the scenario and the custom tag (in the CSV's
// extra_tags), from k6/websockets and from k6/ws alike; k6/websockets
// also tags name (the URL), k6/ws does not.
func TestWebSocketsK6Output(t *testing.T) {
	srv := wsServer(t, echo)
	url := wsURL(srv)
	for _, mod := range []struct{ name, src, tagName string }{
		{"k6/websockets", `import { WebSocket } from 'k6/websockets';
export default function () {
  const ws = new WebSocket(__ENV.URL, null, { tags: { team: 'a' } });
  let n = 0;
  ws.onopen = () => { ws.send('1'); ws.send('2'); };
  ws.onmessage = () => { if (++n === 2) ws.close(); };
}`, url},
		{"k6/ws", `import ws from 'k6/ws';
export default function () {
  ws.connect(__ENV.URL, { tags: { team: 'a' } }, (s) => {
    let n = 0;
    s.on('open', () => { s.send('1'); s.send('2'); });
    s.on('message', () => { if (++n === 2) s.close(); });
  });
}`, ""},
	} {
		testK6Output(t, mod.name, mod.src, url, mod.tagName)
	}
}

func testK6Output(t *testing.T, mod, src, url, tagName string) {
	want := map[string]int{k6metric.WSSessions: 1, k6metric.WSConnecting: 1, k6metric.WSMsgsSent: 2,
		k6metric.WSMsgsReceived: 2, k6metric.WSSessionDuration: 1}
	for _, format := range []string{"csv", "json"} {
		t.Run(mod+"/"+format, func(t *testing.T) {
			s := loadScript(t, src, map[string]string{"URL": url})
			var buf bytes.Buffer
			o := NewCSVOutput(nopCloser{&buf})
			if format == "json" {
				o = NewJSONOutput(nopCloser{&buf})
			}
			s.SetOutput(o)
			runWS(t, s, 1)
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			declared := map[string]bool{}
			check := func(metric string, tags map[string]string) {
				if !strings.HasPrefix(metric, "ws_") {
					return
				}
				got[metric]++
				if tags["url"] != url || tags["name"] != tagName || tags["status"] != "101" || tags["scenario"] != "x" || tags["team"] != "a" {
					t.Errorf("%s: tags %v", metric, tags)
				}
			}
			if format == "csv" {
				rows, err := csv.NewReader(&buf).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows[1:] {
					tags := map[string]string{}
					for i, col := range rows[0][3:] {
						tags[col] = r[i+3]
					}
					for _, kv := range strings.Split(tags["extra_tags"], "&") {
						k, v, _ := strings.Cut(kv, "=")
						tags[k] = v
					}
					check(r[0], tags)
				}
			} else {
				for _, p := range jsonLines(t, buf.String()) {
					if p.Type == "Metric" {
						declared[p.Metric] = true
						continue
					}
					if strings.HasPrefix(p.Metric, "ws_") && !declared[p.Metric] {
						t.Errorf("%s: a Point before its Metric line", p.Metric)
					}
					check(p.Metric, p.Data.Tags)
				}
			}
			for m, n := range want {
				if got[m] != n {
					t.Errorf("%s: %d rows, want %d", m, got[m], n)
				}
			}
		})
	}
}

// A k6/websockets session's name and url are a name tag set in the
// params or in the VU's tags (options.tags), else its URL: k6 v1.8.1
// internal/js/modules/k6/websockets/websockets.go reads the session's
// tags, the VU's included.
func TestWebSocketsNameTagFromEveryLevel(t *testing.T) {
	srv := wsServer(t, echo)
	url := wsURL(srv)
	for _, tt := range []struct {
		name, options, params, want string
	}{
		{"the URL", "{}", "{}", url},
		{"options.tags", "{ tags: { name: 'o' } }", "{}", "o"},
		{"the params over options.tags", "{ tags: { name: 'o' } }", "{ tags: { name: 'p' } }", "p"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadScript(t, `import { WebSocket } from 'k6/websockets';
export const options = `+tt.options+`;
export default function () {
  const ws = new WebSocket(__ENV.URL, null, `+tt.params+`);
  ws.onopen = () => ws.close();
}`, map[string]string{"URL": url})
			keys := []string{"ws_sessions{name:" + tt.want + "}", "ws_sessions{url:" + tt.want + "}"}
			all := map[string][]string{}
			for _, k := range keys {
				all[k] = []string{"count>=0"}
			}
			if _, _, err := s.SplitThresholds(all); err != nil {
				t.Fatal(err)
			}
			runWS(t, s, 1)
			for _, k := range keys {
				if n, _ := k6Count(t, s, k); n != 1 {
					t.Errorf("%s count %d; want 1", k, n)
				}
			}
		})
	}
}
