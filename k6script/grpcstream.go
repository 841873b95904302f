package k6script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dop251/goja"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/knee-dev/knee/k6metric"
)

// grpcStream is new grpc.Stream(client, method, params), k6's stream of
// any kind (server, client, bidirectional): its handlers run on the VU's
// goroutine through the VU's event loop (loop.go), so the call that made
// it ends only once the stream has ended and its 'end' handlers ran. As
// k6's: 'data' gets each message received and {ts}; the server's end is
// 'end'; an error is 'error' with {code, details, message}, then 'end';
// a handler's exception ends the stream and the call with it; write()
// queues a message (sent in order by a goroutine of its own), end()
// closes the sending side; 'status' handlers are accepted and, as in k6,
// never called. grpc_streams, grpc_streams_msgs_sent and
// grpc_streams_msgs_received count, with the call's tags; the stream's
// whole life is one grpc_req_duration. Streams are not requests in
// knee's own records.
type grpcStream struct {
	v        *vu
	md       protoreflect.MethodDescriptor
	raw      grpc.ClientStream
	call     *grpcCall
	cancel   context.CancelFunc
	discard  bool
	handlers map[string][]goja.Callable
	writing  bool // end() not called yet
	done     bool // closed: 'end' is queued
	mo       protojson.MarshalOptions
	uo       protojson.UnmarshalOptions

	mu       sync.Mutex
	events   []grpcEvent          // from the reader and writer, for the VU's goroutine
	enq      func(f func() error) // the loop's registration; nil while draining or once finished
	finished bool                 // 'end' delivered: nothing more runs
	out      []grpcOut            // write()'s queue, for the writer
	wake     chan struct{}        // out grew (capacity 1)
	ctx      context.Context      // the stream's
	counted  func(metric string)  // records one value of a grpc_streams_* metric
}

type grpcEvent struct {
	kind string          // data, close, end
	msg  json.RawMessage // data: the message, protojson's form
	err  error
	at   time.Time
}

type grpcOut struct {
	body    []byte
	closing bool
}

func (v *vu) newGRPCStream(c *grpcClient, obj *goja.Object, method string, params goja.Value) {
	rt := v.rt
	if v.init {
		c.throw(errors.New("invalid GRPC Stream's client: streams cannot be opened in the init context"))
	}
	name, md := c.method(method, "invalid GRPC Stream's method: ")
	r := c.callParams(name, params, "invalid GRPC Stream's parameters:")
	s := &grpcStream{v: v, md: md, call: r.call, discard: r.discard, handlers: map[string][]goja.Callable{},
		writing: true, wake: make(chan struct{}, 1),
		mo: protojson.MarshalOptions{EmitUnpopulated: true, Resolver: c.types}, uo: protojson.UnmarshalOptions{Resolver: c.types}}
	ctx, cancel := context.WithCancel(v.loop.context())
	if r.timeout > 0 {
		ctx, cancel = context.WithTimeout(v.loop.context(), r.timeout)
	}
	s.ctx, s.cancel = ctx, cancel
	tags, group := r.call.tags, r.call.tags["group"]
	run := v.ctx
	s.counted = func(metric string) {
		if run.Err() == nil { // k6 drops a stopped VU's samples
			v.s.k6.add(group, func() map[string]string { return copyTags(tags) }, k6Point{metric, 1})
		}
	}
	sctx := withGRPCCall(metadata.NewOutgoingContext(ctx, r.meta), r.call)
	raw, err := c.conn.NewStream(sctx, &grpc.StreamDesc{StreamName: string(s.md.Name()),
		ServerStreams: s.md.IsStreamingServer(), ClientStreams: s.md.IsStreamingClient()}, name)
	if err != nil {
		cancel()
		c.throw(fmt.Errorf("failed to create a new stream: %w", err))
	}
	s.raw = raw
	s.counted(k6metric.GRPCStreams)
	s.enq = v.loop.register()
	must(obj.Set("on", func(event string, fn goja.Value) {
		f, ok := goja.AssertFunction(fn)
		if !ok {
			panic(rt.NewGoError(fmt.Errorf("handler for %q event isn't a callable function", event)))
		}
		switch event {
		case "data", "error", "end", "status":
			s.handlers[event] = append(s.handlers[event], f)
		default:
			v.s.con.errorf("can't register %s event handler: unknown GRPC stream's event type: %s", event, event)
		}
	}))
	must(obj.Set("write", func(msg goja.Value) {
		if !s.writing {
			return
		}
		if msg == nil || goja.IsUndefined(msg) || goja.IsNull(msg) {
			v.s.con.errorf("can't send empty message")
			return
		}
		b, err := v.stringify(msg)
		if err != nil {
			v.s.con.errorf("can't marshal message: %v", err)
			return
		}
		s.send(grpcOut{body: []byte(b)})
	}))
	must(obj.Set("end", func() {
		if !s.writing {
			return
		}
		s.writing = false
		s.send(grpcOut{closing: true})
	}))
	go s.read()
	go s.write()
}

func copyTags(tags map[string]string) map[string]string {
	t := make(map[string]string, len(tags))
	for k, x := range tags {
		t[k] = x
	}
	return t
}

