package k6script

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/knee-dev/knee/internal/limits"
	"github.com/knee-dev/knee/load"
	"github.com/knee-dev/knee/request"
)

// vu is one VU's runtime and what its current iteration needs. Only the
// VU's own goroutine touches it.
type vu struct {
	s       *Script
	id      uint64
	rt      *goja.Runtime
	exports *goja.Object
	fns     map[string]goja.Callable
	data    goja.Value // setup()'s result, parsed once per VU
	dataSet bool
	init    bool // running the init code: open() is allowed
	// aborting: this iteration called test.abort(). k6 cancels the run once
	// it has returned, so it counts whole and is no iteration error.
	aborting bool
	conns    *request.Conns
	jar      *jarObject                  // the VU's own cookie jar
	jars     map[*goja.Object]*jarObject // jar objects by their JavaScript object
	watched  <-chan struct{}             // the context whose end interrupts rt
	unwatch  func() bool

	// the iteration in progress
	ctx      context.Context
	st       load.Start
	shard    load.ShardSink
	pending  load.Sample
	pendingN int // samples of this iteration recorded or pending
	last     load.Result
	env      map[string]string // the scenario's env, added to __ENV
	// envVals are __ENV's values as the script read them, made once per
	// key while the VU runs one scenario (envScenario), not at every read.
	envVals     map[string]goja.Value
	envScenario string
	envOwn      map[string]string // what the script itself set in __ENV
	group       string            // the current group path, "::a::b"
	// Group paths this VU has recorded (group_duration, requests), so the
	// script's shared set is locked once per VU and group.
	seenGroups, seenReqGroups map[string]bool
	groupNames                map[string]string        // group path -> the name it is recorded under (groupName)
	checks                    map[checkKey]*checkCount // the script's counters of this VU's checks (checkCount)
	iterInTest                int64                    // k6/execution scenario.iterationInTest
	scStart                   time.Time                // k6/execution scenario.startTime
	callback                  responseCallback         // http.setResponseCallback's, for every request without its own
	timers                    *timers                  // setTimeout's and setInterval's, run before a call ends
	loop                      *loop                    // runs the timers and modules' callbacks before a call ends
	timerExports              *goja.Object             // k6/timers: the same functions as the globals
	closers                   []func()                 // what Script.Close releases with the VU (gRPC connections)
	// Bytes this VU's requests moved since its last call ended, for k6's
	// data_sent and data_received (added from http.batch's goroutines too).
	wireOut, wireIn atomic.Int64

	fsFiles map[*goja.Object]*fsFile // k6/experimental/fs's File objects, for k6/experimental/csv
	plain   http.Header              // plainHeader's
	// function is the runtime's own Function constructor, taken before
	// the script runs (isAsyncFunction).
	function *goja.Object
}

// close releases what the VU holds: its connections.
func (v *vu) close() {
	v.conns.Close()
	for _, f := range v.closers {
		f()
	}
	v.closers = nil
}

// errStopped interrupts a runtime when the run stops.
var errStopped = errors.New("the run stopped")

