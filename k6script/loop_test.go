package k6script

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// testLoop is a loop with no timers set, and the runtime its callbacks use.
func testLoop() (*loop, *goja.Runtime) {
	rt := goja.New()
	l := newLoop(rt)
	l.timers = &timers{v: &vu{rt: rt}, live: map[int64]bool{}}
	return l, rt
}

// A call ends only once every registered callback has been enqueued and
// run, in the order enqueued; the first error ends it and drops the rest.
func TestLoopRunsRegisteredCallbacks(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		results []error // callback i returns results[i]; enqueued in order from goroutines
		wantRun []int
		wantErr error
	}{
		{"none", nil, nil, nil},
		{"one", []error{nil}, []int{0}, nil},
		{"three in order", []error{nil, nil, nil}, []int{0, 1, 2}, nil},
		{"second fails", []error{nil, boom, nil}, []int{0, 1}, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := testLoop()
			var ran []int
			err := l.call(context.Background(), func() error {
				enq := make([]func(func() error), len(tc.results))
				for i := range enq {
					enq[i] = l.register()
				}
				// from another goroutine, later, one after another
				go func() {
					for i, e := range enq {
						time.Sleep(time.Millisecond)
						res := tc.results[i]
						e(func() error { ran = append(ran, i); return res })
					}
				}()
				return nil
			})
			if !errors.Is(err, tc.wantErr) || !slices.Equal(ran, tc.wantRun) {
				t.Errorf("err %v, ran %v; want %v, %v", err, ran, tc.wantErr, tc.wantRun)
			}
		})
	}
}

// A callback may register another (a socket's next event): the call
// waits for the chain; a timer and a callback interleave by time.
func TestLoopChainsCallbacksAndTimers(t *testing.T) {
	l, rt := testLoop()
	var log []string
	must(rt.Set("log", func(s string) { log = append(log, s) }))
	l.timers.install()
	err := l.call(context.Background(), func() error {
		if _, err := rt.RunString(`setTimeout(() => log('timer'), 30)`); err != nil {
			return err
		}
		var step func(n int) func() error
		step = func(n int) func() error {
			return func() error {
				log = append(log, "cb")
				if n > 1 {
					enq := l.register()
					go func() { time.Sleep(time.Millisecond); enq(step(n - 1)) }()
				}
				return nil
			}
		}
		enq := l.register()
		go enq(step(3))
		return nil
	})
	// the three callbacks take about 3 ms, the timer is due after 30 ms
	want := []string{"cb", "cb", "cb", "timer"}
	if err != nil || !slices.Equal(log, want) {
		t.Errorf("err %v, log %v; want %v", err, log, want)
	}
}

// A Promise resolved in an enqueued callback has settled, its reactions
// run, when the call returns (what settled relies on).
func TestLoopSettlesPromises(t *testing.T) {
	l, rt := testLoop()
	var res goja.Value
	err := l.call(context.Background(), func() error {
		p, resolve, _ := rt.NewPromise()
		must(rt.Set("p", p))
		enq := l.register()
		go enq(func() error { return resolve(7) })
		var err error
		res, err = rt.RunString(`(async () => { const x = await p; return x * 6; })()`)
		return err
	})
	got, err2 := settled(res)
	if err != nil || err2 != nil || got.ToInteger() != 42 {
		t.Errorf("err %v, %v, result %v; want 42", err, err2, got)
	}
}

// The run's end ends a call still waiting on a callback at once, with
// ctx's error, and ends the call's context; the callback enqueued later
// is dropped, not run in the next call.
func TestLoopStopsWithTheRun(t *testing.T) {
	l, _ := testLoop()
	ctx, cancel := context.WithCancel(context.Background())
	var late func(func() error)
	ran := false
	err := l.call(ctx, func() error {
		late = l.register()
		go cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || l.context().Err() == nil {
		t.Fatalf("err %v, call context %v; want canceled, ended", err, l.context().Err())
	}
	late(func() error { ran = true; return nil })
	err = l.call(context.Background(), func() error { return nil })
	if err != nil || ran {
		t.Errorf("next call: err %v, the old callback ran %v; want nil, false", err, ran)
	}
}

// A Promise rejected with no handler by the end of its turn ends the
// call with k6's "Uncaught (in promise)" error, the value's stack first
// (k6's eventloop); one handled in the same turn, or caught, does not.
func TestLoopUncaughtRejections(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      string // "" = no error
	}{
		{"async throws", `(async () => { throw new Error('boom'); })()`, "Uncaught (in promise) Error: boom\n\tat "},
		{"a plain value", `Promise.reject(42)`, "Uncaught (in promise) 42"},
		{"caught", `(async () => { throw new Error('boom'); })().catch(() => {})`, ""},
		{"handled later in the turn", `const p = Promise.reject(1); p.then(null, () => {});`, ""},
		{"awaited and caught", `(async () => { try { await Promise.reject(1); } catch (e) {} })()`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, rt := testLoop()
			err := l.call(context.Background(), func() error { _, err := rt.RunString(tc.src); return err })
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
				t.Errorf("err %v; want %q", err, tc.want)
			}
		})
	}
}

// A rejection in a callback enqueued later ends the call at that turn,
// with a callback still registered (it is dropped).
func TestLoopUncaughtRejectionInACallback(t *testing.T) {
	l, rt := testLoop()
	err := l.call(context.Background(), func() error {
		enq := l.register()
		l.register() // never enqueued: the rejection ends the call anyway
		fn, err := rt.RunString(`async () => { throw new Error('late'); }`)
		if err != nil {
			return err
		}
		f, _ := goja.AssertFunction(fn)
		go enq(func() error { _, err := f(goja.Undefined()); return err })
		return nil
	})
	if err == nil || !strings.HasPrefix(err.Error(), "Uncaught (in promise) Error: late") {
		t.Errorf("err %v; want the late rejection", err)
	}
}

// A call's context is made when a module asks for it: it is live during
// the call, the same at every ask, derived from the call's ctx, and ended
// once the call ends, however it ended; outside a call it has ended.
func TestLoopCallContext(t *testing.T) {
	type key struct{}
	for _, tc := range []struct {
		name  string
		asks  int // how many times the call asks for its context
		fails bool
	}{
		{"asked once", 1, false},
		{"asked twice", 2, false},
		{"asked, then the call fails", 1, true},
		{"never asked", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := testLoop()
			parent := context.WithValue(context.Background(), key{}, "run")
			var got []context.Context
			err := l.call(parent, func() error {
				for range tc.asks {
					c := l.context()
					if c.Err() != nil || c.Value(key{}) != "run" {
						t.Errorf("during the call: err %v, value %v; want live, derived from the call's ctx", c.Err(), c.Value(key{}))
					}
					got = append(got, c)
				}
				if tc.fails {
					return errors.New("boom")
				}
				return nil
			})
			if (err != nil) != tc.fails {
				t.Fatalf("call: %v", err)
			}
			for i, c := range got {
				if c != got[0] || c.Err() == nil {
					t.Errorf("ask %d: %v (the first %v), err %v; want the same context, ended", i, c, got[0], c.Err())
				}
			}
			if l.context().Err() == nil {
				t.Error("outside the call the context is live; want ended")
			}
		})
	}
}
