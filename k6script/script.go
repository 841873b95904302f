package k6script

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/redact"
	"github.com/knee-dev/knee/request"
)

// ScriptError is a problem of the script itself — syntax, an exception in
// its init code, an unsupported API, bad options — found before the test
// starts. Msg names the file, line and column where known.
type ScriptError struct {
	Msg   string
	Setup bool // thrown by setup(): k6's exit code for it is ScriptException's
	// Teardown is thrown by teardown(): k6's scheduler returns it before
	// any other error of the run, with ScriptException's exit code.
	Teardown bool
}

func (e *ScriptError) Error() string { return e.Msg }

// Config is what Load needs besides the script.
type Config struct {
	// Env is __ENV's own entries (-e KEY=VALUE); they outrank Getenv.
	Env map[string]string
	// Getenv, when set, answers __ENV lookups of keys Env lacks (the
	// process environment, as k6 includes it by default).
	Getenv func(string) string
	// Stderr receives console output; nil discards it.
	Stderr Writer
	// Redact masks the secrets of request URLs (userinfo, named query
	// values) where they become request names and k6 output rows; nil
	// masks userinfo only.
	Redact *redact.Redactor
	// Modules says where https:// imports come from (remote.go).
	Modules Modules
}

// Writer is where console output goes.
type Writer interface {
	Write([]byte) (int, error)
}

// Script is a loaded k6 script. After Load it is safe for concurrent use.
type Script struct {
	Path    string
	Options Options

	dir  string
	prog *goja.Program
	// async: bundled in the form for a top-level await (bundle.go);
	// cjsEntry: then the script is CommonJS, its exports the namespace's
	// default.
	async, cjsEntry bool
	cfg             Config
	exports         map[string]bool // exported names that are functions
	caller          *request.Caller
	files           sync.Map // open() cache: path -> []byte

	Checks  *Checks
	metrics *Metrics
	k6      *K6Metrics // k6's own metrics, as k6 sums them
	errs    iterErrors

	iterations atomic.Int64 // iterations finished, every scenario
	exec       execState    // k6/execution's test-wide state
	iterInTest sync.Map     // scenario -> *atomic.Int64, for k6/execution
	sharedData sync.Map     // SharedArray name -> *sharedEntry
	executors  map[string]string
	out        *Output // k6's --out csv or json, or nil
	con        *console

	vus       sync.Map // load's VU id -> *vu
	ready     readyVUs // runtimes made ahead, not yet given to a VU
	taken     chan struct{}
	runtimes  atomic.Int64 // runtimes made for load's VUs: prepared, spare and fresh
	scenarios sync.Map     // scenario name -> *iteration, for VUsTaken
	// vusInitialised is k6's initialised VUs (CountVUsInitialised); nil
	// when no runner counts them.
	vusInitialised atomic.Pointer[func() int64]
	// testRunTime is k6's test run duration so far (TimeTestRun); nil
	// when no runner keeps it.
	testRunTime atomic.Pointer[func() time.Duration]
	setupRaw    string // JSON of setup()'s result; "" when none
}

