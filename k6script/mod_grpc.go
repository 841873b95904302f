package k6script

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/dop251/goja"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/knee-dev/knee/internal/limits"
)

// grpcModule is "k6/net/grpc" as k6 v1 defines it (k6's
// internal/js/modules/k6/grpc and lib/netext/grpcext): Client (load and
// loadProtoset in the init code, connect, invoke, asyncInvoke,
// healthCheck, close), Stream (grpcstream.go), and the status and health
// constants. Messages go to and from JavaScript as protojson with k6's
// options (every field written, defaults too). Every RPC is one
// grpc_req_duration, from grpc-go's stats (begin to end), tagged as k6
// tags it; a unary call is also one request in knee's own records
// (grpcRecord).
func grpcModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	clients := map[*goja.Object]*grpcClient{}
	fixV, err := rt.RunString(grpcFixNumbers)
	must(err)
	fix, _ := goja.AssertFunction(fixV)
	must(o.Set("Client", func(call goja.ConstructorCall) *goja.Object {
		c := &grpcClient{v: v, types: new(protoregistry.Types), mds: map[string]protoreflect.MethodDescriptor{}, fix: fix}
		c.define(call.This)
		clients[call.This] = c
		return nil
	}))
	must(o.Set("Stream", func(call goja.ConstructorCall) *goja.Object {
		co, _ := call.Argument(0).(*goja.Object)
		c := clients[co]
		switch {
		case co == nil || goja.IsNull(co):
			panic(rt.NewGoError(errors.New("invalid GRPC Stream's client: empty gRPC client")))
		case c == nil:
			panic(rt.NewGoError(errors.New("invalid GRPC Stream's client: not a gRPC client")))
		case c.conn == nil:
			panic(rt.NewGoError(errors.New("invalid GRPC Stream's client: no gRPC connection, you must call connect first")))
		}
		v.newGRPCStream(c, call.This, call.Argument(1).String(), call.Argument(2))
		return nil
	}))
	for i, name := range grpcStatusNames {
		must(o.Set(name, i))
	}
	for name, st := range map[string]healthpb.HealthCheckResponse_ServingStatus{
		"HealthCheckUnknown": healthpb.HealthCheckResponse_UNKNOWN, "HealthCheckServing": healthpb.HealthCheckResponse_SERVING,
		"HealthCheckNotServing": healthpb.HealthCheckResponse_NOT_SERVING,
		// k6 spells it so
		"HealthCheckServiceUnkown": healthpb.HealthCheckResponse_SERVICE_UNKNOWN,
	} {
		must(o.Set(name, int(st)))
	}
	return o
}

// grpcStatusNames are k6's status constants, by code (codes.OK = 0 ...).
var grpcStatusNames = [...]string{"StatusOK", "StatusCanceled", "StatusUnknown", "StatusInvalidArgument",
	"StatusDeadlineExceeded", "StatusNotFound", "StatusAlreadyExists", "StatusPermissionDenied",
	"StatusResourceExhausted", "StatusFailedPrecondition", "StatusAborted", "StatusOutOfRange",
	"StatusUnimplemented", "StatusInternal", "StatusUnavailable", "StatusDataLoss", "StatusUnauthenticated"}

// grpcClient is one grpc.Client of one VU. Only the VU's goroutine
// touches it; types is read by protojson on others (asyncInvoke, streams)
// once load and connect are done.
type grpcClient struct {
	v      *vu
	mds    map[string]protoreflect.MethodDescriptor // by "/pkg.Service/Method"
	types  *protoregistry.Types                     // messages loaded, for protojson's Any
	conn   *grpc.ClientConn
	addr   string
	closer bool          // Script.Close closes its connection
	fix    goja.Callable // grpcFixNumbers' function, compiled once per VU
}

