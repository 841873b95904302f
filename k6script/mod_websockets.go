package k6script

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/gorilla/websocket"

	"github.com/knee-dev/knee/k6metric"
)

// websocketsModule is "k6/websockets" (and its old name
// "k6/experimental/websockets"): the WebSocket class and Blob, as k6 v1.8.1
// has them (its internal/js/modules/k6/websockets). Unlike k6/ws nothing
// blocks: the constructor starts the handshake on another goroutine and
// every event runs later on the VU's goroutine through its event loop
// (loop.go), so the call that opened a socket ends once every socket it
// opened has closed.
func websocketsModule(v *vu) *goja.Object {
	m := &wsAPI{v: v, blobKey: goja.NewSymbol("blob")}
	o := v.rt.NewObject()
	m.blobCtor = v.rt.ToValue(m.newBlob).(*goja.Object)
	must(o.Set("WebSocket", m.newWebSocket))
	must(o.Set("Blob", m.blobCtor))
	return o
}

// wsAPI is one VU's k6/websockets.
type wsAPI struct {
	v        *vu
	blobCtor *goja.Object
	blobKey  *goja.Symbol // where a Blob object keeps its bytes
}

// The WebSocket's readyState values, the WHATWG spec's as k6 has them.
const (
	wsConnecting = iota
	wsOpen
	wsClosing
	wsClosed
)

// wsEvents are the event types a WebSocket has listeners for.
var wsEvents = []string{"open", "message", "error", "close", "ping", "pong"}

// webSocket is one WebSocket. The fields the script sees (readyState,
// bufferedAmount, binaryType, protocol, the close code and reason) are
// touched only on the VU's goroutine; the goroutines reach it through
// tq, which runs their tasks there.
type webSocket struct {
	api  *wsAPI
	obj  *goja.Object
	url  *url.URL
	ctx  context.Context // the call's: its end closes the socket
	tq   *wsQueue
	conn *websocket.Conn
	done chan struct{} // closed (on the VU's goroutine) when the socket is closed

	on        map[string]goja.Value      // the on<event> handler, or nil
	listeners map[string][]goja.Callable // addEventListener's, in order

	readyState     int
	bufferedAmount int
	binaryType     string
	protocol       string
	extensions     []string
	closeCode      int
	closeReason    string
	pingN          int
	pings          map[string]time.Time // ping id -> when sent (VU goroutine)

	writes  chan struct{} // wakes the writer
	wmu     sync.Mutex
	outbox  []wsOut // messages to write, in order
	started time.Time
	record  func(...k6Point)
}

// wsOut is one frame for the writer.
type wsOut struct {
	mtype int
	data  []byte
}

// wsParams are the constructor's params, as k6 reads them.
type wsParams struct {
	header      http.Header
	jar         http.CookieJar
	tags        map[string]string
	compression bool
	protocols   []string
}