// Load bundles, compiles and initialises the script once (as VU 0) to read
// its options. Every problem of the script is a *ScriptError; ctx's end
// interrupts the init code (an error wrapping ErrInterrupted).
func Load(ctx context.Context, path string, cfg Config) (*Script, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, &ScriptError{Msg: fmt.Sprintf("%s: %v", path, unwrapPath(err))}
	}
	if cfg.Redact == nil {
		cfg.Redact = redact.New()
	}
	b, err := bundle(ctx, path, cfg.Modules, cfg.Redact)
	if err != nil {
		return nil, err
	}
	if err := refuseLacked(path, b.sourceMap, b.remote); err != nil {
		return nil, err
	}
	ast, err := goja.Parse(path, b.code, parser.WithSourceMapLoader(func(string) ([]byte, error) { return b.sourceMap, nil }))
	if err != nil {
		return nil, &ScriptError{Msg: fmt.Sprintf("%s: %v", path, err)}
	}
	prog, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, &ScriptError{Msg: fmt.Sprintf("%s: %v", path, err)}
	}
	s := &Script{Path: path, dir: filepath.Dir(path), prog: prog, cfg: cfg, Checks: newChecks(), metrics: newMetrics(), k6: newK6Metrics(), exports: map[string]bool{}, async: b.async, cjsEntry: b.cjsEntry}
	s.con = newConsole(cfg.Stderr)
	// HTTP/2 by ALPN for https://, as k6 negotiates it.
	s.caller = request.NewCaller(request.TransportOptions{ALPN: true})
	v, err := s.newVU(ctx, 0)
	if err != nil {
		return nil, err
	}
	for _, k := range v.exports.Keys() {
		if _, ok := goja.AssertFunction(v.exports.Get(k)); ok {
			s.exports[k] = true
		}
	}
	if opts := v.exports.Get("options"); opts != nil && !goja.IsUndefined(opts) && !goja.IsNull(opts) {
		raw, err := v.stringify(opts)
		if err != nil {
			return nil, &ScriptError{Msg: fmt.Sprintf("%s: options: %v", locate(path, "options"), err)}
		}
		o, err := DecodeOptions([]byte(raw))
		if err != nil {
			at := "options"
			if ro := (*refusedOptions)(nil); errors.As(err, &ro) {
				at = ro.first() // the refused option's own key
			}
			return nil, &ScriptError{Msg: fmt.Sprintf("%s: %v", locate(path, at), err)}
		}
		s.Options = o
		if o.InsecureSkipTLSVerify {
			s.caller.Close()
			s.caller = request.NewCaller(request.TransportOptions{ALPN: true, Insecure: true})
		}
	}
	return s, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// locate is path:line:col of the first "name" in the script's own text, or
// path when it is not found (it may come from an imported file).
func locate(path, name string) string {
	return locateRe(path, regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`))
}

// Place is path:line:col of the first "name" in the script's own text
// (e.g. "thresholds", for a problem of options.thresholds), or the path
// when it is not there: every refusal before the start says where.
func (s *Script) Place(name string) string { return locate(s.Path, name) }

// placeScenarios puts each scenario's problem in err at the scenario's key
// in the script (path:line:col), as every other refusal before the start.
func placeScenarios(path string, err error) error {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var se *scenarioError
		if errors.As(e, &se) && se.source == path && se.name == "" {
			se.source = locate(path, "options")
		} else if errors.As(e, &se) && se.source == path {
			// The key, bare or quoted, before its colon: not the same word in
			// an exec name or a comment.
			se.source = locateRe(path, regexp.MustCompile(`(?:\b|['"\x60])`+regexp.QuoteMeta(se.name)+`['"\x60]?\s*:`))
		}
	}
	return err
}

// locateRe is path:line:col of re's first match in the script's own text,
// or path when there is none.
func locateRe(path string, re *regexp.Regexp) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return path
	}
	loc := re.FindIndex(b)
	if loc == nil {
		return path
	}
	line := 1 + strings.Count(string(b[:loc[0]]), "\n")
	col := loc[0] - strings.LastIndexByte(string(b[:loc[0]]), '\n')
	return fmt.Sprintf("%s:%d:%d", path, line, col)
}

// Plan maps the script's options, with the command line's overrides, onto
// knee's scenarios. Every scenario's exec function must be exported.
func (s *Script) Plan(ov Overrides) (*Plan, error) {
	p, err := s.Options.Plan(s.Path, ov)
	if err != nil {
		return nil, &ScriptError{Msg: placeScenarios(s.Path, err).Error()}
	}
	s.executors = map[string]string{}
	for _, sc := range p.Config.Scenarios {
		s.executors[sc.Name] = p.Scenarios[sc.Name].Executor
		exec := p.Scenarios[sc.Name].Exec
		if !s.exports[exec] {
			what := fmt.Sprintf("the script exports no function %q", exec)
			if exec == "default" {
				what = "the script has no default function; add export default function () { ... }"
			}
			return nil, &ScriptError{Msg: fmt.Sprintf("%s: scenario %s: %s", s.Path, sc.Name, what)}
		}
	}
	return p, nil
}