func (c *grpcClient) define(o *goja.Object) {
	rt := c.v.rt
	must(o.Set("load", func(call goja.FunctionCall) goja.Value {
		var paths []string
		if p := call.Argument(0); !goja.IsUndefined(p) && !goja.IsNull(p) {
			if err := rt.ExportTo(p, &paths); err != nil {
				panic(rt.NewGoError(fmt.Errorf("load: the import paths must be an array of strings: %w", err)))
			}
		}
		var files []string
		for _, a := range call.Arguments[min(1, len(call.Arguments)):] {
			files = append(files, a.String())
		}
		return c.methodInfo(c.load(paths, files))
	}))
	must(o.Set("loadProtoset", func(file string) goja.Value { return c.methodInfo(c.loadProtoset(file)) }))
	must(o.Set("connect", func(addr string, params goja.Value) bool { c.connect(addr, params); return true }))
	must(o.Set("invoke", func(method string, req, params goja.Value) goja.Value {
		r := c.request(method, req, params)
		return c.response(c.invoke(c.v.ctx, r))
	}))
	must(o.Set("asyncInvoke", func(method string, req, params goja.Value) goja.Value { return c.asyncInvoke(method, req, params) }))
	must(o.Set("healthCheck", func(svc goja.Value) goja.Value { return c.healthCheck(svc) }))
	must(o.Set("close", func() {
		if c.conn != nil {
			_ = c.conn.Close() // a close error leaves nothing to do: the connection is gone
			c.conn = nil
		}
	}))
}

// throw raises err as the script's exception.
func (c *grpcClient) throw(err error) { panic(c.v.rt.NewGoError(err)) }

// load is client.load(importPaths, ...files): the .proto files parsed
// with protocompile (k6's parser), google/protobuf's well-known files
// built in; relative paths are the script's directory's, as k6's init
// context resolves them.
func (c *grpcClient) load(paths, files []string) []grpcMethodInfo {
	v := c.v
	if !v.init {
		c.throw(errors.New("load must be called in the init context"))
	}
	if len(paths) == 0 {
		paths = []string{v.s.dir}
	}
	for i, p := range paths {
		p = strings.TrimPrefix(p, "file://")
		if !filepath.IsAbs(p) {
			p = filepath.Join(v.s.dir, p)
		}
		paths[i] = p
	}
	comp := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		ImportPaths: paths,
		Accessor: func(name string) (io.ReadCloser, error) {
			b, err := v.readScriptFile(name)
			if err != nil {
				return nil, err
			}
			return io.NopCloser(strings.NewReader(string(b))), nil
		},
	})}
	fds, err := comp.Compile(v.ctx, files...)
	if err != nil {
		c.throw(err)
	}
	var all []protoreflect.FileDescriptor
	seen := map[string]bool{}
	var walk func(fd protoreflect.FileDescriptor)
	walk = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		all = append(all, fd)
		for i := 0; i < fd.Imports().Len(); i++ {
			walk(fd.Imports().Get(i).FileDescriptor)
		}
	}
	for _, fd := range fds {
		walk(fd)
	}
	return c.register(all)
}

// loadProtoset is client.loadProtoset(file): a serialised
// FileDescriptorSet (protoc --descriptor_set_out), in the init code.
func (c *grpcClient) loadProtoset(file string) []grpcMethodInfo {
	if !c.v.init {
		c.throw(errors.New("load must be called in the init context"))
	}
	b, err := c.v.readScriptFile(file)
	if err != nil {
		c.throw(fmt.Errorf("couldn't open protoset: %w", err))
	}
	set := &descriptorpb.FileDescriptorSet{}
	if err := proto.Unmarshal(b, set); err != nil {
		c.throw(fmt.Errorf("couldn't unmarshal protoset file %s: %w", file, err))
	}
	return c.register(c.files(set, false))
}

// files makes descriptors of a set; lenient (for reflection) lets a
// dependency the server did not send stay unresolved.
func (c *grpcClient) files(set *descriptorpb.FileDescriptorSet, lenient bool) []protoreflect.FileDescriptor {
	reg, err := protodesc.FileOptions{AllowUnresolvable: lenient}.NewFiles(set)
	if err != nil {
		c.throw(err)
	}
	var all []protoreflect.FileDescriptor
	reg.RangeFiles(func(fd protoreflect.FileDescriptor) bool { all = append(all, fd); return true })
	return all
}

