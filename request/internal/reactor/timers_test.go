package reactor

import (
	"testing"
	"time"
)

type item struct {
	name  string
	timer Timer
}

func (it *item) Timer() *Timer { return &it.timer }

// Timers gives its items back by deadline, earliest first, whatever order
// they came in and whichever were removed (ties in either order).
func TestTimersOrder(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name   string
		at     []time.Duration // each item's deadline after t0, items named a, b, c, …
		remove string
		want   string // the names in the order Due gives them at t0+1h
	}{
		{name: "in order", at: []time.Duration{1, 2, 3}, want: "abc"},
		{name: "reversed", at: []time.Duration{3, 2, 1}, want: "cba"},
		{name: "the first removed", at: []time.Duration{5, 1, 3, 2}, remove: "b", want: "dca"},
		{name: "the last removed", at: []time.Duration{5, 1, 3, 2}, remove: "a", want: "bdc"},
		{name: "one item removed", at: []time.Duration{7}, remove: "a", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ts Timers[*item]
			byName := map[string]*item{}
			for i, d := range tt.at {
				it := &item{name: string(rune('a' + i)), timer: Timer{At: t0.Add(d * time.Second)}}
				byName[it.name] = it
				ts.Add(it)
			}
			if tt.remove != "" {
				ts.Remove(byName[tt.remove])
				ts.Remove(byName[tt.remove]) // a second time: no longer there, nothing happens
			}
			if _, ok := ts.Due(t0); ok {
				t.Fatal("an item due at t0, before every deadline")
			}
			got := ""
			for it, ok := ts.Due(t0.Add(time.Hour)); ok; it, ok = ts.Due(t0.Add(time.Hour)) {
				got += it.name
				ts.Remove(it)
			}
			if got != tt.want || ts.Len() != 0 {
				t.Errorf("order %q, %d left; want %q, none", got, ts.Len(), tt.want)
			}
		})
	}
}

// An item's deadline is due at that instant, not only after it.
func TestTimersDueAtTheDeadline(t *testing.T) {
	at := time.Unix(1000, 0)
	var ts Timers[*item]
	ts.Add(&item{name: "a", timer: Timer{At: at}})
	if _, ok := ts.Due(at.Add(-time.Nanosecond)); ok {
		t.Error("due 1 ns before its deadline")
	}
	if it, ok := ts.Due(at); !ok || it.name != "a" {
		t.Error("not due at its deadline")
	}
}
