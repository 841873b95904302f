package k6script

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dop251/goja"
)

// timers are one VU's setTimeout/setInterval timers, run by the VU's
// event loop (loop.go) as k6's runs them (internal/js/tc55/timers): the
// call that set them (an iteration, setup, teardown) ends only when none
// is left, each fires at or after its delay, earliest first and, for
// equal times, in the order set; an interval is set again after each
// call, its delay counted from the call's end. A callback's exception
// ends the call with that error and drops the timers left; so does the
// run's end.
type timers struct {
	v      *vu
	nextID int64
	queue  []*timer       // by due time, ties in the order set
	live   map[int64]bool // set and not cleared: an interval's own callback may clear it
}

type timer struct {
	id     int64
	due    time.Time
	delay  time.Duration
	fn     goja.Callable
	args   []goja.Value
	repeat bool
}

// install sets the four functions as globals (k6 has them global too) and
// returns them as k6/timers' exports.
func (t *timers) install() *goja.Object {
	rt := t.v.rt
	o := rt.NewObject()
	for name, fn := range map[string]any{
		"setTimeout":    func(call goja.FunctionCall) goja.Value { return t.set(call, "setTimeout", false) },
		"setInterval":   func(call goja.FunctionCall) goja.Value { return t.set(call, "setInterval", true) },
		"clearTimeout":  func(id int64) { t.clear(id) },
		"clearInterval": func(id int64) { t.clear(id) },
	} {
		must(rt.Set(name, fn))
		must(o.Set(name, rt.Get(name)))
	}
	return o
}

func (t *timers) set(call goja.FunctionCall, name string, repeat bool) goja.Value {
	fn, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		panic(t.v.rt.NewTypeError(fmt.Sprintf("%s's callback isn't a callable function", name)))
	}
	ms := call.Argument(1).ToFloat()
	if math.IsNaN(ms) || ms < 0 { // an absent or negative delay is 0, as in k6
		ms = 0
	}
	t.nextID++
	t.live[t.nextID] = true
	var args []goja.Value
	if len(call.Arguments) > 2 {
		args = slices.Clone(call.Arguments[2:])
	}
	t.add(&timer{id: t.nextID, delay: time.Duration(ms * float64(time.Millisecond)), fn: fn, args: args, repeat: repeat})
	return t.v.rt.ToValue(t.nextID)
}

// add queues tm due its delay from now, after every timer due no later.
func (t *timers) add(tm *timer) {
	tm.due = time.Now().Add(tm.delay)
	i := slices.IndexFunc(t.queue, func(o *timer) bool { return o.due.After(tm.due) })
	if i < 0 {
		i = len(t.queue)
	}
	t.queue = slices.Insert(t.queue, i, tm)
}

func (t *timers) clear(id int64) {
	delete(t.live, id)
	t.queue = slices.DeleteFunc(t.queue, func(o *timer) bool { return o.id == id })
}

// next is the timer due first, nil when none is left.
func (t *timers) next() *timer {
	if len(t.queue) == 0 {
		return nil
	}
	return t.queue[0]
}

// fire runs tm, the first queued timer, and sets an interval again.
func (t *timers) fire(tm *timer) error {
	t.queue = t.queue[1:]
	if _, err := tm.fn(t.v.rt.GlobalObject(), tm.args...); err != nil {
		return err
	}
	if tm.repeat && t.live[tm.id] {
		t.add(tm)
	} else {
		delete(t.live, tm.id)
	}
	return nil
}

// reset drops every timer: the call that set them has ended.
func (t *timers) reset() {
	t.queue = nil
	clear(t.live) // most calls set none: no new map each
}