// newVU makes a runtime and runs the init code in it; ctx's end interrupts
// the init code (a script looping at its top level stops on Ctrl-C).
func (s *Script) newVU(ctx context.Context, id uint64) (*vu, error) {
	rt := goja.New()
	v := &vu{s: s, id: id, rt: rt, fns: map[string]goja.Callable{}, ctx: context.Background(), init: true, conns: request.NewConns(), jars: map[*goja.Object]*jarObject{}}
	g := rt.GlobalObject()
	v.function, _ = g.Get("Function").(*goja.Object)
	must(g.Set("__VU", id))
	must(g.Set("__ITER", 0))
	must(g.Set("__ENV", rt.NewDynamicObject(&envObject{v: v})))
	must(g.Set("console", s.con.object(v)))
	must(g.Set("open", v.open))
	installLazyWebCrypto(rt)
	v.timers = &timers{v: v, live: map[int64]bool{}}
	v.timerExports = v.timers.install()
	v.loop = newLoop(rt)
	v.loop.timers = v.timers
	exported := v.catchExports(s.async, s.cjsEntry)
	loaded := map[string]*goja.Object{}
	must(g.Set("require", func(name string) *goja.Object {
		if o, ok := loaded[name]; ok {
			return o
		}
		m, ok := modules()[name]
		if !ok {
			panic(rt.NewGoError(fmt.Errorf("module %q is not one knee provides", name)))
		}
		// The module's members sit on the prototype of an empty object:
		// esbuild's interop (__toESM) copies every own property of what
		// require returns into a new object with a getter closure and a
		// property descriptor each, per VU, and keeps the prototype. With
		// none to copy, an import costs each VU nothing but the module
		// (k6/http's 40 members cost ~55 KB per VU as own properties).
		o := rt.NewObject()
		must(o.SetPrototype(m(v)))
		loaded[name] = o
		return o
	}))
	stop := context.AfterFunc(ctx, func() { rt.Interrupt(errStopped) })
	// the init code's timers and modules' callbacks run before init ends, as in k6
	var res goja.Value
	err := v.loop.call(ctx, func() (err error) { res, err = rt.RunProgram(s.prog); return err })
	if err == nil && s.async {
		err = initSettled(res) // top-level awaits (toplevel.go)
	}
	if !stop() {
		// The interrupt may have fired after the program ended: clear it,
		// or the runtime's next call would fail (ctx ended: the run stops).
		rt.ClearInterrupt()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("init code: %w", ErrInterrupted)
		}
		return nil, &ScriptError{Msg: "init: " + jsError(err)}
	}
	v.init = false
	ex := exported()
	v.exports = ex
	for _, k := range ex.Keys() {
		if fn, ok := goja.AssertFunction(ex.Get(k)); ok {
			v.fns[k] = fn
		}
	}
	return v, nil
}

func must(err error) {
	if err != nil {
		panic(err) // only a frozen global object fails, which a new runtime never has
	}
}

// jsError is an exception's message with the script's file:line:col.
func jsError(err error) string {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		msg := ex.Value().String()
		if frames := ex.Stack(); len(frames) > 0 {
			for _, f := range frames {
				p := f.Position()
				if p.Filename != "" && p.Line > 0 {
					name := strings.TrimPrefix(p.Filename, remoteNS+":") // a remote module: its URL
					return fmt.Sprintf("%s:%d:%d: %s", name, p.Line, p.Column, msg)
				}
			}
		}
		return msg
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return "interrupted: " + fmt.Sprint(ie.Value())
	}
	return err.Error()
}

// setupData is setup()'s result in this runtime (undefined when none).
func (v *vu) setupData() goja.Value {
	if !v.dataSet {
		v.dataSet = true
		v.data = goja.Undefined()
		if v.s.setupRaw != "" {
			parse, _ := goja.AssertFunction(v.rt.Get("JSON").ToObject(v.rt).Get("parse"))
			if d, err := parse(goja.Undefined(), v.rt.ToValue(v.s.setupRaw)); err == nil {
				v.data = d
			}
		}
	}
	return v.data
}

// callPlain calls an exported function outside any iteration (setup, teardown).
func (v *vu) callPlain(ctx context.Context, name string, arg goja.Value) (goja.Value, error) {
	fn := v.fns[name]
	v.ctx, v.shard = ctx, nil
	stop := context.AfterFunc(ctx, func() { v.rt.Interrupt(errStopped) })
	defer stop()
	args := []goja.Value{}
	if arg != nil {
		args = append(args, arg)
	}
	var res goja.Value
	err := v.loop.call(ctx, func() (err error) { res, err = fn(goja.Undefined(), args...); return err })
	if err == nil {
		res, err = settled(res)
	}
	if err != nil {
		return nil, errors.New(jsError(err))
	}
	return res, nil
}

// settled is an async function's result: its Promise's value, or its
// rejection as the error. knee's requests (asyncRequest included) complete
// synchronously, and the call's event loop (loop.go) has run every timer
// and every callback a module registered, so every await has settled; a
// Promise still pending waits on something knee does not have.
func settled(res goja.Value) (goja.Value, error) {
	p, ok := res.Export().(*goja.Promise)
	if !ok {
		return res, nil
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return p.Result(), nil
	case goja.PromiseStateRejected:
		if ex, ok := p.Result().Export().(error); ok {
			return nil, ex
		}
		return nil, fmt.Errorf("%s", p.Result().String())
	}
	return nil, errors.New("the function's Promise is still pending when it returned: nothing knee runs (requests, timers) settles it")
}

