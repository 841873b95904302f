package k6script

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/redact"
	"github.com/knee-dev/knee/request"
)

// k6Tags are the tags every sample of this VU carries now, as k6 adds
// them: options.tags, the scenario's tags, scenario and group (k6 leaves
// the group tag empty at the top level, and sets no scenario in setup and
// teardown).
func (v *vu) k6Tags() map[string]string {
	scenario := ""
	if v.shard != nil {
		scenario = v.st.Scenario
	}
	return v.tagsFor(scenario, v.group)
}

// tagsFor builds the tags of k6Tags for a scenario ("" in setup and
// teardown) and a group; safe on any goroutine (it reads only options).
func (v *vu) tagsFor(scenario, group string) map[string]string {
	tags := make(map[string]string, 16)
	for k, val := range v.s.Options.Tags {
		tags[k] = val
	}
	if scenario != "" {
		for k, val := range v.s.Options.Scenarios[scenario].Tags {
			tags[k] = val
		}
		tags["scenario"] = scenario
	}
	tags["group"] = group
	return tags
}

// k6Hops makes call report each request of its redirect chain to the k6
// metrics as one request, with the tags k6's httpext transport gives it
// (hopTags). It runs on the VU's goroutine, and takes there what the
// hook needs of the VU; the hook may run on another (http.batch). b must
// not move after it (the hook is bound to b).
func (v *vu) k6Hops(b *builtCall, custom map[string]string) {
	h := &b.hops
	*h = hopState{v: v, group: v.group, method: b.call.Method, custom: custom, ctx: v.ctx}
	if v.shard != nil { // setup and teardown have no scenario
		h.scenario = v.st.Scenario
	}
	// The shard, taken here on the VU's goroutine: the hook may run on
	// another (http.batch). Setup and teardown have none (nil).
	h.phases, _ = v.shard.(phaseSink)
	b.call.OnHop = b.onHop
}

// hopState is what a call's hook (builtCall.onHop) keeps: the VU's state
// when the call was made, and the hops so far.
type hopState struct {
	v               *vu
	group, scenario string
	phases          phaseSink
	ctx             context.Context
	custom          map[string]string
	method          string // the next hop's, as the client follows the redirects
	n               int    // hops so far
}

// onHop records one hop of b's call (see k6Hops).
func (b *builtCall) onHop(hop *request.Reply) {
	h := &b.hops
	v := h.v
	h.n++
	v.wireOut.Add(hop.BytesOut)
	v.wireIn.Add(hop.BytesIn)
	if h.ctx.Err() != nil {
		// The run's end cut the call short: k6 pushes no sample once
		// the VU's context is done (metrics.PushIfNotDone), so the hop
		// counts in none of its metrics or outputs. knee's own records
		// keep the request (as an error).
		return
	}
	cb, red, named, scenario, group := b.callback, v.s.cfg.Redact, b.named, h.scenario, h.group
	expected := cb.verdict(hop)
	ok := expected > 0 || expected == 0 && hop.Err == nil && hop.Status < 400
	// A null response callback turns the judgement off: k6 then
	// writes no http_req_failed and no expected_response tag.
	judged := !cb.set || cb.statuses != nil
	if h.n == 1 && judged {
		ok = firstHopExpected(b.auth, hop, ok) // k6 expects the challenge
	}
	hopMethod := h.method
	tags := func() map[string]string {
		return hopTags(v.tagsFor(scenario, group), h.custom, named, k6CleanURL(red, hop.URL), hopMethod, hop, judged, ok)
	}
	failed := 1.0
	if ok || !judged {
		failed = math.NaN()
		if judged {
			failed = 0
		}
	}
	t := hop.Timings
	if h.phases != nil {
		h.phases.RecordPhases(scenario, record.Phases{t.Blocked, t.Connecting, t.TLSHandshaking, t.Sending, t.Waiting, t.Receiving})
	}
	if out := v.s.out; out != nil {
		tm := tags() // the output's row and the submetrics, made once
		tags = func() map[string]string { return tm }
		out.request(&hopRow{done: hop.Done, tags: tm, expected: ok, judged: judged, t: t})
	}
	// in hopPoints' order
	vals := [len(hopPoints)]float64{1, ms(t.Duration), ms(t.Blocked), ms(t.Connecting), ms(t.TLSHandshaking),
		ms(t.Sending), ms(t.Waiting), ms(t.Receiving), failed}
	v.s.k6.addHop(group, tags, &vals, judged && ok)
	// The method of the next hop, as the client follows it.
	if hop.Status == http.StatusSeeOther || (hop.Status == http.StatusMovedPermanently || hop.Status == http.StatusFound) && h.method == http.MethodPost {
		h.method = http.MethodGet
	}
}

