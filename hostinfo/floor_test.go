package hostinfo

import (
	"slices"
	"testing"
	"time"

	"github.com/knee-dev/knee/record"
)

// starts is a schedule given by hand: its offsets and its end.
type starts struct {
	offsets []time.Duration
	end     time.Duration
}

func (s starts) Offset(i int64) (time.Duration, bool) {
	if i < 0 || i >= int64(len(s.offsets)) {
		return 0, false
	}
	return s.offsets[i], true
}

func (s starts) Duration() time.Duration { return s.end }

// every is a constant schedule: a start every gap from 0 until end.
func every(gap, end time.Duration) starts {
	var s starts
	for at := time.Duration(0); at < end; at += gap {
		s.offsets = append(s.offsets, at)
	}
	s.end = end
	return s
}

// The probe wakes half-way between each start and the next (the schedule's
// end after the last), counted from base.
func TestDues(t *testing.T) {
	const base = int64(5 * time.Second)
	tests := []struct {
		name   string
		starts starts
		want   []due
	}{
		{"1/s for 3 s", every(time.Second, 3*time.Second), []due{
			{base + int64(500*time.Millisecond), time.Second},
			{base + int64(1500*time.Millisecond), time.Second},
			{base + int64(2500*time.Millisecond), time.Second}}},
		{"a ramp's narrowing gaps", starts{[]time.Duration{0, 100 * time.Millisecond, 150 * time.Millisecond}, 180 * time.Millisecond}, []due{
			{base + int64(50*time.Millisecond), 100 * time.Millisecond},
			{base + int64(125*time.Millisecond), 50 * time.Millisecond},
			{base + int64(165*time.Millisecond), 30 * time.Millisecond}}},
		{"one start", starts{[]time.Duration{0}, time.Second}, []due{{base + int64(500*time.Millisecond), time.Second}}},
		{"no start", starts{nil, time.Second}, nil},
		{"a start at the end", starts{[]time.Duration{0, time.Second}, time.Second}, []due{{base + int64(500*time.Millisecond), time.Second}}},
	}
	for _, tc := range tests {
		if got := slices.Collect(dues(tc.starts, base)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: dues %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A probe's lateness holds what a histogram recording every value holds,
// whether its values stayed few or moved into a full histogram past fewLate.
func TestLateness(t *testing.T) {
	for _, n := range []int{0, 1, 200, fewLate, fewLate + 1, fewLate + 300} {
		var late lateness
		want := record.NewHistogram()
		for i := range n {
			d := time.Duration(i%997)*7*time.Microsecond + 40*time.Microsecond
			late.add(d)
			want.Record(d)
		}
		got := late.histogram()
		if got.Count() != int64(n) {
			t.Errorf("%d values: count %d", n, got.Count())
		}
		for _, pct := range []float64{0, 50, 99, 100} {
			if g, w := got.Percentile(pct), want.Percentile(pct); g != w {
				t.Errorf("%d values: p%v = %v, recorded one by one %v", n, pct, g, w)
			}
		}
	}
}