// iterate runs one iteration of exec and records its requests into shard.
func (v *vu) iterate(ctx context.Context, exec string, env map[string]string, st load.Start, shard load.ShardSink) {
	v.ctx, v.st, v.shard, v.env = ctx, st, shard, env
	if st.Scenario != v.envScenario { // another scenario's env
		v.envVals, v.envScenario = nil, st.Scenario
	}
	v.pendingN = 0
	v.last = load.Result{}
	v.aborting = false
	must(v.rt.Set("__ITER", st.Iter))
	v.iterInTest = v.s.iterationCounter(st.Scenario).Add(1) - 1
	if v.jar != nil && !v.s.Options.NoCookiesReset && v.jar.jar.set.Load() {
		v.jar.jar = newJar() // k6 empties the VU's jar at each iteration; its JavaScript object stays
	}
	v.s.exec.active.Add(1)
	defer v.s.exec.active.Add(-1)
	v.watch(ctx)
	began := time.Now()
	var ret goja.Value
	err := v.loop.call(ctx, func() (err error) { ret, err = v.fns[exec](goja.Undefined(), v.setupData()); return err })
	if err == nil {
		_, err = settled(ret)
	}
	// The iteration is judged and timed where the function returned, as
	// k6's runFn does (internal/js/runner.go), before minIterationDuration's
	// padding: k6's iteration_duration leaves the padding out, and a run
	// ending during the padding does not interrupt the iteration.
	d := time.Since(began)
	cut := ctx.Err() != nil && !v.aborting // the run's end cut it short (a sleep returns early, a request fails)
	v.k6End(d, !cut)                       // every iteration's bytes, interrupted or not, as k6 sends them
	if cut {
		v.s.exec.interrupted.Add(1)
	} else {
		v.s.iterations.Add(1)
		v.recordIteration(d)
	}
	if m := v.s.Options.MinIterationDuration; m != nil && !cut {
		// k6's minIterationDuration: the VU starts its next iteration no
		// sooner, the rest spent as a sleep (cut short when the run ends).
		if rest := time.Duration(*m) - d; rest > 0 {
			t := time.NewTimer(rest)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
	}
	if err != nil && !cut && !v.aborting {
		msg := jsError(err)
		v.s.errs.add(msg)
		v.s.con.errorf("iteration error (VU %d, iteration %d): %s", v.id, st.Iter, msg)
	}
	v.flush()
}

// watch interrupts the runtime when ctx ends. A VU's iterations share one
// context, so it is watched once, not once per iteration.
func (v *vu) watch(ctx context.Context) {
	done := ctx.Done()
	if done == v.watched {
		return
	}
	if v.unwatch != nil {
		v.unwatch()
	}
	v.rt.ClearInterrupt()
	v.watched, v.unwatch = done, nil
	if done != nil {
		v.unwatch = context.AfterFunc(ctx, func() { v.rt.Interrupt(errStopped) })
	}
}

// record takes one request's reply: in the open model it is charged the
// iteration's start lag; each sample waits until the next one (or the
// iteration's end), so the last one of an iteration can carry the closed
// model's interval.
func (v *vu) record(name string, rep *request.Reply, expected int8) {
	if v.shard == nil { // setup or teardown: not part of the test's numbers
		return
	}
	res := load.Result{Name: name, Status: rep.Status, ErrClass: rep.ErrClass, Err: rep.Err, Expected: expected,
		BytesIn: rep.BytesIn, BytesOut: rep.BytesOut, Sent: rep.Sent, Done: rep.Done}
	smp := load.Sample{Scenario: v.st.Scenario, Result: res, Service: rep.Done.Sub(rep.Sent)}
	smp.Latency = smp.Service
	if !v.st.Intended.IsZero() {
		lag := max(v.st.Called.Sub(v.st.Intended), 0)
		smp.Latency += lag
		smp.SendLag = lag
	}
	if v.group != "" {
		v.groupRequest(v.group, smp.Latency) // k6 tags the request with its group
	}
	if v.pendingN > 0 {
		v.shard.Record(v.pending)
	}
	v.pending = smp
	v.pendingN++
	v.last = res
}

// flush records the iteration's last sample, at its end, with the closed
// model's interval: since the VU's previous iteration start, or, for its
// first iteration, the iteration's own duration (its requests and sleeps,
// read from the clock only then).
func (v *vu) flush() {
	if v.pendingN == 0 || v.shard == nil {
		return
	}
	if v.st.Intended.IsZero() {
		iv := v.st.Interval
		if iv <= 0 {
			iv = time.Since(v.st.Called)
		}
		v.pending.Interval = iv
	}
	v.shard.Record(v.pending)
	v.pendingN = 0
}

// open reads a file relative to the script, in the init code only (as k6).
func (v *vu) open(name string, mode goja.Value) goja.Value {
	if !v.init {
		panic(v.rt.NewGoError(errors.New("open() works only in the init code (outside any function), as in k6; read the file at the top of the script")))
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(v.s.dir, p)
	}
	var b []byte
	if c, ok := v.s.files.Load(p); ok {
		b = c.([]byte)
	} else {
		var err error
		if b, err = limits.ReadFile(p, limits.ScriptOpen, "file a script open()s", "split the data into smaller files, or read only what the test needs"); err != nil {
			panic(v.rt.NewGoError(fmt.Errorf("open(%q): %w", name, unwrapPath(err))))
		}
		v.s.files.Store(p, b)
	}
	if mode != nil && !goja.IsUndefined(mode) && mode.String() == "b" {
		return v.rt.ToValue(v.rt.NewArrayBuffer(append([]byte(nil), b...)))
	}
	return v.rt.ToValue(string(b))
}

// envObject is __ENV: the -e entries, the scenario's env, then the
// process environment.
type envObject struct{ v *vu }

func (e *envObject) Get(key string) goja.Value {
	if val, ok := e.v.envVals[key]; ok {
		return val
	}
	val := goja.Undefined()
	if s, ok := e.lookup(key); ok {
		val = e.v.rt.ToValue(s)
	}
	if len(e.v.envVals) < maxEnvVals {
		if e.v.envVals == nil {
			e.v.envVals = map[string]goja.Value{}
		}
		e.v.envVals[key] = val
	}
	return val
}

// maxEnvVals bounds a VU's cache of __ENV's values (vu.envVals): a script
// reading ever new keys makes them each time instead.
const maxEnvVals = 64

func (e *envObject) lookup(key string) (string, bool) {
	if val, ok := e.v.envOwn[key]; ok {
		return val, true
	}
	if val, ok := e.v.env[key]; ok {
		return val, true
	}
	if val, ok := e.v.s.cfg.Env[key]; ok {
		return val, true
	}
	if e.v.s.cfg.Getenv != nil {
		if val := e.v.s.cfg.Getenv(key); val != "" {
			return val, true
		}
	}
	return "", false
}

func (e *envObject) Set(key string, val goja.Value) bool {
	if e.v.envOwn == nil {
		e.v.envOwn = map[string]string{}
	}
	e.v.envOwn[key] = val.String()
	delete(e.v.envVals, key)
	return true
}

func (e *envObject) Has(key string) bool { _, ok := e.lookup(key); return ok }

func (e *envObject) Delete(key string) bool {
	delete(e.v.envOwn, key)
	delete(e.v.envVals, key)
	return true
}

func (e *envObject) Keys() []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]string{e.v.envOwn, e.v.env, e.v.s.cfg.Env} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// stringify is JSON.stringify(val) in this runtime; a getter that throws
// or a cycle is an error, not a panic.
func (v *vu) stringify(val goja.Value) (string, error) {
	fn, _ := goja.AssertFunction(v.rt.Get("JSON").ToObject(v.rt).Get("stringify"))
	out, err := fn(goja.Undefined(), val)
	if err != nil {
		return "", errors.New(jsError(err))
	}
	if goja.IsUndefined(out) {
		return "", nil
	}
	return out.String(), nil
}