// newWebSocket is new WebSocket(url, [protocols], [params]).
func (m *wsAPI) newWebSocket(call goja.ConstructorCall) *goja.Object {
	v, rt := m.v, m.v.rt
	if v.init {
		panic(rt.NewGoError(errors.New("WebSocket in the init code: k6 allows WebSockets only in functions (default, setup, teardown)")))
	}
	u, err := wsParseURL(call.Argument(0))
	if err != nil {
		panic(rt.NewGoError(err))
	}
	p, err := m.params(call.Argument(2))
	if err != nil {
		panic(rt.NewGoError(err))
	}
	if pa := call.Argument(1); !goja.IsUndefined(pa) && !goja.IsNull(pa) {
		switch x := pa.Export().(type) {
		case string:
			p.protocols = append(p.protocols, x)
		case []any:
			for _, e := range x {
				p.protocols = append(p.protocols, fmt.Sprint(e))
			}
		}
	}
	w := &webSocket{api: m, obj: rt.NewObject(), url: u, ctx: v.loop.context(), done: make(chan struct{}),
		on: map[string]goja.Value{}, listeners: map[string][]goja.Callable{}, binaryType: "blob",
		pings: map[string]time.Time{}, writes: make(chan struct{}, 1)}
	w.tq = newWSQueue(v.loop.register)
	w.define()

	// k6 tags a session's metrics with the VU's tags, the params' tags,
	// url and name (the URL, or a name tag set in the params or the VU's
	// tags, as both: websockets.go reads the session's tags), status and
	// subproto (set by the handshake).
	scenario, group := "", v.group
	if v.shard != nil {
		scenario = v.st.Scenario
	}
	var status, subproto *string
	w.record = v.wsRecorder(w.ctx, group, func() map[string]string {
		t := v.tagsFor(scenario, group)
		for k, x := range p.tags {
			t[k] = x
		}
		if name, ok := t["name"]; ok {
			t["url"] = name
		} else {
			t["url"], t["name"] = u.String(), u.String()
		}
		if status != nil {
			t["status"], t["subproto"] = *status, *subproto
		}
		return t
	})
	go w.establish(p, func(s, sp string) { status, subproto = &s, &sp })
	return w.obj
}

// wsParseURL checks the URL as k6 does: ws or wss, no fragment.
func wsParseURL(val goja.Value) (*url.URL, error) {
	if val == nil || goja.IsUndefined(val) || goja.IsNull(val) {
		return nil, errors.New("WebSocket requires a url")
	}
	s := val.String()
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("WebSocket requires valid url, but got %q which resulted in %w", s, err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, fmt.Errorf("WebSocket requires url with scheme ws or wss, but got %q", u.Scheme)
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("WebSocket requires no url fragment, but got %q", u.Fragment)
	}
	return u, nil
}

// params reads headers, tags, jar and compression; any other key is an
// error, as in k6.
func (m *wsAPI) params(raw goja.Value) (*wsParams, error) {
	v := m.v
	p := &wsParams{header: http.Header{"User-Agent": {v.s.userAgent()}}, jar: v.vuJar().jar}
	if raw == nil || goja.IsUndefined(raw) || goja.IsNull(raw) {
		return p, nil
	}
	o := raw.ToObject(v.rt)
	for _, k := range o.Keys() {
		val := o.Get(k)
		nullish := val == nil || goja.IsUndefined(val) || goja.IsNull(val)
		switch k {
		case "headers":
			if h, ok := val.(*goja.Object); ok && !nullish {
				for _, hk := range h.Keys() {
					p.header.Set(hk, h.Get(hk).String())
				}
			}
		case "tags":
			tags, err := tagsArg(val)
			if err != nil {
				return nil, fmt.Errorf("invalid WebSocket tags option: %w", err)
			}
			p.tags = tags
		case "jar":
			if jo, ok := val.(*goja.Object); ok && !nullish {
				if j, ok := v.jars[jo]; ok {
					p.jar = j.jar
				}
			}
		case "compression":
			if algo := strings.TrimSpace(val.String()); algo != "deflate" {
				return nil, fmt.Errorf("unsupported compression algorithm '%s', supported algorithm is 'deflate'", algo)
			}
			p.compression = true
		default:
			return nil, fmt.Errorf("unknown WebSocket's option %s", k)
		}
	}
	return p, nil
}

