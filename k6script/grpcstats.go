package k6script

import (
	"context"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	grpcstats "google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/request"
)

// grpcCall is one RPC's tags and what grpc-go's stats tell of it (its
// begin, end, status and wire bytes); the stats may come on any goroutine.
type grpcCall struct {
	v    *vu
	run  context.Context   // the iteration's: once it ends, k6 drops the samples
	tags map[string]string // k6's tags, but status

	endedCh chan struct{} // when set: a value at each RPC's end (reflection waits for its streams' ends)

	mu         sync.Mutex
	begin, end time.Time
	err        error
	ended      bool
	in, out    int64
}

type grpcCallKey struct{}

func withGRPCCall(ctx context.Context, c *grpcCall) context.Context {
	return context.WithValue(ctx, grpcCallKey{}, c)
}

// grpcStats turns grpc-go's stats of each RPC into k6's grpc_req_duration
// (k6 takes it from the same events: end time - begin time), tagged with
// the call's tags and its status code.
type grpcStats struct{}

func (grpcStats) TagRPC(ctx context.Context, _ *grpcstats.RPCTagInfo) context.Context   { return ctx }
func (grpcStats) TagConn(ctx context.Context, _ *grpcstats.ConnTagInfo) context.Context { return ctx }
func (grpcStats) HandleConn(context.Context, grpcstats.ConnStats)                       {}

func (grpcStats) HandleRPC(ctx context.Context, s grpcstats.RPCStats) {
	c, _ := ctx.Value(grpcCallKey{}).(*grpcCall)
	if c == nil {
		return // every call knee makes carries one
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s := s.(type) {
	case *grpcstats.InHeader:
		c.in += int64(s.WireLength)
	case *grpcstats.InPayload:
		c.in += int64(s.WireLength)
	case *grpcstats.InTrailer:
		c.in += int64(s.WireLength)
	case *grpcstats.OutPayload:
		c.out += int64(s.WireLength)
	case *grpcstats.End:
		c.begin, c.end, c.err, c.ended = s.BeginTime, s.EndTime, s.Error, true
		if c.endedCh != nil {
			defer func() { c.endedCh <- struct{}{} }()
		}
		code := status.Code(s.Error)
		if c.run.Err() != nil && code == codes.Canceled {
			return // the run's end cut it: k6 drops a stopped VU's samples
		}
		tags := c.tags
		c.v.s.k6.add(tags["group"], func() map[string]string {
			t := make(map[string]string, len(tags)+1)
			for k, x := range tags {
				t[k] = x
			}
			t["status"] = strconv.Itoa(int(code))
			return t
		}, k6Point{k6metric.GRPCReqDuration, ms(s.EndTime.Sub(s.BeginTime))})
	}
}

// grpcRecord records a unary call in knee's own records as one request,
// as an HTTP request is (vu.record: charged the iteration's start lag in
// the open model): named by its name tag, its gRPC status as the HTTP
// status gRPC's own mapping gives it (OK 200, NotFound 404, Unavailable
// 503, ...), so a failed call counts as failed and a server's error as an
// error; the client's own deadline is a timeout (no status). On the VU's
// goroutine.
func (v *vu) grpcRecord(c *grpcCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended || v.ctx.Err() != nil {
		return // never sent (a bad message), or cut by the run's end
	}
	rep := request.Reply{Sent: c.begin, Done: c.end, BytesIn: c.in, BytesOut: c.out, Err: c.err}
	code := status.Code(c.err)
	switch {
	case code == codes.DeadlineExceeded:
		rep.ErrClass = "timeout"
	case code == codes.Unavailable && c.in == 0:
		rep.ErrClass = request.Classify(c.err) // no answer: the connection failed
	default:
		rep.Status = grpcHTTPStatus(code)
	}
	v.record(c.tags["name"], &rep, 0)
}

// grpcHTTPStatus is the HTTP status for a gRPC code, as google.rpc.Code
// documents each (and gRPC-gateway maps them).
func grpcHTTPStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return 200
	case codes.Canceled:
		return 499
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return 400
	case codes.Unauthenticated:
		return 401
	case codes.PermissionDenied:
		return 403
	case codes.NotFound:
		return 404
	case codes.AlreadyExists, codes.Aborted:
		return 409
	case codes.ResourceExhausted:
		return 429
	case codes.Unimplemented:
		return 501
	case codes.Unavailable:
		return 503
	case codes.DeadlineExceeded:
		return 504
	}
	return 500 // Unknown, Internal, DataLoss
}