// send queues a message (or the close of the sending side) for the writer.
func (s *grpcStream) send(o grpcOut) {
	s.mu.Lock()
	s.out = append(s.out, o)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// push hands an event to the VU's goroutine: through the loop's
// registration when there is one, else the drain running picks it up.
func (s *grpcStream) push(e grpcEvent) {
	e.at = time.Now()
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return
	}
	s.events = append(s.events, e)
	enq := s.enq
	s.enq = nil
	s.mu.Unlock()
	if enq != nil {
		enq(s.drain)
	}
}

// drain runs the queued events on the VU's goroutine, then registers for
// the next unless the stream has finished.
func (s *grpcStream) drain() error {
	for {
		s.mu.Lock()
		evs := s.events
		s.events = nil
		if len(evs) == 0 {
			if !s.finished {
				s.enq = s.v.loop.register()
			}
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		for _, e := range evs {
			if err := s.handle(e); err != nil {
				s.mu.Lock()
				s.finished = true
				s.mu.Unlock()
				s.cancel()
				return err
			}
		}
	}
}

func (s *grpcStream) meta(at time.Time) *goja.Object {
	o := s.v.rt.NewObject()
	must(o.Set("ts", at.Unix()))
	return o
}

func (s *grpcStream) handle(e grpcEvent) error {
	rt := s.v.rt
	switch e.kind {
	case "data":
		for _, f := range s.handlers["data"] {
			if _, err := f(goja.Undefined(), s.v.fromJSON(e.msg), s.meta(e.at)); err != nil {
				s.close(err)
				return err
			}
		}
	case "close":
		if s.done || e.err == nil {
			return nil // closed already (our own cancel's echo), or a clean CloseSend
		}
		s.close(e.err)
		if errors.Is(e.err, io.EOF) {
			return nil
		}
		st := status.Convert(e.err)
		details := []any{}
		for _, d := range st.Details() {
			details = append(details, fmt.Sprint(d))
		}
		obj := map[string]any{"code": int(st.Code()), "details": details, "message": st.Message()}
		if len(s.handlers["error"]) == 0 {
			s.v.s.con.errorf("no handlers for error registered, but an error happened: %v", e.err)
		}
		for _, f := range s.handlers["error"] {
			if _, err := f(goja.Undefined(), rt.ToValue(obj), s.meta(e.at)); err != nil {
				return err
			}
		}
	case "end":
		s.mu.Lock()
		s.finished = true
		s.mu.Unlock()
		for _, f := range s.handlers["end"] {
			if _, err := f(goja.Undefined(), rt.ToValue(map[string]any{}), s.meta(time.Now())); err != nil {
				return err
			}
		}
	}
	return nil
}

// close ends the stream once: its context is cancelled (the reader and
// writer stop) and 'end' is queued after what is being handled.
func (s *grpcStream) close(err error) {
	if s.done || err == nil {
		return
	}
	s.done = true
	s.writing = false
	s.cancel()
	s.mu.Lock()
	s.events = append(s.events, grpcEvent{kind: "end", at: time.Now()})
	s.mu.Unlock()
}

// read receives messages until the stream ends (io.EOF: the server
// finished) or fails.
func (s *grpcStream) read() {
	for {
		msg := dynamicpb.NewMessage(s.md.Output())
		if s.discard {
			msg = dynamicpb.NewMessage((&emptypb.Empty{}).ProtoReflect().Descriptor())
		}
		if err := s.raw.RecvMsg(msg); err != nil {
			s.push(grpcEvent{kind: "close", err: err})
			return
		}
		s.counted(k6metric.GRPCStreamsMsgsReceived)
		val := json.RawMessage(`{}`)
		if !s.discard {
			var err error
			if val, err = grpcJSON(s.mo, msg); err != nil {
				s.push(grpcEvent{kind: "close", err: fmt.Errorf("failed to unmarshal the message: %w", err)})
				return
			}
		}
		s.push(grpcEvent{kind: "data", msg: val})
	}
}

// write sends write()'s messages in order, and closes the sending side
// at end(); it stops when the stream's context ends.
func (s *grpcStream) write() {
	for {
		s.mu.Lock()
		q := s.out
		s.out = nil
		s.mu.Unlock()
		for _, o := range q {
			if o.closing {
				if err := s.raw.CloseSend(); err != nil {
					s.push(grpcEvent{kind: "close", err: err})
				}
				return
			}
			msg := dynamicpb.NewMessage(s.md.Input())
			if err := s.uo.Unmarshal(o.body, msg); err != nil {
				s.push(grpcEvent{kind: "close", err: fmt.Errorf("can't serialise request object to protocol buffer: %w", err)})
				return
			}
			if err := s.raw.SendMsg(msg); err != nil {
				if !errors.Is(err, io.EOF) { // EOF: the stream ended; the reader reports how
					s.push(grpcEvent{kind: "close", err: err})
				}
				return
			}
			s.counted(k6metric.GRPCStreamsMsgsSent)
		}
		select {
		case <-s.wake:
		case <-s.ctx.Done():
			return
		}
	}
}