// k6CleanURL is a request's URL as k6 tags it (lib/netext/httpext/url.go
// URL.Clean): its userinfo masked as "****:****", or "****" without a
// password; the query values knee is told to mask (--redact-query) masked
// too, as knee masks them everywhere.
func k6CleanURL(red *redact.Redactor, raw string) string {
	masked := red.Name(raw)
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return masked
	}
	mask := "****"
	if _, ok := u.User.Password(); ok {
		mask = "****:****"
	}
	return strings.Replace(masked, "://"+redact.Mask+"@", "://"+mask+"@", 1)
}

// hopTags are the tags k6's httpext transport gives a request (a hop),
// as lib/netext/httpext/transport.go's measureAndEmitMetrics sets them
// with the default system tags: on the VU's (base) and the params' tags,
// name and url are the name tag when one is set anywhere (params.tags,
// a scenario's or options.tags, else an http.url template, named), both
// the hop's URL otherwise; method; on an error, error, error_code and
// status "0"; else status, error_code from 400 on, proto and, over TLS,
// tls_version; expected_response when a response callback judged it.
func hopTags(base, custom map[string]string, named, url, method string, hop *request.Reply, judged, ok bool) map[string]string {
	tags := base
	for k, val := range custom {
		tags[k] = val
	}
	name, set := tags["name"]
	switch {
	case set:
	case named != "":
		name = named
	default:
		name = url
	}
	tags["name"], tags["url"], tags["method"] = name, name, method
	if hop.Err != nil {
		code, msg := k6Error(hop.Err)
		tags["error"], tags["error_code"], tags["status"] = msg, strconv.Itoa(code), "0"
	} else {
		tags["status"] = strconv.Itoa(hop.Status)
		if code := errorCode(hop); code != 0 {
			tags["error_code"] = strconv.Itoa(code)
		}
		if hop.Proto != "" {
			tags["proto"] = hop.Proto
		}
		if v := tlsVersionName(hop.TLSVersion); v != "" {
			tags["tls_version"] = v
		}
	}
	if judged {
		tags["expected_response"] = strconv.FormatBool(ok)
	}
	return tags
}

// k6Wire records the bytes the VU's requests moved since its last call
// ended as k6's data_sent and data_received, with the VU's tags: k6 sends
// them at the end of every iteration (interrupted too), setup and
// teardown (its VU's Dialer.IOSamples), whatever the context, 0 too (a
// script without requests has data_sent 0 B in k6's summary); not for
// handleSummary, whose samples k6 drops.
func (v *vu) k6Wire() { v.k6End(0, false) }

// k6End records the end of a call: its wire bytes (k6Wire) and, for an
// iteration that ran to its end (full), iteration_duration d and
// iterations, at one time and in the order k6's runFn sends them
// (internal/js/runner.go: IOSamples, then iterationSamples); an
// interrupted iteration counts in neither.
func (v *vu) k6End(d time.Duration, full bool) {
	out, in := v.wireOut.Swap(0), v.wireIn.Swap(0)
	pts := [...]k6Point{{k6metric.DataSent, float64(out)}, {k6metric.DataReceived, float64(in)},
		{k6metric.IterationDuration, ms(d)}, {k6metric.Iterations, 1}}
	n := 2
	if full {
		n = len(pts)
	}
	v.s.k6.add(v.group, v.k6Tags, pts[:n]...)
}