// grpcMethodInfo is what load returns for each method, as k6.
type grpcMethodInfo struct{ pkg, service, full string }

func (c *grpcClient) methodInfo(ms []grpcMethodInfo) goja.Value {
	rt := c.v.rt
	out := make([]any, len(ms))
	for i, m := range ms {
		o := rt.NewObject()
		must(o.Set("package", m.pkg))
		must(o.Set("service", m.service))
		must(o.Set("fullMethod", m.full))
		out[i] = o
	}
	return rt.ToValue(out)
}

// register keeps the files' methods and message types (load may be
// called again: what it adds joins what was there).
func (c *grpcClient) register(files []protoreflect.FileDescriptor) []grpcMethodInfo {
	var out []grpcMethodInfo
	for _, fd := range files {
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			for j := 0; j < sd.Methods().Len(); j++ {
				md := sd.Methods().Get(j)
				name := "/" + string(sd.FullName()) + "/" + string(md.Name())
				c.mds[name] = md
				out = append(out, grpcMethodInfo{pkg: string(fd.Package()), service: string(sd.Name()), full: name})
			}
		}
		stack := []protoreflect.MessageDescriptors{fd.Messages()}
		for len(stack) > 0 {
			ms := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for i := 0; i < ms.Len(); i++ {
				m := ms.Get(i)
				if _, err := c.types.FindMessageByName(m.FullName()); errors.Is(err, protoregistry.NotFound) {
					if err := c.types.RegisterMessage(dynamicpb.NewMessageType(m)); err != nil {
						c.throw(err)
					}
				}
				stack = append(stack, m.Messages())
			}
		}
	}
	return out
}

// readScriptFile reads a file the init code names, relative to the
// script, bounded as open() is, and cached with open()'s files.
func (v *vu) readScriptFile(name string) ([]byte, error) {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(v.s.dir, p)
	}
	if c, ok := v.s.files.Load(p); ok {
		return c.([]byte), nil
	}
	b, err := limits.ReadFile(p, limits.ScriptOpen, "file a script loads", "split the definitions into smaller files")
	if err != nil {
		return nil, unwrapPath(err)
	}
	v.s.files.Store(p, b)
	return b, nil
}

// grpcConnect is connect's params, with k6's defaults.
type grpcConnect struct {
	plaintext, reflect bool
	reflectMD          metadata.MD
	timeout            time.Duration
	maxRecv, maxSend   int64
	tls                map[string]any
	authority          string
}

func (c *grpcClient) connectParams(params goja.Value) grpcConnect {
	p := grpcConnect{timeout: time.Minute, reflectMD: metadata.MD{}}
	o, ok := params.(*goja.Object)
	if !ok || goja.IsNull(params) {
		return p
	}
	bad := func(f string, a ...any) { c.throw(fmt.Errorf("invalid grpc.connect() parameters: "+f, a...)) }
	for _, k := range o.Keys() {
		val := o.Get(k)
		x := val.Export()
		switch k {
		case "plaintext", "reflect":
			b, ok := x.(bool)
			if !ok {
				bad("invalid %s value: '%#v', it needs to be boolean", k, x)
			}
			if k == "plaintext" {
				p.plaintext = b
			} else {
				p.reflect = b
			}
		case "timeout":
			p.timeout = c.v.durationValue(val, "invalid grpc.connect() parameters: invalid timeout value")
		case "reflectMetadata":
			p.reflectMD = c.metadata(val, "reflectMetadata")
		case "maxReceiveSize", "maxSendSize":
			n, ok := x.(int64)
			if !ok || n < 0 {
				bad("invalid %s value: '%#v', it needs to be a positive integer", k, x)
			}
			if k == "maxReceiveSize" {
				p.maxRecv = n
			} else {
				p.maxSend = n
			}
		case "tls":
			m, ok := x.(map[string]any)
			if !ok {
				bad("invalid tls value: '%#v', expected (optional) keys: cert, key, password, and cacerts", x)
			}
			p.tls = m
		case "authority":
			s, ok := x.(string)
			if !ok {
				bad("invalid authority value: '%#v', it needs to be a string", x)
			}
			p.authority = s
		default:
			bad("unknown connect param: %q", k)
		}
	}
	return p
}

