package k6script

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// loop is one VU's event loop, in k6's model (k6's internal/js/eventloop):
// a call into the script (the init code, an iteration, setup, teardown)
// runs its function, then the loop runs what the call left behind until
// nothing is left: the timers (timers.go) and the callbacks modules
// registered with register. The call ends
//
//   - when no timer and no registered callback remains (nil);
//   - when a timer or a callback fails: that error, the rest dropped;
//   - when a Promise was rejected and, by the end of the turn that
//     rejected it (the function, a batch of callbacks, a timer), has no
//     handler: k6's "Uncaught (in promise) ..." error, the rest dropped;
//   - when ctx ends (the run's end): ctx's error, the rest dropped at once.
//
// Whatever ends it, the call's context (context) is cancelled, so a
// module's goroutines stop and close what they hold; a callback they
// enqueue after that is dropped, never run in a later call. Only the
// VU's goroutine calls call, register and context; the enqueue functions
// register returns are safe from any goroutine.
type loop struct {
	timers *timers

	mu      sync.Mutex
	gen     uint64         // the call in progress; bumped when a call ends
	queue   []func() error // enqueued callbacks of call gen, in order
	pending int            // registered callbacks of call gen not yet enqueued
	wake    chan struct{}  // a callback was enqueued (capacity 1)

	// The call's context, made when a module first asks for it (most
	// calls never do: a context per call cost each iteration ~1 % of its
	// CPU): parent is the call's ctx, nil outside a call.
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc

	// rejected are the Promises rejected with no handler yet, in order
	// (the runtime reports them on the VU's goroutine).
	rejected []*goja.Promise
}

// newLoop makes rt's loop; it tracks rt's unhandled Promise rejections.
func newLoop(rt *goja.Runtime) *loop {
	l := &loop{wake: make(chan struct{}, 1)}
	rt.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		if op == goja.PromiseRejectionReject {
			l.rejected = append(l.rejected, p)
			return
		}
		l.rejected = slices.DeleteFunc(l.rejected, func(q *goja.Promise) bool { return q == p }) // handled after all
	})
	return l
}

// uncaught is the first rejection still without a handler, as k6's
// error: "Uncaught (in promise) " and the value's stack, else the value.
func (l *loop) uncaught() error {
	if len(l.rejected) == 0 {
		return nil
	}
	val := l.rejected[0].Result()
	text := "undefined"
	if val != nil {
		text = val.String()
		if o, ok := val.(*goja.Object); ok {
			if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) && !goja.IsNull(st) {
				text = st.String()
			}
		}
	}
	return errors.New("Uncaught (in promise) " + strings.TrimRight(text, "\n"))
}

// context is the current call's context: it ends when the call does.
// Outside a call it has ended.
func (l *loop) context() context.Context {
	if l.ctx == nil {
		if l.parent == nil {
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			return ended
		}
		l.ctx, l.cancel = context.WithCancel(l.parent)
	}
	return l.ctx
}

// register reserves a callback for the current call: the call does not
// end until the returned enqueue is called (or the call ends otherwise).
// enqueue may be called from any goroutine, once; it queues f to run on
// the VU's goroutine, where it may call into the runtime (handlers,
// Promise resolve and reject). f's error ends the call with that error.
// A second call of enqueue, or one after the call ended, does nothing.
// Call register only from the VU's goroutine, during a call.
func (l *loop) register() (enqueue func(f func() error)) {
	l.mu.Lock()
	gen := l.gen
	l.pending++
	l.mu.Unlock()
	var once sync.Once
	return func(f func() error) {
		once.Do(func() {
			l.mu.Lock()
			if gen != l.gen { // that call has ended: drop f
				l.mu.Unlock()
				return
			}
			l.queue = append(l.queue, f)
			l.pending--
			l.mu.Unlock()
			select {
			case l.wake <- struct{}{}:
			default:
			}
		})
	}
}

// call runs first, then the loop until nothing is left (see loop).
func (l *loop) call(ctx context.Context, first func() error) error {
	l.parent = ctx
	defer l.end()
	if err := first(); err != nil {
		return err
	}
	if err := l.uncaught(); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l.mu.Lock()
		q, pending := l.queue, l.pending
		l.queue = nil
		l.mu.Unlock()
		if len(q) > 0 {
			for _, f := range q {
				if err := f(); err != nil {
					return err
				}
			}
			if err := l.uncaught(); err != nil {
				return err
			}
			continue
		}
		tm := l.timers.next()
		if tm == nil && pending == 0 {
			return nil
		}
		if tm != nil && !time.Now().Before(tm.due) {
			if err := l.timers.fire(tm); err != nil {
				return err
			}
			if err := l.uncaught(); err != nil {
				return err
			}
			continue
		}
		if err := l.wait(ctx, tm); err != nil {
			return err
		}
	}
}

// wait blocks until tm is due (no timer: never), a callback is enqueued
// or ctx ends (its error).
func (l *loop) wait(ctx context.Context, tm *timer) error {
	var due <-chan time.Time
	if tm != nil {
		w := time.NewTimer(time.Until(tm.due))
		defer w.Stop()
		due = w.C
	}
	select {
	case <-due:
	case <-l.wake:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// end closes the call: its context is cancelled, its timers and callbacks
// dropped, and enqueues still to come from its goroutines ignored.
func (l *loop) end() {
	if l.cancel != nil {
		l.cancel()
	}
	l.parent, l.ctx, l.cancel = nil, nil, nil
	l.timers.reset()
	l.mu.Lock()
	l.gen++
	l.queue, l.pending = nil, 0
	l.mu.Unlock()
	l.rejected = nil
	select {
	case <-l.wake: // a stale wake-up would only cost one spin; drain it anyway
	default:
	}
}
