// Package request turns request templates into HTTP requests and sends them:
// it implements load.Iteration.
//
// A template is a string with placeholders: {vu} and {iter} are the VU and
// iteration numbers (the article bypasses a cache with ?run={vu}-{iter}),
// and {name} is one value of the list Vars[name]. Which value, and which of
// several weighted requests an iteration sends, is a hash of (seed, vu, iter):
// deterministic for a seed and free of any shared random source, so VUs never
// contend on a lock to pick. One variable takes one value per iteration, in
// every field of the request. Values are inserted as written, not escaped:
// give URL-safe values for URLs.
//
// A '{' starts a placeholder only when a letter or '_' follows it, so JSON
// bodies such as {"isbn": "{isbn}"} need no escaping; write {{ for a literal
// '{' where a placeholder would otherwise start. '}' is always literal.
//
// Clients: plain http:// requests go through a lean HTTP/1.1 client of this
// package unless the Options ask for HTTP/2, a connection cap per host, a
// RoundTripper of their own, NetHTTPOnly or Transport.Client ClientNetHTTP
// (--client net/http); everything else (https://, URLs with user info or
// bytes net/url would escape, header values net/http would refuse, a Host
// header IDNA refuses or with an IPv6 zone) goes through net/http. The lean
// client keeps one keep-alive connection per VU, renders each request into
// one reused buffer and writes it with one call, and times out with the
// connection's deadline. It reads the response's framing (status lines,
// headers, Content-Length, chunked, trailers, Connection) exactly as
// net/http does, with net/http's limits, and discards the body:
// FuzzReadResponse holds both to the same verdict, body length and
// connection reuse for any bytes. A k6 VU's own connections (Conns) render
// and parse with the same code, keeping the header fields and the body as
// net/http's ReadResponse leaves them (and skipping 1xx responses as its
// Transport does), which the fuzz target holds to net/http byte for byte.
// It sends what net/http sends (the same
// Host, in punycode; User-Agent and Content-Length rules), classifies
// errors alike, and, as net/http does, sends a GET, HEAD, OPTIONS or TRACE
// once more on a new connection when a reused one was found closed before
// any byte of the response. It writes a request over 16 KiB while it reads
// the response, so a server that answers early (413, 401) and closes
// during an upload is heard (net/http often reports the write's reset
// instead). It allocates nothing per request (TestDoAllocatesNothing),
// costs less than half of net/http's CPU per request, and one goroutine per
// VU instead of three.
//
// Event loop (load's engine for both models, load.LoopIteration): Sender.NewLoop
// returns a Loop that sends the lean client's requests from one goroutine
// over non-blocking sockets in an epoll set of its own (Linux), with the
// same rendering, parser, limits, retry, keep-alive (a connection per VU,
// an overflow per authority) and error classes, so that its results are
// Do's (every test written for Do also runs on it). What it does not do
// itself goes to a goroutine: a request the lean client would not send, or
// over 16 KiB, runs through Do; a response not ended within 64 KiB or 8
// reads is finished by the blocking parser and its connection comes back;
// a name is resolved once per authority (requests go through Do until it
// is). A keep-alive request through it allocates nothing
// (TestLoopAllocatesNothing).
//
// Receive times, one rule for every client: a reply's Done is the
// kernel's receive time of its last bytes when the kernel gave one, else
// the time knee read them, never earlier than the request was sent. The
// clients that read their own sockets (the lean client, its event loop and
// a k6 VU's Conns, on Linux) read with recvmsg on sockets with
// SO_TIMESTAMPNS and carry the stamp onto the monotonic clock (arrivedAt);
// Conns times its first byte (Timings.Waiting) the same way. The loop may
// read a reply only at its next wake-up (see sleepThrough), and a VU
// blocked in Do waits for the netpoller to wake it and then for a
// processor, which at saturation took longer than the reply (closed model,
// 64 VUs at full speed: latency p50 1.1–1.25 ms timed at the read,
// 0.58–0.67 ms from the arrival). Linux turns receive stamps on from a work
// queue once the first socket asks, so the first replies of a process may
// come unstamped: those, and replies through net/http (which reads its
// sockets itself), are timed at the read.
//
// Host headers: both clients refuse one that is not a valid host[:port]
// (net/http alone would send an empty Host).
//
// Concurrency: a Sender is safe for concurrent use by any number of VUs. The
// lean client's per-VU connection is taken and returned without locks; two
// calls with the same VU at once each get a connection (the second from a
// shared pool). Scratch buffers come from a sync.Pool.
//
// Bytes: Result.BytesOut counts what went over the wire of the request
// (request line, headers, body; each attempt when one is sent again) and
// Result.BytesIn what came back (status lines, headers, the body as framed,
// everything read before a failure), as k6's data_sent and data_received.
// net/http's connections count through a wrapper its dialer returns; a new
// TLS connection's handshake counts with its first request, and streams
// sharing an HTTP/2 connection at once share its counts.
package request
