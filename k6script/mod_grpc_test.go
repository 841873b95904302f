package k6script

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	refv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/load"
)

// greeterProto is the test service: one method of each kind.
const greeterProto = `syntax = "proto3";
package kneetest;
message Req { string name = 1; int32 n = 2; }
message Rep { string greeting = 1; int32 n = 2; repeated string names = 3; bool ok = 4; }
service Greeter {
  rpc Hello(Req) returns (Rep);              // "hello NAME"; missing: NotFound; slow: waits for the deadline
  rpc Count(Req) returns (stream Rep);       // n messages, numbered 1..n; n < 0: InvalidArgument
  rpc Collect(stream Req) returns (Rep);     // the names received, n their count
  rpc Chat(stream Req) returns (stream Rep); // each message echoed
}
`

// greeterCfg is what a test's server offers beyond greeterProto's service
// and grpc.health.v1: server reflection in the versions listed, TLS with
// a certificate.
type greeterCfg struct {
	reflect []string
	cert    *tls.Certificate
}

// greeterServer serves greeterProto on loopback with dynamicpb handlers
// (no generated code).
func greeterServer(t *testing.T, cfg greeterCfg) string {
	t.Helper()
	fds, err := (&protocompile.Compiler{Resolver: &protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(
		map[string]string{"greeter.proto": greeterProto})}}).Compile(context.Background(), "greeter.proto")
	if err != nil {
		t.Fatal(err)
	}
	fd := fds[0]
	req, rep := fd.Messages().ByName("Req"), fd.Messages().ByName("Rep")
	newRep := func(greeting string, n int32, names []string) *dynamicpb.Message {
		m := dynamicpb.NewMessage(rep)
		if greeting != "" {
			m.Set(rep.Fields().ByName("greeting"), protoreflect.ValueOfString(greeting))
		}
		m.Set(rep.Fields().ByName("n"), protoreflect.ValueOfInt32(n))
		l := m.Mutable(rep.Fields().ByName("names")).List()
		for _, s := range names {
			l.Append(protoreflect.ValueOfString(s))
		}
		return m
	}
	name := func(m *dynamicpb.Message) string { return m.Get(req.Fields().ByName("name")).String() }
	num := func(m *dynamicpb.Message) int32 { return int32(m.Get(req.Fields().ByName("n")).Int()) }
	sd := &grpc.ServiceDesc{ServiceName: "kneetest.Greeter", HandlerType: (*any)(nil), Metadata: "greeter.proto",
		Methods: []grpc.MethodDesc{{MethodName: "Hello", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := dynamicpb.NewMessage(req)
			if err := dec(in); err != nil {
				return nil, err
			}
			md, _ := metadata.FromIncomingContext(ctx)
			if id := md.Get("x-id"); len(id) > 0 {
				_ = grpc.SetHeader(ctx, metadata.Pairs("x-id", id[0]))
				_ = grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "t-"+id[0]))
			}
			switch name(in) {
			case "missing":
				return nil, status.Error(codes.NotFound, "no such name: missing")
			case "slow":
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return newRep("hello "+name(in), num(in), nil), nil
		}}},
		Streams: []grpc.StreamDesc{
			{StreamName: "Count", ServerStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
				in := dynamicpb.NewMessage(req)
				if err := ss.RecvMsg(in); err != nil {
					return err
				}
				if num(in) < 0 {
					return status.Error(codes.InvalidArgument, "n must not be negative")
				}
				for i := int32(1); i <= num(in); i++ {
					if err := ss.SendMsg(newRep("", i, nil)); err != nil {
						return err
					}
				}
				return nil
			}},
			{StreamName: "Collect", ClientStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
				var names []string
				for {
					in := dynamicpb.NewMessage(req)
					if err := ss.RecvMsg(in); errors.Is(err, io.EOF) {
						return ss.SendMsg(newRep("", int32(len(names)), names))
					} else if err != nil {
						return err
					}
					names = append(names, name(in))
				}
			}},
			{StreamName: "Chat", ServerStreams: true, ClientStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
				for {
					in := dynamicpb.NewMessage(req)
					if err := ss.RecvMsg(in); errors.Is(err, io.EOF) {
						return nil
					} else if err != nil {
						return err
					}
					if err := ss.SendMsg(newRep("re: "+name(in), num(in), nil)); err != nil {
						return err
					}
				}
			}},
		}}
	var sopts []grpc.ServerOption
	if cfg.cert != nil {
		sopts = append(sopts, grpc.Creds(credentials.NewServerTLSFromCert(cfg.cert)))
	}
	srv := grpc.NewServer(sopts...)
	srv.RegisterService(sd, struct{}{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	files := new(protoregistry.Files)
	if err := files.RegisterFile(fd); err != nil {
		t.Fatal(err)
	}
	opts := reflection.ServerOptions{Services: srv, DescriptorResolver: bothFiles{files}}
	for _, r := range cfg.reflect {
		switch r {
		case "v1":
			refv1.RegisterServerReflectionServer(srv, reflection.NewServerV1(opts))
		case "v1alpha":
			refv1alpha.RegisterServerReflectionServer(srv, reflection.NewServer(opts))
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }() // ends when the test stops it
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

// bothFiles finds descriptors in the test's files, then in the
// process's (the reflection services' own, as a real server has them).
type bothFiles struct{ own *protoregistry.Files }

func (b bothFiles) FindFileByPath(p string) (protoreflect.FileDescriptor, error) {
	if fd, err := b.own.FindFileByPath(p); err == nil {
		return fd, nil
	}
	return protoregistry.GlobalFiles.FindFileByPath(p)
}

func (b bothFiles) FindDescriptorByName(n protoreflect.FullName) (protoreflect.Descriptor, error) {
	if d, err := b.own.FindDescriptorByName(n); err == nil {
		return d, nil
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(n)
}

// loadGRPC writes the script beside greeter.proto and loads it.
func loadGRPC(t *testing.T, src, addr string) *Script {
	t.Helper()
	path := writeScript(t, "s.js", map[string]string{"s.js": src, "greeter.proto": greeterProto})
	s, err := Load(context.Background(), path, Config{Env: map[string]string{"ADDR": addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// runGRPC runs iters iterations on one VU and returns knee's samples.
func runGRPC(t *testing.T, s *Script, iters int) []load.Sample {
	t.Helper()
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	var got samples
	for i := 0; i < iters; i++ {
		it.DoRecord(context.Background(), load.Start{Scenario: "x", VU: 1, Iter: uint64(i), Called: time.Now()}, &got)
	}
	if n, first := s.IterationErrors(); n != 0 {
		t.Fatalf("%d iteration errors, the first: %s", n, first)
	}
	return got.all
}

// The unary call as k6 gives it: status, message in protojson's form with
// every field (defaults too), header and trailer metadata, the error
// object of a NotFound; each call one grpc_req_duration and one request in
// knee's records (NotFound as HTTP's 404), with k6's tags.
func TestGRPCInvoke(t *testing.T) {
	addr := greeterServer(t, greeterCfg{})
	s := loadGRPC(t, `import grpc from 'k6/net/grpc';
const client = new grpc.Client();
const methods = client.load([], 'greeter.proto');
if (methods.length !== 4 || methods[0].fullMethod !== '/kneetest.Greeter/Hello' || methods[0].service !== 'Greeter' || methods[0].package !== 'kneetest') {
  throw new Error('load: ' + JSON.stringify(methods));
}
function eq(what, got, want) {
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(what + ': ' + JSON.stringify(got) + ', want ' + JSON.stringify(want));
}
export default function () {
  if (__ITER === 0) client.connect(__ENV.ADDR, { plaintext: true, timeout: '5s' });
  const ok = client.invoke('kneetest.Greeter/Hello', { name: 'ann', n: 3 }, { metadata: { 'x-id': '7' }, tags: { kind: 'hi' } });
  eq('status', ok.status, grpc.StatusOK);
  eq('message', ok.message, { greeting: 'hello ann', n: 3, names: [], ok: false });
  eq('header', ok.headers['x-id'], ['7']);
  eq('trailer', ok.trailers['x-trailer'], ['t-7']);
  eq('error', ok.error, null);
  const nf = client.invoke('/kneetest.Greeter/Hello', { name: 'missing' });
  eq('status', nf.status, grpc.StatusNotFound);
  eq('error', nf.error, { code: 5, message: 'no such name: missing', details: [] });
  eq('message', nf.message, { greeting: '', n: 0, names: [], ok: false });
}`, addr)
	const iters = 3
	got := runGRPC(t, s, iters)
	if n, _ := k6Count(t, s, k6metric.GRPCReqDuration); n != 2*iters {
		t.Errorf("grpc_req_duration count %d, want %d", n, 2*iters)
	}
	var statuses []int
	for _, x := range got {
		if x.Name != "/kneetest.Greeter/Hello" || x.Service <= 0 {
			t.Errorf("sample %s, service %v", x.Name, x.Service)
		}
		statuses = append(statuses, x.Status)
	}
	if want := []int{200, 404, 200, 404, 200, 404}; !slices.Equal(statuses, want) {
		t.Errorf("knee's statuses %v, want %v", statuses, want)
	}
}

// Thresholds on grpc_req_duration are judged on k6's sums, submetrics by
// k6's tags (status, method, name, service, url) and the params' tags.
func TestGRPCThresholds(t *testing.T) {
	addr := greeterServer(t, greeterCfg{})
	s := loadGRPC(t, `import grpc from 'k6/net/grpc';
const client = new grpc.Client();
client.load(null, 'greeter.proto');
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  client.invoke('kneetest.Greeter/Hello', { name: 'a' }, { tags: { kind: 'hi' } });
  client.invoke('kneetest.Greeter/Hello', { name: 'missing' });
  client.invoke('kneetest.Greeter/Hello', { name: 'b' }, { tags: { name: 'custom' } });
  client.close();
}`, addr)
	rest, own, err := s.SplitThresholds(map[string][]string{
		"grpc_req_duration":                                          {"max<60000", "max<0"},
		"grpc_req_duration{status:0}":                                {"avg>=0"},
		"grpc_req_duration{status:5}":                                {"max<0"},
		"grpc_req_duration{kind:hi}":                                 {"avg>=0"},
		"grpc_req_duration{method:Hello}":                            {"avg>=0"},
		"grpc_req_duration{name:custom}":                             {"avg>=0"},
		"grpc_req_duration{service:kneetest.Greeter}":                {"avg>=0"},
		"grpc_req_duration{url:" + addr + "/kneetest.Greeter/Hello}": {"avg>=0"},
	})
	if err != nil || len(rest) != 0 {
		t.Fatalf("SplitThresholds: rest %v, err %v", rest, err)
	}
	runGRPC(t, s, 2)
	want := map[string]bool{"grpc_req_duration: max<60000": true, "grpc_req_duration: max<0": false,
		"grpc_req_duration{status:0}: avg>=0": true, "grpc_req_duration{status:5}: max<0": false,
		"grpc_req_duration{kind:hi}: avg>=0": true, "grpc_req_duration{method:Hello}: avg>=0": true,
		"grpc_req_duration{name:custom}: avg>=0": true, "grpc_req_duration{service:kneetest.Greeter}: avg>=0": true,
		"grpc_req_duration{url:" + addr + "/kneetest.Greeter/Hello}: avg>=0": true}
	res := s.EvaluateOwn(own, time.Second)
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(res), len(want), res)
	}
	for _, r := range res {
		if w, ok := want[r.Expr]; !ok || r.Pass != w {
			t.Errorf("%s: pass %v, want %v, %v (value %v)", r.Expr, r.Pass, w, ok, r.Value)
		}
	}
	// 2 iterations × 3 calls; the submetrics' counts by hand
	for _, c := range []struct {
		name string
		want int64
	}{{"grpc_req_duration", 6}, {"grpc_req_duration{status:0}", 4}, {"grpc_req_duration{status:5}", 2},
		{"grpc_req_duration{kind:hi}", 2}, {"grpc_req_duration{name:custom}", 2}, {"grpc_req_duration{method:Hello}", 6}} {
		if n, _ := k6Count(t, s, c.name); n != c.want {
			t.Errorf("%s count %d, want %d", c.name, n, c.want)
		}
	}
}

// A gRPC call's name tag is its method unless a name tag is set, in the
// params or in the VU's tags (options.tags, a scenario's): k6 v1.8.1
// internal/js/modules/k6/grpc/params.go SetSystemTags reads the call's
// tags, the VU's included.
func TestGRPCNameTagFromEveryLevel(t *testing.T) {
	addr := greeterServer(t, greeterCfg{})
	for _, tt := range []struct {
		name, options, params, want string
	}{
		{"the method", "{}", "{}", "/kneetest.Greeter/Hello"},
		{"options.tags", "{ tags: { name: 'o' } }", "{}", "o"},
		{"the params over options.tags", "{ tags: { name: 'o' } }", "{ tags: { name: 'p' } }", "p"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := loadGRPC(t, `import grpc from 'k6/net/grpc';
const client = new grpc.Client();
client.load(null, 'greeter.proto');
export const options = `+tt.options+`;
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  client.invoke('kneetest.Greeter/Hello', { name: 'a' }, `+tt.params+`);
  client.close();
}`, addr)
			key := "grpc_req_duration{name:" + tt.want + "}"
			if _, _, err := s.SplitThresholds(map[string][]string{key: {"avg>=0"}}); err != nil {
				t.Fatal(err)
			}
			runGRPC(t, s, 1)
			if n, _ := k6Count(t, s, key); n != 1 {
				t.Errorf("%s count %d; want 1", key, n)
			}
		})
	}
}

// Server reflection, v1 and v1alpha: connect learns the methods, with no
// load; the reflection stream is one grpc_req_duration of its own (as
// k6's), tagged with no method.
func TestGRPCReflect(t *testing.T) {
	for _, versions := range [][]string{{"v1", "v1alpha"}, {"v1alpha"}} { // 1 or 2 reflection streams
		t.Run(strings.Join(versions, "+"), func(t *testing.T) {
			addr := greeterServer(t, greeterCfg{reflect: versions})
			s := loadGRPC(t, `import grpc from 'k6/net/grpc';
const client = new grpc.Client();
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true, reflect: true });
  const r = client.invoke('kneetest.Greeter/Hello', { name: 'r' });
  if (r.status !== grpc.StatusOK || r.message.greeting !== 'hello r') throw new Error(JSON.stringify(r));
  client.close();
}`, addr)
			got := runGRPC(t, s, 2)
			if len(got) != 2 {
				t.Errorf("%d requests in knee's records, want 2 (reflection is not one)", len(got))
			}
			// per iteration: the invoke, and the reflection streams (v1alpha
			// alone: v1's refused one first, as k6's client tries it)
			if n, _ := k6Count(t, s, k6metric.GRPCReqDuration); n != int64(2*(1+3-len(versions))) {
				t.Errorf("grpc_req_duration count %d, want %d", n, 2*(1+3-len(versions)))
			}
		})
	}
}

// A deadline: the call ends with DeadlineExceeded at the timeout param,
// a timeout in knee's records; asyncInvoke's Promises settle before the
// iteration ends, each call counted.
func TestGRPCDeadlineAndAsync(t *testing.T) {
	addr := greeterServer(t, greeterCfg{})
	s := loadGRPC(t, `import grpc from 'k6/net/grpc';
const client = new grpc.Client();
client.load([], 'greeter.proto');
export default async function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  const slow = client.invoke('kneetest.Greeter/Hello', { name: 'slow' }, { timeout: '50ms' });
  if (slow.status !== grpc.StatusDeadlineExceeded) throw new Error('status ' + slow.status);
  const all = await Promise.all(['a', 'b', 'missing'].map((n) => client.asyncInvoke('kneetest.Greeter/Hello', { name: n })));
  const st = all.map((r) => r.status).join(',');
  if (st !== '0,0,5') throw new Error('async statuses ' + st);
  let thrown = '';
  await client.asyncInvoke('kneetest.Greeter/Nope', {}).catch((e) => { thrown = String(e); });
  if (!thrown.includes('method "/kneetest.Greeter/Nope" not found')) throw new Error('rejection: ' + thrown);
}`, addr)
	got := runGRPC(t, s, 2)
	if n, _ := k6Count(t, s, k6metric.GRPCReqDuration); n != 2*4 {
		t.Errorf("grpc_req_duration count %d, want 8", n)
	}
	var classes []string
	for _, x := range got {
		classes = append(classes, x.ErrClass+"/"+strconv.Itoa(x.Status))
	}
	slices.Sort(classes)
	want := []string{"/200", "/200", "/200", "/200", "/404", "/404", "timeout/0", "timeout/0"}
	if !slices.Equal(classes, want) {
		t.Errorf("knee's records %v, want %v", classes, want)
	}
}

// Streams of each kind, as k6 runs them: the handlers on the VU's
// goroutine, the iteration waiting for 'end'; an error is 'error' with
// the status, then 'end'. grpc_streams, _msgs_sent and _msgs_received
// count by hand; each stream is one grpc_req_duration and no request in
// knee's records.
func TestGRPCStreams(t *testing.T) {
	addr := greeterServer(t, greeterCfg{})
	s := loadGRPC(t, `import grpc from 'k6/net/grpc';
const client = new grpc.Client();
client.load([], 'greeter.proto');
function eq(what, got, want) {
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(what + ': ' + JSON.stringify(got) + ', want ' + JSON.stringify(want));
}
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  const log = [];
  let ended = 0;
  // the streams run side by side: their events interleave; check once all four ended
  function done(what) {
    log.push(what);
    if (++ended < 4) return;
    const want = ['count 1', 'count 2', 'count 3', 'count end', 'collect data', 'collect end', 'bad error', 'bad end', 're: p', 're: q', 'chat end'];
    eq('events', log.slice().sort(), want.slice().sort());
    eq('count order', log.filter((x) => x.startsWith('count')), want.slice(0, 4));
    eq('bad order', log.filter((x) => x.startsWith('bad')), ['bad error', 'bad end']);
    eq('chat order', log.filter((x) => x.startsWith('re') || x.startsWith('chat')), ['re: p', 're: q', 'chat end']);
    log.push('checked');
  }
  // server streaming: 3 messages, then end
  const count = new grpc.Stream(client, 'kneetest.Greeter/Count');
  count.on('data', (m, meta) => { if (typeof meta.ts !== 'number') throw new Error('ts'); log.push('count ' + m.n); });
  count.on('end', () => done('count end'));
  count.write({ n: 3 });
  count.end();
  // client streaming: 2 sent, one answer
  const collect = new grpc.Stream(client, '/kneetest.Greeter/Collect');
  collect.on('data', (m) => { eq('collect', m, { greeting: '', n: 2, names: ['x', 'y'], ok: false }); log.push('collect data'); });
  collect.on('end', () => done('collect end'));
  collect.write({ name: 'x' });
  collect.write({ name: 'y' });
  collect.end();
  // an error: InvalidArgument, then end
  const bad = new grpc.Stream(client, 'kneetest.Greeter/Count', { metadata: { 'x-id': '1' } });
  bad.on('error', (e) => { eq('error', [e.code, e.message], [3, 'n must not be negative']); log.push('bad error'); });
  bad.on('end', () => done('bad end'));
  bad.write({ n: -1 });
  // bidirectional: the client ends after the second echo
  const chat = new grpc.Stream(client, 'kneetest.Greeter/Chat');
  let echoes = 0;
  chat.on('data', (m) => { log.push(m.greeting); if (++echoes === 2) chat.end(); });
  chat.on('end', () => done('chat end'));
  chat.write({ name: 'p' });
  chat.write({ name: 'q' });
  // runs before any handler: the iteration's event loop runs them after this function returns
  if (log.length !== 0) throw new Error('a handler ran early: ' + log);
  globalThis.lastLog = log;
}`, addr)
	got := runGRPC(t, s, 2)
	if len(got) != 0 {
		t.Errorf("%d requests in knee's records, want 0", len(got))
	}
	v, _ := s.vus.Load(uint64(1))
	if last := v.(*vu).rt.Get("lastLog").String(); !strings.HasSuffix(last, ",checked") {
		t.Errorf("the last iteration's events: %s; want all four ends, checked", last)
	}
	// per iteration: 4 streams; sent 1 + 2 + 1 + 2, received 3 + 1 + 0 + 2
	for _, c := range []struct {
		metric string
		want   int64
	}{{k6metric.GRPCStreams, 8}, {k6metric.GRPCStreamsMsgsSent, 12}, {k6metric.GRPCStreamsMsgsReceived, 12}, {k6metric.GRPCReqDuration, 8}} {
		if n, _ := k6Count(t, s, c.metric); n != c.want {
			t.Errorf("%s count %d, want %d", c.metric, n, c.want)
		}
	}
}

// What k6 allows only in the init code, or never there, fails as k6's.
func TestGRPCInitRules(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"load in an iteration", "const c = new grpc.Client();\nexport default function () { c.load([], 'greeter.proto'); }", "load must be called in the init context"},
		{"invoke before connect", "const c = new grpc.Client();\nc.load([], 'greeter.proto');\nexport default function () { c.invoke('kneetest.Greeter/Hello', {}); }", "no gRPC connection, you must call connect first"},
		{"unknown method", "const c = new grpc.Client();\nc.load([], 'greeter.proto');\nexport default function () { c.connect(__ENV.ADDR, { plaintext: true }); c.invoke('kneetest.Greeter/Nope', {}); }", `method "/kneetest.Greeter/Nope" not found in file descriptors`},
		{"unknown param", "const c = new grpc.Client();\nexport default function () { c.connect(__ENV.ADDR, { plain: true }); }", `unknown connect param: "plain"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := greeterServer(t, greeterCfg{})
			s := loadGRPC(t, "import grpc from 'k6/net/grpc';\n"+tc.src, addr)
			iterateOnce(t, s)
			if n, first := s.IterationErrors(); n != 1 || !strings.Contains(first, tc.want) {
				t.Errorf("%d errors, first %q; want 1 with %q", n, first, tc.want)
			}
		})
	}
	// connect in the init code fails Load
	path := writeScript(t, "s.js", map[string]string{"s.js": "import grpc from 'k6/net/grpc';\nnew grpc.Client().connect('127.0.0.1:1', { plaintext: true });\nexport default function () {}\n"})
	if s, err := Load(context.Background(), path, Config{}); err == nil {
		s.Close()
		t.Error("Load succeeded")
	} else if !strings.Contains(err.Error(), "connecting to a gRPC server in the init context is not supported") {
		t.Errorf("error %q", err)
	}
}

// selfSigned is a certificate for 127.0.0.1 signed by itself, and its PEM.
func selfSigned(t *testing.T) (*tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// Over TLS the server's certificate is checked: trusted through the tls
// param's cacerts it connects, without it the dial fails; loadProtoset
// reads a FileDescriptorSet; healthCheck asks grpc.health.v1; binary
// metadata (-bin keys) goes as bytes.
func TestGRPCTLSProtosetHealth(t *testing.T) {
	cert, certPEM := selfSigned(t)
	addr := greeterServer(t, greeterCfg{cert: cert})
	// the protoset, as protoc --descriptor_set_out writes it
	fds, err := (&protocompile.Compiler{Resolver: &protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(
		map[string]string{"greeter.proto": greeterProto})}}).Compile(context.Background(), "greeter.proto")
	if err != nil {
		t.Fatal(err)
	}
	set, err := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(fds[0])}})
	if err != nil {
		t.Fatal(err)
	}
	path := writeScript(t, "s.js", map[string]string{"s.js": `import grpc from 'k6/net/grpc';
const client = new grpc.Client();
const ms = client.loadProtoset('greeter.protoset');
if (ms.length !== 4) throw new Error('loadProtoset: ' + JSON.stringify(ms));
export default function () {
  let refused = '';
  try { client.connect(__ENV.ADDR, { timeout: '300ms' }); } catch (e) { refused = String(e); }
  if (!refused.includes('certificate')) throw new Error('an untrusted certificate connected: ' + refused);
  client.connect(__ENV.ADDR, { timeout: '5s', tls: { cacerts: [__ENV.CA] } });
  const h = client.healthCheck();
  if (h.status !== grpc.HealthCheckServing) throw new Error('health ' + JSON.stringify(h));
  const bin = new Uint8Array([0, 1, 255]).buffer;
  const r = client.invoke('kneetest.Greeter/Hello', { name: 'tls' }, { metadata: { 'x-id': 'k', 'x-raw-bin': bin } });
  if (r.status !== grpc.StatusOK || r.message.greeting !== 'hello tls' || r.headers['x-id'][0] !== 'k') throw new Error(JSON.stringify(r));
  let bad = '';
  try { client.invoke('kneetest.Greeter/Hello', {}, { metadata: { 'x-raw-bin': 'text' } }); } catch (e) { bad = String(e); }
  if (!bad.includes('"x-raw-bin" value must be binary')) throw new Error('a string -bin value: ' + bad);
  client.close();
}`})
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "greeter.protoset"), set, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), path, Config{Env: map[string]string{"ADDR": addr, "CA": certPEM}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if got := runGRPC(t, s, 1); len(got) != 1 || got[0].Status != 200 {
		t.Errorf("knee's records %+v; want the one invoke, 200", got)
	}
}

// connect's and invoke's params change what comes back as k6's do: a
// maxReceiveSize below the reply's size is ResourceExhausted (8), a
// maxSendSize below the request's too, discardResponseMessage gives a
// null message.
func TestGRPCParams(t *testing.T) {
	addr := greeterServer(t, greeterCfg{})
	for _, tc := range []struct {
		name, connect, invoke string
		status                int
		message               string // JSON.stringify of res.message
	}{
		{"defaults", "{ plaintext: true }", "{}", 0, `{"greeting":"hello abc","n":0,"names":[],"ok":false}`},
		{"maxReceiveSize", "{ plaintext: true, maxReceiveSize: 4 }", "{}", 8, `{"greeting":"","n":0,"names":[],"ok":false}`},
		{"maxSendSize", "{ plaintext: true, maxSendSize: 2 }", "{}", 8, `{"greeting":"","n":0,"names":[],"ok":false}`},
		{"discardResponseMessage", "{ plaintext: true }", "{ discardResponseMessage: true }", 0, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := loadGRPC(t, `import grpc from 'k6/net/grpc';
const client = new grpc.Client();
client.load([], 'greeter.proto');
export default function () {
  client.connect(__ENV.ADDR, `+tc.connect+`);
  const r = client.invoke('kneetest.Greeter/Hello', { name: 'abc' }, `+tc.invoke+`);
  const got = r.status + ' ' + JSON.stringify(r.message);
  if (got !== `+strconv.Quote(strconv.Itoa(tc.status)+" "+tc.message)+`) throw new Error(got);
  client.close();
}`, addr)
			runGRPC(t, s, 1)
		})
	}
}
