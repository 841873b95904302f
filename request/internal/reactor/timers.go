package reactor

import (
	"container/heap"
	"time"
)

// Timer is what Timers keeps of an item: its deadline and its place in
// the heap. Its zero value is in no heap.
type Timer struct {
	At time.Time // the deadline
	i  int       // the index in the heap plus one; 0 when not there
}

// Timed is an item that Timers orders by its Timer's deadline.
type Timed interface {
	comparable
	Timer() *Timer
}

// Timers is a min-heap of items by deadline: the loop's exchanges in
// flight. The zero value is empty.
type Timers[T Timed] struct{ h timerHeap[T] }

// Add puts x in the heap by x.Timer().At; x must not be in it already.
func (t *Timers[T]) Add(x T) { heap.Push(&t.h, x) }

// Remove takes x out of the heap, if it is there.
func (t *Timers[T]) Remove(x T) {
	if i := x.Timer().i; i > 0 {
		heap.Remove(&t.h, i-1)
	}
}

// Len is how many items the heap holds.
func (t *Timers[T]) Len() int { return len(t.h) }

// First is the item with the earliest deadline; ok is false when there is none.
func (t *Timers[T]) First() (x T, ok bool) {
	if len(t.h) == 0 {
		return x, false
	}
	return t.h[0], true
}

// Due is the item with the earliest deadline when that is not after now.
func (t *Timers[T]) Due(now time.Time) (x T, ok bool) {
	if len(t.h) == 0 || now.Before(t.h[0].Timer().At) {
		return x, false
	}
	return t.h[0], true
}

// Compact copies the heap's array when it holds under a quarter of its
// capacity (and the capacity is above above), so that a peak's room is let go.
func (t *Timers[T]) Compact(above int) {
	if cap(t.h) > above && len(t.h) < cap(t.h)/4 {
		t.h = append(make(timerHeap[T], 0, 2*len(t.h)), t.h...)
	}
}

type timerHeap[T Timed] []T

func (h timerHeap[T]) Len() int           { return len(h) }
func (h timerHeap[T]) Less(i, j int) bool { return h[i].Timer().At.Before(h[j].Timer().At) }
func (h timerHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].Timer().i, h[j].Timer().i = i+1, j+1
}
func (h *timerHeap[T]) Push(x any) {
	it := x.(T)
	it.Timer().i = len(*h) + 1
	*h = append(*h, it)
}
func (h *timerHeap[T]) Pop() any {
	old := *h
	var zero T
	it := old[len(old)-1]
	old[len(old)-1] = zero
	*h = old[:len(old)-1]
	it.Timer().i = 0
	return it
}