// k6Check records one check's result into k6's checks Rate.
func (v *vu) k6Check(name string, pass bool, custom map[string]string) {
	val := 0.0
	if pass {
		val = 1
	}
	v.s.k6.add(v.group, func() map[string]string {
		tags := v.k6Tags()
		for k, val := range custom {
			tags[k] = val
		}
		tags["check"] = name
		return tags
	}, k6Point{k6metric.Checks, val})
}

// k6Custom records a value of a custom metric, with the tags given to add().
func (v *vu) k6Custom(name string, val float64, custom map[string]string) {
	v.s.k6.add(v.group, func() map[string]string {
		tags := v.k6Tags()
		for k, x := range custom {
			tags[k] = x
		}
		return tags
	}, k6Point{name, val})
}

// wsRecorder records a WebSocket session's points (k6/ws, k6/websockets)
// into the k6 metrics (and so k6's output rows), all with tags (called
// once, then only read: safe on any goroutine); the
// time Trends (ws_connecting, ws_session_duration, ws_ping) also go to the
// VU's shard as the scenario's Trend series, as an import of k6's output
// records them. Points after ctx's end are dropped, as k6's PushIfNotDone
// drops them. Call it on the VU's goroutine; the recorder is safe on any.
func (v *vu) wsRecorder(ctx context.Context, group string, tags func() map[string]string) func(...k6Point) {
	k6 := v.s.k6
	var ts trendSink
	scenario := ""
	if v.shard != nil { // setup and teardown: not part of the test's numbers
		ts, _ = v.shard.(trendSink)
		scenario = v.st.Scenario
	}
	var once sync.Once
	var t map[string]string
	get := func() map[string]string { once.Do(func() { t = tags() }); return t }
	return func(points ...k6Point) {
		if ctx.Err() != nil {
			return
		}
		k6.add(group, get, points...)
		if ts != nil {
			for _, p := range points {
				switch p.metric {
				case k6metric.WSConnecting, k6metric.WSSessionDuration, k6metric.WSPing:
					ts.RecordTrend(scenario, p.metric, TrendDuration(p.value))
				}
			}
		}
	}
}

// RecordVUs adds one sample of k6's vus and vus_max gauges, as k6's
// scheduler emits them each second from its start to the end of
// teardown (execution/scheduler.go emitVUsAndVUsMax), with the test-wide
// tags (options.tags) only: active is how many VUs are active now (k6's
// currently active VUs), initialised how many VUs exist (k6's
// initialised VUs, which never falls).
func (s *Script) RecordVUs(active, initialised int64) {
	tags := func() map[string]string {
		out := make(map[string]string, len(s.Options.Tags))
		for k, v := range s.Options.Tags {
			out[k] = v
		}
		return out
	}
	s.k6.add("", tags, k6Point{k6metric.VUs, float64(active)}, k6Point{k6metric.VUsMax, float64(initialised)})
}

// RecordDropped records n iterations of scenario that an arrival-rate
// executor dropped as k6's dropped_iterations, one sample of 1 each, with
// the test-wide tags (options.tags) and the scenario's name, as k6's
// executors send them (lib/executor: getMetricTags); so the k6 outputs
// have a row per drop. Safe on load's scheduler goroutines.
func (s *Script) RecordDropped(scenario string, n int64) {
	tags := func() map[string]string {
		out := make(map[string]string, len(s.Options.Tags)+1)
		for k, v := range s.Options.Tags {
			out[k] = v
		}
		out["scenario"] = scenario
		return out
	}
	for range n {
		s.k6.add("", tags, k6Point{k6metric.DroppedIterations, 1})
	}
}

// VUsTaken is how many of load's VU ids took a runtime in scenario so
// far. The open model starts a VU beyond the pre-allocated ones only when
// every one is busy and gives a retired VU's id to the next it starts,
// so this is the most VUs it has had at once: what k6 has initialised
// for it (k6 keeps an unplanned VU once made). Runtimes made ahead count
// only once a VU takes one.
func (s *Script) VUsTaken(scenario string) int64 {
	x, ok := s.scenarios.Load(scenario)
	if !ok {
		return 0
	}
	return x.(*iteration).taken.Load()
}