// tlsConfig is the connection's TLS: the script's insecureSkipTLSVerify,
// and the tls param's client certificate and CA certificates (PEM).
func (c *grpcClient) tlsConfig(m map[string]any) *tls.Config {
	cfg := &tls.Config{InsecureSkipVerify: c.v.s.Options.InsecureSkipTLSVerify, NextProtos: []string{"h2"}} // only when the script asks for it
	if len(m) == 0 {
		return cfg
	}
	str := func(k string) string {
		s, _ := m[k].(string)
		return s
	}
	if str("password") != "" {
		c.throw(errors.New("invalid grpc.connect() parameters: tls password (an encrypted key) is not supported by knee; decrypt the key (openssl pkey) and pass it unencrypted"))
	}
	var cas []string
	switch x := m["cacerts"].(type) {
	case string:
		cas = []string{x}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				c.throw(fmt.Errorf("invalid tls cacerts value: '%#v', it needs to be a string or an array of PEM formatted strings", x))
			}
			cas = append(cas, s)
		}
	}
	if len(cas) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		for i, ca := range cas {
			if !pool.AppendCertsFromPEM([]byte(ca)) {
				c.throw(fmt.Errorf("failed to append ca certificate [%d] from PEM", i))
			}
		}
		cfg.RootCAs = pool
	}
	if cert, key := str("cert"), str("key"); cert != "" && key != "" {
		kp, err := tls.X509KeyPair([]byte(cert), []byte(key))
		if err != nil {
			c.throw(fmt.Errorf("failed to append certificate from PEM: %w", err))
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	return cfg
}

// connect is client.connect(address, params): a blocking dial, as k6's
// (it fails at once on an error that retrying would not mend), then, with
// reflect, the server's descriptors by server reflection (v1, else
// v1alpha).
func (c *grpcClient) connect(addr string, params goja.Value) {
	v := c.v
	if v.init {
		c.throw(errors.New("connecting to a gRPC server in the init context is not supported"))
	}
	p := c.connectParams(params)
	cred := insecure.NewCredentials()
	if !p.plaintext {
		cred = credentials.NewTLS(c.tlsConfig(p.tls))
	}
	opts := []grpc.DialOption{
		grpc.WithBlock(), grpc.FailOnNonTempDialError(true), grpc.WithReturnConnectionError(), //nolint:staticcheck // k6's dial semantics
		grpc.WithStatsHandler(grpcStats{}), grpc.WithTransportCredentials(cred),
	}
	if ua := v.s.Options.UserAgent; ua != nil {
		// only the script's userAgent, as k6: else grpc-go's own
		opts = append(opts, grpc.WithUserAgent(*ua))
	}
	if p.maxRecv > 0 {
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(int(p.maxRecv))))
	}
	if p.maxSend > 0 {
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(int(p.maxSend))))
	}
	if p.authority != "" {
		opts = append(opts, grpc.WithAuthority(p.authority))
	}
	ctx, cancel := context.WithTimeout(v.ctx, p.timeout)
	defer cancel()
	if c.conn != nil { // connecting again replaces the connection
		_ = c.conn.Close() // nothing to do about a close error: the connection is dropped either way
	}
	c.addr = addr
	conn, err := grpc.DialContext(ctx, addr, opts...) //nolint:staticcheck // k6's blocking dial
	if err != nil {
		c.conn = nil
		c.throw(err)
	}
	c.conn = conn
	if !c.closer { // once per client: a connect per iteration adds nothing
		c.closer = true
		v.onClose(func() {
			if c.conn != nil {
				_ = c.conn.Close() // the run is over: nothing to do about a close error
			}
		})
	}
	if !p.reflect {
		return
	}
	rctx := metadata.NewOutgoingContext(ctx, p.reflectMD)
	rctx = withGRPCCall(rctx, &grpcCall{v: v, run: v.ctx, tags: c.baseTags(nil), endedCh: make(chan struct{}, 2)})
	set, err := grpcReflect(rctx, conn)
	if err != nil {
		c.throw(err)
	}
	c.register(c.files(set, true))
}

