package k6script

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/gorilla/websocket"

	"github.com/knee-dev/knee/k6metric"
)

// wsModule is "k6/ws": ws.connect(url, [params], callback), k6's blocking
// WebSocket API (k6's internal/js/modules/k6/ws). The callback gets the
// Socket and sets its handlers; connect then runs the socket's loop on the
// VU's goroutine (every handler, timer and message in turn) and returns
// the Response once the socket closes, or when the run stops.
func wsModule(v *vu) *goja.Object {
	o := v.rt.NewObject()
	must(o.Set("connect", v.wsConnect))
	return o
}

// wsWriteWait bounds a control frame's write (ping, pong, close), as k6's.
const wsWriteWait = 10 * time.Second

// wsHandshakeTimeout bounds the dial and upgrade, as k6's.
const wsHandshakeTimeout = 60 * time.Second

// wsDialer dials a WebSocket handshake of k6/ws or k6/websockets as k6
// does: its timeout, the environment's proxy, the cookie jar given, and
// unverified TLS only when the script asks for it (over HTTP/1.1, as the
// upgrade needs).
func (v *vu) wsDialer(jar http.CookieJar) websocket.Dialer {
	d := websocket.Dialer{HandshakeTimeout: wsHandshakeTimeout, Proxy: http.ProxyFromEnvironment, Jar: jar}
	if v.s.Options.InsecureSkipTLSVerify {
		d.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}
	}
	return d
}

// wsEvent is what the read goroutine hands the loop, in the order read.
type wsEvent struct {
	kind  string // message, ping, pong, error, close
	mtype int    // message: websocket.TextMessage or BinaryMessage
	data  []byte // message, ping: the payload; pong: the ping's id
	err   error  // error
	code  int    // close: the close code
}

// wsSocket is one ws.connect's socket. Only the VU's goroutine touches it,
// but for done and the channels.
type wsSocket struct {
	v         *vu
	conn      *websocket.Conn
	obj       *goja.Object
	handlers  map[string][]goja.Callable
	events    chan wsEvent
	scheduled chan goja.Callable // socket.setTimeout's and setInterval's, when due
	done      chan struct{}      // closed once the socket is closed
	closeOnce sync.Once
	quiet     bool  // the run stopped: close without calling handlers
	thrown    error // a handler's exception: connect rethrows it
	pings     map[string]time.Time
	pingN     int
	record    func(...k6Point) // into the k6 metrics, with the session's tags
}

// wsConnect is ws.connect(url, [params], callback).
func (v *vu) wsConnect(call goja.FunctionCall) goja.Value {
	rt := v.rt
	if v.init {
		panic(rt.NewGoError(errors.New("ws.connect in the init code: k6 allows WebSockets only in functions (default, setup, teardown)")))
	}
	rawURL := call.Argument(0).String()
	var params, fnV goja.Value
	switch len(call.Arguments) {
	case 3:
		params, fnV = call.Argument(1), call.Argument(2)
	case 2:
		fnV = call.Argument(1)
	default:
		panic(rt.NewGoError(errors.New("invalid number of arguments to ws.connect")))
	}
	setup, ok := goja.AssertFunction(fnV)
	if !ok {
		panic(rt.NewGoError(errors.New("last argument to ws.connect must be a function")))
	}
	header := http.Header{"User-Agent": {v.s.userAgent()}}
	d := v.wsDialer(v.vuJar().jar)
	var custom map[string]string
	if p, ok := params.(*goja.Object); ok && !goja.IsNull(params) {
		if h, ok := p.Get("headers").(*goja.Object); ok {
			for _, k := range h.Keys() {
				header.Set(k, h.Get(k).String())
			}
		}
		custom = v.mustTags(p.Get("tags"), "invalid ws.connect() metric tags")
		if jo, ok := p.Get("jar").(*goja.Object); ok {
			if j, ok := v.jars[jo]; ok {
				d.Jar = j.jar
			}
		}
		if c := p.Get("compression"); c != nil && !goja.IsUndefined(c) && !goja.IsNull(c) {
			switch algo := strings.TrimSpace(c.String()); algo {
			case "":
			case "deflate":
				d.EnableCompression = true
			default:
				panic(rt.NewGoError(fmt.Errorf("unsupported compression algorithm '%s', supported algorithm is 'deflate'", algo)))
			}
		}
	}

	// k6 tags a session's metrics with the VU's tags, the params' tags,
	// url, and the handshake's status and subprotocol.
	scenario, group := "", v.group
	if v.shard != nil {
		scenario = v.st.Scenario
	}
	system := map[string]string{"url": rawURL}
	tags := func() map[string]string {
		t := v.tagsFor(scenario, group)
		for k, x := range custom {
			t[k] = x
		}
		for k, x := range system {
			t[k] = x
		}
		return t
	}
	ctx := v.ctx
	record := v.wsRecorder(ctx, group, tags) // k6 drops a stopped VU's samples (PushIfNotDone)

	start := time.Now()
	conn, resp, err := d.DialContext(ctx, rawURL, header)
	connected := time.Now()
	if resp != nil {
		system["status"] = strconv.Itoa(resp.StatusCode)
		system["subproto"] = resp.Header.Get("Sec-WebSocket-Protocol")
	}
	record(k6Point{k6metric.WSSessions, 1}, k6Point{k6metric.WSConnecting, ms(connected.Sub(start))})
	defer func() {
		record(k6Point{k6metric.WSSessionDuration, ms(time.Since(start))})
	}()
	if err != nil {
		if v.s.Options.Throw && ctx.Err() == nil {
			panic(rt.NewGoError(err))
		}
		if resp == nil {
			return v.wsResponse(rawURL, nil, err)
		}
		// k6 returns the refused handshake's response, without its URL
		// and without an error (throw: true makes it throw).
		return v.wsResponse("", resp, nil)
	}
	s := &wsSocket{v: v, conn: conn, handlers: map[string][]goja.Callable{}, events: make(chan wsEvent),
		scheduled: make(chan goja.Callable), done: make(chan struct{}), pings: map[string]time.Time{},
		record: record}
	// The run's end unblocks whatever waits on the connection.
	defer context.AfterFunc(ctx, func() { conn.Close() })()
	defer s.closeConnection(websocket.CloseGoingAway)

	_, err = setup(goja.Undefined(), s.object())
	if err != nil {
		s.quiet = true
		panic(err)
	}
	res := v.wsResponse(rawURL, resp, nil)
	s.emit("open")
	s.loop(ctx)
	if s.thrown != nil {
		panic(s.thrown)
	}
	return res
}