// Prepare initialises n VU runtimes before the test starts, so the first
// iterations do not pay for the init code (k6 initialises its VUs first too).
// VUs beyond them are initialised when first used. ctx's end interrupts it.
func (s *Script) Prepare(ctx context.Context, n int) error {
	s.taken = make(chan struct{}, 1)
	for i := 0; i < n; i++ {
		id := s.ready.reserve()
		v, err := s.newVU(ctx, id)
		if err != nil {
			return err
		}
		s.runtimes.Add(1)
		s.ready.put(id, v)
	}
	return nil
}

// Spares is how many runtimes KeepSpares keeps made ahead.
const Spares = 8

// KeepSpares keeps up to Spares runtimes made ahead, in a goroutine of its
// own, while at most limit runtimes exist in all, until ctx ends; call it
// after Prepare, and the function it returns to wait for the goroutine. A
// VU the open model starts during a stall then takes a runtime whose init
// code already ran, instead of running it (0.5 ms and more) on the path of
// its first request, where it counts as start lag.
func (s *Script) KeepSpares(ctx context.Context, limit int64) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for s.ready.count() < Spares && s.runtimes.Load() < limit && ctx.Err() == nil {
				id := s.ready.reserve()
				v, err := s.newVU(ctx, id)
				if err != nil {
					return // the VU that needs a runtime makes it, and reports the error
				}
				if !s.ready.put(id, v) {
					v.close() // its VU made its own meanwhile
					continue
				}
				s.runtimes.Add(1)
			}
			select {
			case <-ctx.Done():
				return
			case <-s.taken:
			}
		}
	}()
	return func() { <-done }
}

// vuFor returns load's VU id's runtime, taking a prepared one or making
// one (fresh) when the id is new, which it counts in taken (if not nil);
// ctx's end interrupts a fresh one's init.
func (s *Script) vuFor(ctx context.Context, id uint64, taken *atomic.Int64) (v *vu, fresh bool, err error) {
	if x, ok := s.vus.Load(id); ok {
		return x.(*vu), false, nil
	}
	if v = s.ready.take(id); v != nil {
		select {
		case s.taken <- struct{}{}: // KeepSpares makes another
		default:
		}
	} else {
		if v, err = s.newVU(ctx, id); err != nil {
			return nil, false, err
		}
		s.runtimes.Add(1)
		fresh = true
	}
	s.vus.Store(id, v)
	if taken != nil {
		taken.Add(1)
	}
	return v, fresh, nil
}

// Setup runs the script's setup() (if any, and unless options.noSetup:
// then the VUs get undefined, as in k6) and keeps its result for every
// VU's default function, as JSON as k6 passes it. setup() gets the
// script's setupTimeout (k6's default: 60 s); past it the error is a
// *TimeoutError, and ctx's end interrupts it (ErrInterrupted).
func (s *Script) Setup(ctx context.Context) error {
	if !s.exports["setup"] || s.Options.NoSetup {
		return nil
	}
	v, err := s.newVU(ctx, 0)
	if err != nil {
		return fmt.Errorf("setup(): %w", err)
	}
	// k6 runs setup() in a group of that name (internal/js/runner.go
	// runPart): its samples carry the group tag "::setup".
	v.group = "::setup"
	res, err := v.callTimed(ctx, "setup", nil, s.Options.SetupTimeout)
	v.k6Wire() // whatever its end, as k6's runFn
	if err != nil {
		var te *TimeoutError
		if errors.As(err, &te) || errors.Is(err, ErrInterrupted) {
			return err
		}
		return &ScriptError{Msg: "setup(): " + err.Error(), Setup: true}
	}
	if res != nil && !goja.IsUndefined(res) {
		b, err := v.stringify(res)
		if err != nil {
			return &ScriptError{Msg: "setup(): its result cannot be passed to the VUs as JSON: " + err.Error(), Setup: true}
		}
		s.setupRaw = b
	}
	return nil
}