// onClose adds what Script.Close releases with the VU (its gRPC
// connections).
func (v *vu) onClose(f func()) { v.closers = append(v.closers, f) }

// baseTags are the VU's tags now plus custom, for a call's samples
// (they may be recorded on another goroutine: the tags are taken here).
func (c *grpcClient) baseTags(custom map[string]string) map[string]string {
	t := c.v.k6Tags()
	for k, x := range custom {
		t[k] = x
	}
	return t
}

// metadata reads a metadata param: string values, binary ones (an
// ArrayBuffer) for keys ending in -bin.
func (c *grpcClient) metadata(val goja.Value, what string) metadata.MD {
	md := metadata.MD{}
	o, ok := val.(*goja.Object)
	if !ok || goja.IsNull(val) {
		return md
	}
	for _, k := range o.Keys() {
		x := o.Get(k).Export()
		var s string
		if strings.HasSuffix(k, "-bin") { // gRPC's binary metadata: bytes, sent base64-encoded by grpc-go
			switch b := x.(type) {
			case goja.ArrayBuffer:
				s = string(b.Bytes())
			case []byte:
				s = string(b)
			default:
				c.throw(fmt.Errorf("invalid %s param: %q value must be binary", what, k))
			}
		} else if s, ok = x.(string); !ok {
			c.throw(fmt.Errorf("invalid %s param: %q value must be a string", what, k))
		}
		md.Append(k, s)
	}
	return md
}

// grpcRequest is an invoke's or a stream's method and params, read on the
// VU's goroutine.
type grpcRequest struct {
	conn    *grpc.ClientConn // taken on the VU's goroutine: close() may run while an asyncInvoke is out
	method  string
	md      protoreflect.MethodDescriptor
	body    []byte // the request message as JSON (invoke)
	meta    metadata.MD
	timeout time.Duration
	discard bool
	call    *grpcCall
}

// method is a method's full name ("/pkg.Service/Method", the leading
// slash added as k6 adds it) and descriptor; what prefixes the errors.
func (c *grpcClient) method(name, what string) (string, protoreflect.MethodDescriptor) {
	if name == "" {
		c.throw(errors.New(what + "method to invoke cannot be empty"))
	}
	if name[0] != '/' {
		name = "/" + name
	}
	md := c.mds[name]
	if md == nil {
		c.throw(fmt.Errorf("%smethod %q not found in file descriptors", what, name))
	}
	return name, md
}

// callParams reads invoke's and Stream's params (metadata, tags, timeout,
// discardResponseMessage) and makes the call's tags as k6 sets them:
// url (address + method), service, method (the method's own name), name
// (the full method unless the tags set one), and status when it ends.
func (c *grpcClient) callParams(method string, params goja.Value, what string) grpcRequest {
	r := grpcRequest{method: method, meta: metadata.MD{}}
	var custom map[string]string
	if o, ok := params.(*goja.Object); ok && !goja.IsNull(params) {
		for _, k := range o.Keys() {
			val := o.Get(k)
			switch k {
			case "metadata":
				r.meta = c.metadata(val, "metadata")
			case "tags":
				custom = c.v.mustTags(val, what+" metric tags")
			case "timeout":
				r.timeout = c.v.durationValue(val, what+" invalid timeout value")
			case "discardResponseMessage":
				r.discard = val.ToBoolean()
			default:
				c.throw(fmt.Errorf("%s unknown param: %q", what, k))
			}
		}
	}
	tags := c.baseTags(custom)
	tags["url"] = c.addr + method
	svc, m, _ := strings.Cut(method[1:], "/")
	tags["service"], tags["method"] = svc, m
	// A name tag set anywhere (the params', a scenario's, options.tags)
	// stays, as k6's callParams.SetSystemTags reads the call's tags.
	if _, ok := tags["name"]; !ok {
		tags["name"] = method
	}
	r.call = &grpcCall{v: c.v, run: c.v.ctx, tags: tags}
	return r
}