// loop runs the socket's events on the VU's goroutine until it closes.
func (s *wsSocket) loop(ctx context.Context) {
	conn := s.conn
	// The handlers run in the read goroutine: hand pings and pongs to
	// the loop, in order with the messages (gorilla's default ping
	// handler would answer, but k6 answers in its loop and emits ping).
	conn.SetCloseHandler(func(int, string) error { return nil })
	conn.SetPingHandler(func(data string) error { s.send(wsEvent{kind: "ping", data: []byte(data)}); return nil })
	conn.SetPongHandler(func(data string) error { s.send(wsEvent{kind: "pong", data: []byte(data)}); return nil })
	go s.read()
	for {
		select {
		case e := <-s.events:
			switch e.kind {
			case "ping":
				if err := conn.WriteControl(websocket.PongMessage, e.data, time.Now().Add(wsWriteWait)); err != nil {
					s.emitError(err)
				}
				s.emit("ping")
			case "pong":
				if sent, ok := s.pings[string(e.data)]; ok {
					s.record(k6Point{k6metric.WSPing, ms(time.Since(sent))})
				}
				s.emit("pong")
			case "message":
				s.record(k6Point{k6metric.WSMsgsReceived, 1})
				if e.mtype == websocket.BinaryMessage {
					s.emit("binaryMessage", s.v.rt.ToValue(s.v.rt.NewArrayBuffer(e.data)))
				} else {
					s.emit("message", s.v.rt.ToValue(string(e.data)))
				}
			case "error":
				s.emitError(e.err)
			case "close":
				s.closeConnection(e.code)
			}
		case fn := <-s.scheduled:
			if _, err := fn(goja.Undefined()); err != nil {
				s.fail(err)
			}
		case <-ctx.Done():
			// The runtime is interrupted: no handler can run.
			s.quiet = true
			s.closeConnection(websocket.CloseGoingAway)
		case <-s.done:
			return
		}
	}
}

// send hands the loop an event, unless the socket is closed.
func (s *wsSocket) send(e wsEvent) {
	select {
	case s.events <- e:
	case <-s.done:
	}
}

// read reads messages until the connection fails or closes, as k6's
// readPump: an unexpected close is an error event, then every end of the
// connection is a close event with its code (1001 when it has none).
func (s *wsSocket) read() {
	for {
		mtype, data, err := s.conn.ReadMessage()
		if err != nil {
			if websocket.IsUnexpectedCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
				s.send(wsEvent{kind: "error", err: err})
			}
			code := websocket.CloseGoingAway
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				code = ce.Code
			}
			s.send(wsEvent{kind: "close", code: code})
			return
		}
		s.send(wsEvent{kind: "message", mtype: mtype, data: data})
	}
}

// emit calls event's handlers; the first exception closes the socket and
// ends ws.connect with it, as in k6.
func (s *wsSocket) emit(event string, args ...goja.Value) {
	if s.quiet {
		return
	}
	for _, h := range s.handlers[event] {
		if _, err := h(goja.Undefined(), args...); err != nil {
			s.fail(err)
			return
		}
	}
}