// Teardown runs the script's teardown(data) (if any, and unless
// options.noTeardown), within the script's
// teardownTimeout (k6's default: 60 s; past it a *TimeoutError); ctx's end
// interrupts it (ErrInterrupted).
func (s *Script) Teardown(ctx context.Context) error {
	if !s.exports["teardown"] || s.Options.NoTeardown {
		return nil
	}
	v, err := s.newVU(ctx, 0)
	if err != nil {
		return fmt.Errorf("teardown(): %w", err)
	}
	v.group = "::teardown" // as setup's
	_, err = v.callTimed(ctx, "teardown", v.setupData(), s.Options.TeardownTimeout)
	v.k6Wire() // whatever its end, as k6's runFn
	if err != nil {
		var te *TimeoutError
		if errors.As(err, &te) || errors.Is(err, ErrInterrupted) {
			return err
		}
		if v.aborting { // test.abort(): k6's interrupt, exit 108, not an exception
			return fmt.Errorf("teardown(): %w", err)
		}
		return &ScriptError{Msg: "teardown(): " + err.Error(), Teardown: true}
	}
	return nil
}

// DefaultPhaseTimeout is k6's default setupTimeout and teardownTimeout.
const DefaultPhaseTimeout = 60 * time.Second

// ErrInterrupted is wrapped by the error of init code, setup() or
// teardown() cut short because the run was stopped (a signal).
var ErrInterrupted = errors.New("interrupted: the run was stopped")

// TimeoutError is setup() or teardown() running past its timeout
// (setupTimeout, teardownTimeout); k6 exits 100 and 101 for them.
type TimeoutError struct {
	Phase   string // "setup" or "teardown"
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s() execution timed out after %s: it was interrupted; raise options.%sTimeout if it needs longer", e.Phase, e.Timeout, e.Phase)
}

// callTimed is callPlain within timeout (nil: DefaultPhaseTimeout).
func (v *vu) callTimed(ctx context.Context, name string, arg goja.Value, timeout *Duration) (goja.Value, error) {
	d := DefaultPhaseTimeout
	if timeout != nil {
		d = time.Duration(*timeout)
	}
	te := &TimeoutError{Phase: name, Timeout: d}
	tctx, cancel := context.WithTimeoutCause(ctx, d, te)
	defer cancel()
	res, err := v.callPlain(tctx, name, arg)
	if err != nil && tctx.Err() != nil {
		if context.Cause(tctx) == te {
			return nil, te
		}
		return nil, fmt.Errorf("%s(): %w", name, ErrInterrupted)
	}
	return res, err
}

// IterationErrors is how many iterations ended in an exception, and the first one's message.
func (s *Script) IterationErrors() (int64, string) { return s.errs.get() }

// Iterations counts the iterations that ran to their end (an exception
// included), every scenario's.
func (s *Script) Iterations() int64 { return s.iterations.Load() }

// K6Builtins are k6's built-in metrics as k6 sums them, under k6's names:
// every request and redirect hop, setup's and teardown's included, with
// k6's http_req_duration (sending + waiting + receiving) and k6's
// percentiles (interpolated between the sorted values); their Values are
// k6's summary's, a Counter's rate over a test run of d.
func (s *Script) K6Builtins(d time.Duration) []K6Stat {
	return s.k6.Builtins(s.TrendStats(), d)
}

// K6Custom are the script's own metrics as K6Builtins gives the
// built-in ones, by name.
func (s *Script) K6Custom(d time.Duration) []K6Stat {
	return s.k6.Custom(s.metricContains(), s.TrendStats(), d)
}

// TimeUnit is summaryTimeUnit as written, "" when not set.
func (s *Script) TimeUnit() string {
	if s.Options.SummaryTimeUnit != nil {
		return *s.Options.SummaryTimeUnit
	}
	return ""
}

// TrendStats are the Trend columns of k6's summary: summaryTrendStats, or
// k6's default.
func (s *Script) TrendStats() []string {
	if s.Options.SummaryTrendStats != nil {
		return s.Options.SummaryTrendStats
	}
	return DefaultSummaryTrendStats
}

// CountVUsInitialised sets how exec.instance.vusInitialized is counted:
// k6's initialised VUs, which the runner knows from the plan and the
// open model's growth (k6 lib/execution.go GetInitializedVUsCount: not the
// VUs that read the options or run setup() and teardown()).
func (s *Script) CountVUsInitialised(count func() int64) { s.vusInitialised.Store(&count) }