// define sets the WebSocket's methods and properties on its object.
func (w *webSocket) define() {
	rt := w.api.v.rt
	o := w.obj
	method := func(name string, fn any) {
		must(o.DefineDataProperty(name, rt.ToValue(fn), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	}
	getter := func(name string, get func() any) {
		must(o.DefineAccessorProperty(name, rt.ToValue(get), nil, goja.FLAG_FALSE, goja.FLAG_TRUE))
	}
	method("addEventListener", w.addEventListener)
	method("send", w.send)
	method("ping", w.ping)
	method("close", w.close)
	must(o.DefineDataProperty("url", rt.ToValue(w.url.String()), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	getter("readyState", func() any { return w.readyState })
	getter("bufferedAmount", func() any { return w.bufferedAmount })
	getter("extensions", func() any { return w.extensions })
	getter("protocol", func() any { return w.protocol })
	must(o.DefineAccessorProperty("binaryType", rt.ToValue(func() any { return w.binaryType }),
		rt.ToValue(func(s string) error {
			if s != "blob" && s != "arraybuffer" {
				return fmt.Errorf(`unknown binaryType %s, the supported ones are "blob" and "arraybuffer"`, s)
			}
			w.binaryType = s
			return nil
		}), goja.FLAG_FALSE, goja.FLAG_TRUE))
	for _, ev := range wsEvents {
		prop := "on" + ev
		must(o.DefineAccessorProperty(prop, rt.ToValue(func() goja.Value {
			if h := w.on[ev]; h != nil {
				return h
			}
			return goja.Null()
		}), rt.ToValue(func(h goja.Value) {
			if h == nil || goja.IsUndefined(h) || goja.IsNull(h) {
				delete(w.on, ev) // null unsets it
				return
			}
			if _, ok := goja.AssertFunction(h); !ok {
				panic(rt.NewGoError(fmt.Errorf("a value for '%s' should be callable", prop)))
			}
			w.on[ev] = h
		}), goja.FLAG_FALSE, goja.FLAG_TRUE))
	}
}

// addEventListener(type, handler): several per type, after the on<type>
// handler; an unknown type is warned about and ignored, as in k6.
func (w *webSocket) addEventListener(event string, h goja.Value) {
	v := w.api.v
	fn, ok := goja.AssertFunction(h)
	if !ok {
		panic(v.rt.NewGoError(fmt.Errorf("handler for event type %q isn't a callable function", event)))
	}
	for _, e := range wsEvents {
		if e == event {
			w.listeners[event] = append(w.listeners[event], fn)
			return
		}
	}
	v.s.con.line("warn", "can't add event handler: unknown event type: "+event)
}

// emit calls event's handlers (on<event> first) with ev; the first
// exception stops it and is returned.
func (w *webSocket) emit(event string, ev *goja.Object) error {
	var fns []goja.Callable
	if h := w.on[event]; h != nil {
		fn, _ := goja.AssertFunction(h)
		fns = append(fns, fn)
	}
	for _, fn := range append(fns, w.listeners[event]...) {
		if _, err := fn(goja.Undefined(), ev); err != nil {
			return err
		}
	}
	return nil
}

// event is an event object as k6 gives it: type, target, timestamp (ms).
func (w *webSocket) event(typ string, at time.Time) *goja.Object {
	rt := w.api.v.rt
	o := rt.NewObject()
	ro := func(name string, val any) {
		must(o.DefineDataProperty(name, rt.ToValue(val), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	}
	ro("type", typ)
	ro("target", w.obj)
	ro("timestamp", float64(at.UnixNano())/1e6)
	return o
}

// emitError calls the error handlers with an event whose error is err's text.
func (w *webSocket) emitError(err error) error {
	ev := w.event("error", time.Now())
	must(ev.DefineDataProperty("error", w.api.v.rt.ToValue(err.Error()), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	return w.emit("error", ev)
}

// establish dials and upgrades (on its own goroutine), records
// ws_sessions and ws_connecting as k6 does (a failed handshake too), and
// hands the outcome to the VU's goroutine.
func (w *webSocket) establish(p *wsParams, setTags func(status, subproto string)) {
	v := w.api.v
	d := v.wsDialer(p.jar)
	d.EnableCompression, d.Subprotocols = p.compression, p.protocols
	w.started = time.Now()
	conn, resp, err := d.DialContext(w.ctx, w.url.String(), p.header)
	took := time.Since(w.started)
	var protocol string
	var extensions []string
	if resp != nil {
		resp.Body.Close()
		if conn != nil {
			protocol = conn.Subprotocol()
		}
		extensions = resp.Header.Values("Sec-WebSocket-Extensions")
		setTags(strconv.Itoa(resp.StatusCode), protocol)
	}
	w.record(k6Point{k6metric.WSSessions, 1}, k6Point{k6metric.WSConnecting, ms(took)})
	if err != nil {
		w.tq.queue(func() error { return w.closed(err) })
		w.tq.close()
		return
	}
	w.conn = conn
	w.tq.queue(func() error {
		w.protocol, w.extensions = protocol, extensions
		if w.readyState != wsConnecting {
			return nil
		}
		w.readyState = wsOpen
		return w.emitOrClose("open", w.event("open", time.Now()))
	})
	w.run()
}

// emitOrClose emits event; an exception closes the socket (its error and
// close events run) and ends the call with it, as k6 does for open and
// message handlers.
func (w *webSocket) emitOrClose(event string, ev *goja.Object) error {
	err := w.emit(event, ev)
	if err != nil {
		w.conn.Close()
		_ = w.closed(err)
	}
	return err
}

// run serves an open connection until it closes: the reader and the
// writer, and the call's end, which closes it at once (the run stopped,
// or the call failed); then it records ws_session_duration.
func (w *webSocket) run() {
	conn := w.conn
	// The handlers run in the reader: a ping is answered at once, and
	// both reach the script in order with the messages.
	conn.SetPingHandler(func(data string) error {
		err := conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(wsWriteWait))
		w.tq.queue(func() error {
			if err != nil {
				return w.emitError(err)
			}
			return w.emit("ping", w.event("ping", time.Now()))
		})
		return nil
	})
	conn.SetPongHandler(func(id string) error {
		at := time.Now()
		w.tq.queue(func() error {
			if sent, ok := w.pings[id]; ok {
				w.record(k6Point{k6metric.WSPing, ms(at.Sub(sent))})
			}
			return w.emit("pong", w.event("pong", at))
		})
		return nil
	})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.read() }()
	go func() { defer wg.Done(); w.write() }()
	select {
	case <-w.done:
	case <-w.ctx.Done():
		// Its events can no longer run: say goodbye and close.
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	}
	w.record(k6Point{k6metric.WSSessionDuration, ms(time.Since(w.started))})
	conn.Close()
	wg.Wait()
	w.tq.close()
}

// read reads until the connection ends, as k6's read pump: each message
// to the script, then the close (an error first for a close code other
// than 1000 and 1001).
func (w *webSocket) read() {
	for {
		mtype, data, err := w.conn.ReadMessage()
		if err == nil {
			at := time.Now()
			w.tq.queue(func() error { return w.message(mtype, data, at) })
			continue
		}
		var ce *websocket.CloseError
		code, reason := 0, ""
		if errors.As(err, &ce) {
			code, reason = ce.Code, ce.Text
		}
		if !websocket.IsUnexpectedCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
			err = nil
		}
		w.tq.queue(func() error {
			if code != 0 {
				w.closeCode, w.closeReason = code, reason
			}
			w.conn.Close()
			return w.closed(err)
		})
		return
	}
}

// message delivers one message while the socket is open (k6 drops those
// that arrive while it closes) and counts it in ws_msgs_received.
func (w *webSocket) message(mtype int, data []byte, at time.Time) error {
	if w.readyState != wsOpen {
		return nil
	}
	w.record(k6Point{k6metric.WSMsgsReceived, 1})
	rt := w.api.v.rt
	ev := w.event("message", at)
	var val goja.Value
	switch {
	case mtype != websocket.BinaryMessage:
		val = rt.ToValue(string(data))
	case w.binaryType == "arraybuffer":
		val = rt.ToValue(rt.NewArrayBuffer(data))
	default:
		val = w.api.blob(data, "")
	}
	must(ev.DefineDataProperty("data", val, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	must(ev.DefineDataProperty("origin", rt.ToValue(w.url.String()), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	return w.emitOrClose("message", ev)
}

// write writes the queued frames in order, counting each message in
// ws_msgs_sent once written; a failed write closes the socket.
func (w *webSocket) write() {
	for {
		select {
		case <-w.writes:
		case <-w.done:
			return
		case <-w.ctx.Done():
			return
		}
		w.wmu.Lock()
		out := w.outbox
		w.outbox = nil
		w.wmu.Unlock()
		for _, m := range out {
			var err error
			if m.mtype == websocket.PingMessage {
				err = w.conn.WriteControl(m.mtype, m.data, time.Now().Add(wsWriteWait))
			} else {
				err = w.conn.WriteMessage(m.mtype, m.data)
			}
			if err != nil {
				w.tq.queue(func() error { w.conn.Close(); return w.closed(err) })
				return
			}
			if m.mtype == websocket.TextMessage || m.mtype == websocket.BinaryMessage {
				// k6 also takes a ping's and a close frame's bytes off
				// bufferedAmount, never added: it ends below 0 there
				n := len(m.data)
				w.tq.queue(func() error { w.bufferedAmount -= n; return nil })
				w.record(k6Point{k6metric.WSMsgsSent, 1})
			}
		}
	}
}

// enqueue hands the writer a frame (counted in bufferedAmount until written).
func (w *webSocket) enqueue(mtype int, data []byte) {
	if mtype != websocket.PingMessage && mtype != websocket.CloseMessage {
		w.bufferedAmount += len(data)
	}
	w.wmu.Lock()
	w.outbox = append(w.outbox, wsOut{mtype, data})
	w.wmu.Unlock()
	select {
	case w.writes <- struct{}{}:
	default:
	}
}

// closed ends the socket on the VU's goroutine, once: CLOSED, the error
// handlers for err (unless a normal close), then the close handlers.
func (w *webSocket) closed(err error) error {
	if w.readyState == wsClosed {
		return nil
	}
	w.readyState = wsClosed
	close(w.done)
	if err != nil {
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseNormalClosure {
			if e := w.emitError(err); e != nil {
				return e
			}
		}
	}
	ev := w.event("close", time.Now())
	rt := w.api.v.rt
	if w.closeCode != 0 {
		must(ev.DefineDataProperty("code", rt.ToValue(w.closeCode), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	}
	must(ev.DefineDataProperty("reason", rt.ToValue(w.closeReason), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	return w.emit("close", ev)
}

// assertOpen throws k6's InvalidStateError unless the socket is open.
func (w *webSocket) assertOpen() {
	if w.readyState != wsOpen {
		panic(w.api.v.rt.NewGoError(errors.New("InvalidStateError")))
	}
}

// send(data): a string as a text message; an ArrayBuffer, a typed array
// or DataView, or a Blob as a binary one.
func (w *webSocket) send(msg goja.Value) {
	w.assertOpen()
	rt := w.api.v.rt
	switch x := msg.Export().(type) {
	case string:
		w.enqueue(websocket.TextMessage, []byte(x))
		return
	case goja.ArrayBuffer:
		w.enqueue(websocket.BinaryMessage, append([]byte(nil), x.Bytes()...))
		return
	}
	if b, ok := w.api.blobBytes(msg); ok {
		w.enqueue(websocket.BinaryMessage, append([]byte(nil), b...))
		return
	}
	if b, ok := viewBytes(rt, msg); ok {
		w.enqueue(websocket.BinaryMessage, b)
		return
	}
	panic(rt.NewGoError(fmt.Errorf("unsupported send type %T", msg.Export())))
}

// viewBytes copies an ArrayBufferView's bytes (a typed array, a DataView).
func viewBytes(rt *goja.Runtime, val goja.Value) ([]byte, bool) {
	o, ok := val.(*goja.Object)
	if !ok {
		return nil, false
	}
	isView, _ := goja.AssertFunction(rt.Get("ArrayBuffer").ToObject(rt).Get("isView"))
	if r, err := isView(goja.Undefined(), o); err != nil || !r.ToBoolean() {
		return nil, false
	}
	buf, ok := o.Get("buffer").Export().(goja.ArrayBuffer)
	if !ok {
		return nil, false
	}
	off, n := o.Get("byteOffset").ToInteger(), o.Get("byteLength").ToInteger()
	b := buf.Bytes()
	if off < 0 || n < 0 || off+n > int64(len(b)) {
		return nil, false
	}
	return append([]byte(nil), b[off:off+n]...), true
}

// ping sends a ping whose pong's delay is recorded in ws_ping.
func (w *webSocket) ping() {
	w.assertOpen()
	id := strconv.Itoa(w.pingN)
	w.pingN++
	w.pings[id] = time.Now()
	w.enqueue(websocket.PingMessage, []byte(id))
}

// close([code], [reason]) starts the closing handshake: the close event
// comes when the server answers. k6's checks: the code is 1000 or
// 3000-4999, the reason at most 123 bytes.
func (w *webSocket) close(call goja.FunctionCall) goja.Value {
	if err := w.startClose(call); err != nil {
		panic(w.api.v.rt.NewGoError(err))
	}
	return goja.Undefined()
}

func (w *webSocket) startClose(call goja.FunctionCall) error {
	if w.readyState == wsClosed || w.readyState == wsClosing {
		return nil
	}
	code := int(call.Argument(0).ToInteger())
	reason := ""
	if r := call.Argument(1); !goja.IsUndefined(r) && !goja.IsNull(r) {
		reason = r.String()
	}
	if code != 0 && code != websocket.CloseNormalClosure && (code < 3000 || code > 4999) {
		return fmt.Errorf("InvalidAccessError: Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. %d is neither", code)
	}
	if len(reason) > 123 {
		return errors.New("SyntaxError: Failed to execute 'close' on 'WebSocket': The message must not be greater than 123 bytes")
	}
	if code == 0 {
		code = websocket.CloseNormalClosure
	}
	// While connecting, the frame waits for the writer, which starts
	// once the socket is open (k6's write queue does the same).
	w.readyState = wsClosing
	w.closeCode = code
	w.enqueue(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason))
	return nil
}

// wsQueue runs a socket's tasks on the VU's goroutine, in the order
// queued from any goroutine, keeping one callback registered with the
// loop until closed, so the call waits for the socket (k6's taskqueue).
type wsQueue struct {
	register func() func(func() error)
	mu       sync.Mutex
	enqueue  func(func() error) // the registered callback; nil while a drain is queued
	tasks    []func() error
	closed   bool
}

// newWSQueue registers its first callback: call it on the VU's goroutine.
func newWSQueue(register func() func(func() error)) *wsQueue {
	return &wsQueue{register: register, enqueue: register()}
}

// queue adds a task; after close it is dropped.
func (q *wsQueue) queue(t func() error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.tasks = append(q.tasks, t)
	if e := q.enqueue; e != nil {
		q.enqueue = nil
		e(q.drain)
	}
}

// drain runs on the VU's goroutine: it registers the next callback (the
// queue stays pending) unless closed, then runs the tasks queued so far.
func (q *wsQueue) drain() error {
	q.mu.Lock()
	tasks := q.tasks
	q.tasks = nil
	if !q.closed {
		q.enqueue = q.register()
	}
	q.mu.Unlock()
	for _, t := range tasks {
		if err := t(); err != nil {
			return err
		}
	}
	return nil
}

// close stops the queue once its queued tasks have run: the call no
// longer waits for it.
func (q *wsQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.closed = true
	if e := q.enqueue; e != nil {
		q.enqueue = nil
		e(func() error { return nil })
	}
}