// fail keeps a handler's exception and closes the socket without calling
// more handlers; ws.connect rethrows it.
func (s *wsSocket) fail(err error) {
	if s.thrown == nil {
		s.thrown = err
	}
	s.quiet = true
	s.closeConnection(websocket.CloseGoingAway)
}

// emitError calls the error handlers with an object whose error() is the
// message, as k6's Go error value gives scripts.
func (s *wsSocket) emitError(err error) {
	rt := s.v.rt
	o := rt.NewObject()
	msg := err.Error()
	must(o.Set("error", func() string { return msg }))
	must(o.Set("toString", func() string { return msg }))
	s.emit("error", o)
}

// closeConnection sends a close frame with code, calls the close handlers
// with it and closes the connection, once.
func (s *wsSocket) closeConnection(code int) {
	s.closeOnce.Do(func() {
		defer func() {
			s.conn.Close()
			close(s.done)
		}()
		err := s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(wsWriteWait))
		if err != nil {
			s.emitError(err)
		}
		s.emit("close", s.v.rt.ToValue(code))
	})
}

// object is the Socket as the script sees it.
func (s *wsSocket) object() *goja.Object {
	rt := s.v.rt
	o := rt.NewObject()
	must(o.Set("on", func(event string, h goja.Value) {
		if fn, ok := goja.AssertFunction(h); ok {
			s.handlers[event] = append(s.handlers[event], fn)
		}
	}))
	must(o.Set("send", func(msg string) {
		if err := s.conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			s.emitError(err)
		}
		s.record(k6Point{k6metric.WSMsgsSent, 1}) // counted even when it failed, as in k6
	}))
	must(o.Set("sendBinary", func(msg goja.Value) {
		ab, ok := msg.Export().(goja.ArrayBuffer)
		if !ok {
			panic(rt.NewTypeError(fmt.Sprintf("sendBinary: expected an ArrayBuffer, received %s", jsTypeName(rt, msg))))
		}
		if err := s.conn.WriteMessage(websocket.BinaryMessage, ab.Bytes()); err != nil {
			s.emitError(err)
		}
		s.record(k6Point{k6metric.WSMsgsSent, 1})
	}))
	must(o.Set("ping", func() {
		id := strconv.Itoa(s.pingN)
		if err := s.conn.WriteControl(websocket.PingMessage, []byte(id), time.Now().Add(wsWriteWait)); err != nil {
			s.emitError(err)
			return
		}
		s.pings[id] = time.Now()
		s.pingN++
	}))
	must(o.Set("close", func(call goja.FunctionCall) {
		code := websocket.CloseGoingAway
		if len(call.Arguments) > 0 {
			code = int(call.Argument(0).ToInteger())
		}
		s.closeConnection(code)
	}))
	must(o.Set("setTimeout", func(fn goja.Callable, delayMs float64) {
		s.schedule(fn, delayMs, "setTimeout", false)
	}))
	must(o.Set("setInterval", func(fn goja.Callable, intervalMs float64) {
		s.schedule(fn, intervalMs, "setInterval", true)
	}))
	return o
}

// schedule hands fn to the loop after ms milliseconds (every ms, with
// repeat) until the socket closes: socket.setTimeout and setInterval.
func (s *wsSocket) schedule(fn goja.Callable, ms float64, name string, repeat bool) {
	d := time.Duration(ms * float64(time.Millisecond))
	if d <= 0 {
		panic(s.v.rt.NewGoError(fmt.Errorf("%s requires a >0 timeout parameter, received %.2f", name, ms)))
	}
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				select {
				case s.scheduled <- fn:
				case <-s.done:
					return
				}
				if !repeat {
					return
				}
			case <-s.done:
				return
			}
		}
	}()
}

// jsTypeName is a value's type as k6's messages name it: null, undefined
// or its constructor's name.
func jsTypeName(rt *goja.Runtime, val goja.Value) string {
	if val == nil || goja.IsUndefined(val) || goja.IsNull(val) {
		if val == nil {
			return "undefined"
		}
		return val.String()
	}
	if c, ok := val.ToObject(rt).Get("constructor").(*goja.Object); ok {
		return c.Get("name").String()
	}
	return val.ExportType().String()
}

// wsResponse is ws.connect's Response: url, status, headers (each a
// string, values joined by ", "), body and error, as k6 gives it.
func (v *vu) wsResponse(rawURL string, resp *http.Response, err error) goja.Value {
	rt := v.rt
	o := rt.NewObject()
	must(o.Set("url", rawURL))
	status, body, headers := 0, "", rt.NewObject()
	if resp != nil {
		status = resp.StatusCode
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20)) // gorilla keeps up to 1 KiB of a refused handshake's body
		resp.Body.Close()
		body = string(b)
		for k, vals := range resp.Header {
			must(headers.Set(k, strings.Join(vals, ", ")))
		}
	}
	must(o.Set("status", status))
	must(o.Set("headers", headers))
	must(o.Set("body", body))
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	must(o.Set("error", msg))
	return o
}