// request builds an invoke's request on the VU's goroutine.
func (c *grpcClient) request(method string, req, params goja.Value) grpcRequest {
	if c.v.init {
		c.throw(errors.New("invoking RPC methods in the init context is not supported"))
	}
	if c.conn == nil {
		c.throw(errors.New("no gRPC connection, you must call connect first"))
	}
	name, md := c.method(method, "")
	r := c.callParams(name, params, "invalid GRPC's client.invoke() parameters:")
	r.md, r.conn = md, c.conn
	if r.timeout == 0 {
		r.timeout = 2 * time.Minute // k6's default for invoke
	}
	if req == nil || goja.IsUndefined(req) || goja.IsNull(req) {
		c.throw(errors.New("request cannot be nil"))
	}
	fixed, err := c.fix(goja.Undefined(), req)
	if err != nil {
		panic(err) // a getter's exception: the script's
	}
	s, err := c.v.stringify(fixed)
	if err != nil {
		c.throw(fmt.Errorf("unable to serialise request object: %w", err))
	}
	r.body = []byte(s)
	return r
}

// grpcFixNumbers makes a copy of a value with NaN and ±Infinity as the
// strings protojson reads for them ("NaN", "Infinity", "-Infinity"), as
// k6 sends them; JSON.stringify would write null.
const grpcFixNumbers = `(function fix(x, seen) {
	if (typeof x === 'number') { return isNaN(x) ? 'NaN' : x === Infinity ? 'Infinity' : x === -Infinity ? '-Infinity' : x; }
	if (x === null || typeof x !== 'object' || x instanceof ArrayBuffer) { return x; }
	seen = seen || [];
	if (seen.includes(x)) { throw new Error('unable to normalize number strings: cyclic reference to an object found'); }
	seen.push(x);
	const out = Array.isArray(x) ? [] : {};
	for (const k of Object.keys(x)) { out[k] = fix(x[k], seen); }
	seen.pop();
	return out;
})`

// grpcResult is a finished unary call, before it becomes k6's Response.
type grpcResult struct {
	code     codes.Code
	message  json.RawMessage // the response message, protojson's form
	errObj   json.RawMessage // the status, protojson's form; nil when OK
	headers  metadata.MD
	trailers metadata.MD
	err      error // a failure that k6 throws (the response could not be read)
	call     *grpcCall
}

// invoke sends one unary call; safe on any goroutine (asyncInvoke).
func (c *grpcClient) invoke(ctx context.Context, r grpcRequest) grpcResult {
	res := grpcResult{call: r.call}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	ctx = metadata.NewOutgoingContext(ctx, r.meta)
	ctx = withGRPCCall(ctx, r.call)
	in := dynamicpb.NewMessage(r.md.Input())
	if err := (protojson.UnmarshalOptions{Resolver: c.types}).Unmarshal(r.body, in); err != nil {
		res.err = fmt.Errorf("unable to serialise request object to protocol buffer: %w", err)
		return res
	}
	out := dynamicpb.NewMessage(r.md.Output())
	if r.discard {
		out = dynamicpb.NewMessage((&emptypb.Empty{}).ProtoReflect().Descriptor())
	}
	err := r.conn.Invoke(ctx, r.method, in, out, grpc.Header(&res.headers), grpc.Trailer(&res.trailers))
	mo := protojson.MarshalOptions{EmitUnpopulated: true, Resolver: c.types}
	if err != nil {
		st := status.Convert(err)
		res.code = st.Code()
		res.errObj, _ = grpcJSON(mo, st.Proto()) // a google.rpc.Status always marshals
	}
	if !r.discard {
		// k6 gives the message on an error too: the output type's defaults
		if res.message, err = grpcJSON(mo, out); err != nil {
			res.err = fmt.Errorf("unable to convert response object to JSON: %w", err)
		}
	}
	return res
}