// TimeTestRun sets how exec.instance.currentTestRunDuration is read: k6's
// test run duration, from before setup() (k6 internal/execution/
// scheduler.go: Run's MarkStarted, then setup), which the runner's test
// clock keeps.
func (s *Script) TimeTestRun(elapsed func() time.Duration) { s.testRunTime.Store(&elapsed) }

// testRunDuration is exec.instance.currentTestRunDuration: the runner's
// clock, or, without one, the time since the first iteration was due.
func (s *Script) testRunDuration() time.Duration {
	if f := s.testRunTime.Load(); f != nil {
		return (*f)()
	}
	if s.exec.start.IsZero() {
		return 0
	}
	return time.Since(s.exec.start)
}

// initialisedVUs is exec.instance.vusInitialized: the runner's count, or,
// without one, the runtimes made for load's VUs.
func (s *Script) initialisedVUs() int64 {
	if f := s.vusInitialised.Load(); f != nil {
		return (*f)()
	}
	return s.runtimes.Load()
}

// Close releases the connections, every VU's own too, and says what
// console output was dropped. No iteration may be running.
func (s *Script) Close() {
	s.caller.Close()
	s.vus.Range(func(_, x any) bool {
		x.(*vu).close()
		return true
	})
	for _, v := range s.ready.drain() {
		v.close()
	}
	s.con.close()
}

// iterErrors counts exceptions thrown by iterations and keeps the first.
type iterErrors struct {
	n     atomic.Int64
	mu    sync.Mutex
	first string
}

func (e *iterErrors) add(msg string) {
	if e.n.Add(1) == 1 {
		e.mu.Lock()
		e.first = msg
		e.mu.Unlock()
	}
}

func (e *iterErrors) get() (int64, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n.Load(), e.first
}

// Metrics are the script's custom metrics (k6/metrics).
//
// trend gives a Trend's histogram over the run (runner merges the run
// directory's trend series); nil leaves Trends without values.
func (s *Script) Metrics(trend func(name string) *record.Histogram) []MetricResult {
	out := s.metrics.Results(trend)
	for i := range out {
		out[i] = s.k6Aggregates(out[i])
	}
	return out
}

// k6Aggregates gives a Trend's and a Gauge's aggregates as k6 computes
// them, from the values k6's way keeps (setup's and teardown's too), when
// it has any: a Trend's interpolated percentiles, a Gauge's max that
// starts at 0 (k6Sink.gaugeMax).
func (s *Script) k6Aggregates(r MetricResult) MetricResult {
	if r.Kind != KindTrend && r.Kind != KindGauge {
		return r
	}
	st, ok := s.k6.Stat(r.Name)
	if !ok || st.Count == 0 {
		return r
	}
	if r.Kind == KindGauge {
		r.Value, r.Min, r.Max = st.Value, st.Min, st.Max
		return r
	}
	r.Count, r.Avg, r.Min, r.Max = st.Count, st.Avg, st.Min, st.Max
	r.Med, r.P90, r.P95, r.P99 = st.Med, st.P90, st.P95, st.P99
	r.Sampled = st.Sampled
	return r
}

type sharedEntry struct {
	once sync.Once
	raw  string
	err  error
}

// shared runs make once per SharedArray name and keeps its JSON.
func (s *Script) shared(name string, make func() (string, error)) (string, error) {
	e, _ := s.sharedData.LoadOrStore(name, &sharedEntry{})
	se := e.(*sharedEntry)
	se.once.Do(func() { se.raw, se.err = make() })
	return se.raw, se.err
}

// executorOf is the k6 executor name of a scenario, for k6/execution.
func (s *Script) executorOf(scenario string) string { return s.executors[scenario] }

// iterationCounter counts a scenario's iterations across its VUs.
func (s *Script) iterationCounter(scenario string) *atomic.Int64 {
	// Load first: LoadOrStore would allocate a counter (and box the key)
	// at every iteration to find the one already there.
	if c, ok := s.iterInTest.Load(scenario); ok {
		return c.(*atomic.Int64)
	}
	c, _ := s.iterInTest.LoadOrStore(scenario, &atomic.Int64{})
	return c.(*atomic.Int64)
}
