// Package k6script runs k6 scripts unchanged on knee's load engine.
//
// A script and its imports are bundled as ES modules with esbuild, the
// bundle wrapped in an async function so top-level await works as in k6
// (bundle.go, toplevel.go), compiled once with goja, and run in one goja
// runtime per VU: each VU runs the init code once, as k6 does, awaits
// included (its options and exports are read once that has settled), then
// calls the exported function of its scenario once per iteration. The k6
// modules (mod_*.go, one file per module) are Go objects the program
// requires; HTTP goes through package request's Caller, synchronously on
// the VU's goroutine.
//
// Timing is knee's, not k6's: the iteration records its own samples
// (load.SelfRecording). In the open model every request of an iteration is
// charged the iteration's start lag, so its latency counts from when it
// would have been sent had the iteration started on time; its service time
// is recorded too. In the closed model each VU's
// iteration interval is recorded once per iteration, so coordinated
// omission is detected and corrected as for any closed run.
//
// Modules: k6 (check, sleep, group, fail), k6/http (the request functions,
// batch, cookies, Response with timings and json(selector)), k6/metrics,
// k6/data (SharedArray), k6/execution, k6/encoding, k6/crypto, the
// WebCrypto global crypto (webcrypto.go), k6/html,
// k6/timers (timers.go: they fire before the call that set them ends;
// loop.go is the VU's event loop that runs them and modules' callbacks),
// k6/ws (mod_ws.go: ws.connect runs the socket's handlers and timers on
// the VU's goroutine until it closes, on gorilla/websocket as k6 does),
// k6/websockets and k6/experimental/websockets (mod_websockets.go: the
// WebSocket class and Blob; each socket's goroutines hand its events to
// the VU's event loop, and the call that opened it ends once it closed),
// k6/net/grpc (mod_grpc.go on grpc-go, .proto files parsed by
// protocompile as k6's; grpcreflect.go, server reflection; grpcstream.go,
// streams whose handlers the VU's event loop runs; a unary call is one
// request in knee's records, its gRPC status as HTTP's, see
// grpcHTTPStatus); console.* (rate-limited) and open() in the init code,
// k6/experimental/fs and k6/experimental/csv (mod_fs.go, mod_csv.go: the
// file's bytes read once and shared, Promises settled when returned).
// Browser, the other experimental modules (gRPC's graduated:
// k6/net/grpc), extensions fail in Load, naming the place and
// what to do instead.
//
// Remote modules (remote.go): an https:// import, and every import of a
// remote module, is resolved by k6's rules (relative to the importing
// module's URL; http://, bare names and a remote module's file:// refused),
// downloaded when the script is bundled (bounded in size and time, over
// https:// only) and kept in Modules.Cache, one file per URL; with
// Modules.Offline they come from there alone.
//
// handleSummary (summary.go): Script.SummaryData builds k6's data object
// (metrics, root_group, options, state, setup_data) from K6Metrics and
// the checks; Script.HandleSummary calls the script's function on it in a
// runtime of its own and reads its result as k6 does. Writing what it
// returns is the caller's.
//
// k6's metrics (K6Metrics, k6metrics.go, k6record.go) are summed beside
// knee's as k6 v1.8.1 defines them: every request and redirect hop is one
// http_reqs (request.Call.OnHop), setup's and teardown's count,
// http_req_duration is sending + waiting + receiving, and every sample
// carries k6's tags (method, url, name, status, expected_response, group,
// scenario, custom tags); vus and vus_max are the Gauges the runner samples
// each second (RecordVUs), as k6's scheduler does. The script's thresholds
// are judged on them, on
// any metric{tag:value} submetric, with k6's Trend percentile
// (interpolated between sorted values; every value kept up to TrendKeep
// per series, a uniform sample beyond). Requests' http_req_failed follows
// k6's rule (a transport error or a status >= 400) or the response
// callback given (http.setResponseCallback, the responseCallback param:
// http.expectedStatuses or null), counted apart from knee's errors
// (transport errors and 5xx).
//
// res.json(selector) uses gjson, as k6 does. params auth 'digest' is k6's
// two requests (http_digest.go), auth 'ntlm' its handshake on the VU's
// connection (http_ntlm.go, go-ntlmssp's messages), res.submitForm its form rules
// (http_form.go), res.clickLink its link rules (http_link.go), res.ocsp
// the stapled response (http_ocsp.go).
// Thresholds with abortOnFail (and delayAbortEval) are kept in
// Plan.AbortOnFail; the runner judges them as the run goes, every 2 s as
// k6, and stops the test at once, as test.abort() does. APIs knee
// lacks (k6/websockets' Blob.stream(), k6/execution's vu.tags,
// vu.metrics, scenario.progress and test.options) are refused by Load,
// found in the script's files (refuse.go).
//
// Known differences from k6: shared-iterations and per-vu-iterations run
// as constant-vus with an iteration count (per-vu-iterations also with
// each VU's share), alone in their script;
// a response callback is http.expectedStatuses(...) or null, never a
// JavaScript function (k6 allows no other either); imported modules with
// top-level await run one after the other, in import order (esbuild's
// bundle), where the ES spec may start a sibling while another awaits.
//
// Entry points: Load reads and checks a script (every problem before the
// test starts, as file:line:col); Script.Plan maps its options onto
// scenario.Config; Script.Iteration gives each scenario's load.Iteration.
package k6script