// grpcJSON is a message in protojson's form; safe on any goroutine.
func grpcJSON(mo protojson.MarshalOptions, m proto.Message) (json.RawMessage, error) {
	return mo.Marshal(m)
}

// fromJSON is JSON text as plain JavaScript values (its keys in the
// message's field order), nil for none. On the VU's goroutine.
func (v *vu) fromJSON(b json.RawMessage) goja.Value {
	if b == nil {
		return goja.Null()
	}
	parse, _ := goja.AssertFunction(v.rt.Get("JSON").ToObject(v.rt).Get("parse"))
	val, err := parse(goja.Undefined(), v.rt.ToValue(string(b)))
	if err != nil {
		panic(err) // protojson wrote it: it parses
	}
	return val
}

// response records the call in knee's records and makes k6's Response:
// status, message, headers, trailers, error. On the VU's goroutine.
func (c *grpcClient) response(res grpcResult) goja.Value {
	rt := c.v.rt
	c.v.grpcRecord(res.call)
	if res.err != nil {
		c.throw(res.err)
	}
	md := func(m metadata.MD) goja.Value {
		o := rt.NewObject()
		for k, vals := range m {
			must(o.Set(k, vals))
		}
		return o
	}
	o := rt.NewObject()
	must(o.Set("status", int(res.code)))
	must(o.Set("message", c.v.fromJSON(res.message)))
	must(o.Set("headers", md(res.headers)))
	must(o.Set("trailers", md(res.trailers)))
	must(o.Set("error", c.v.fromJSON(res.errObj)))
	return o
}

// asyncInvoke sends the call on a goroutine of its own and returns a
// Promise the VU's event loop settles when it ends (with the Response, or
// rejected with what invoke would throw); the iteration waits for it.
func (c *grpcClient) asyncInvoke(method string, req, params goja.Value) goja.Value {
	rt := c.v.rt
	p, resolve, reject := rt.NewPromise()
	var r grpcRequest
	if err := c.v.tryJS(func() { r = c.request(method, req, params) }); err != nil {
		must(reject(err))
		return rt.ToValue(p)
	}
	enqueue := c.v.loop.register()
	ctx := c.v.loop.context()
	go func() {
		res := c.invoke(ctx, r)
		enqueue(func() error {
			var val goja.Value
			if err := c.v.tryJS(func() { val = c.response(res) }); err != nil {
				return reject(err)
			}
			return resolve(val)
		})
	}()
	return rt.ToValue(p)
}

// tryJS runs f, returning what it throws (a Go panic with a goja value).
func (v *vu) tryJS(f func()) (thrown any) {
	defer func() {
		if x := recover(); x != nil {
			switch e := x.(type) {
			case *goja.Object, goja.Value:
				thrown = e
			case *goja.Exception:
				thrown = e.Value()
			default:
				panic(x)
			}
		}
	}()
	f()
	return nil
}

// healthCheck is client.healthCheck([service]): grpc.health.v1's Check,
// returning {status} (grpc.HealthCheckServing ...).
func (c *grpcClient) healthCheck(svc goja.Value) goja.Value {
	if c.conn == nil {
		c.throw(errors.New("no gRPC connection, you must call connect first"))
	}
	var name string
	if svc != nil && !goja.IsUndefined(svc) && !goja.IsNull(svc) {
		name = svc.String()
	}
	ctx := withGRPCCall(c.v.ctx, &grpcCall{v: c.v, run: c.v.ctx, tags: c.baseTags(nil)})
	res, err := healthpb.NewHealthClient(c.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: name})
	if err != nil {
		c.throw(err)
	}
	o := c.v.rt.NewObject()
	must(o.Set("status", int(res.GetStatus())))
	return o
}
