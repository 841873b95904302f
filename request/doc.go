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
// Concurrency: a Sender is safe for concurrent use by any number of VUs. It
// keeps no per-VU state; scratch buffers come from a sync.Pool.
//
// Bytes: Result.BytesIn counts the response body as received on the wire
// (compression is never negotiated behind the caller's back) and
// Result.BytesOut the request body; headers are not counted.
package request
