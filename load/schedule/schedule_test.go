package schedule

import (
	"errors"
	"math/big"
	"strconv"
	"testing"
	"time"
)

const sec = time.Second

func TestConstantOffset(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		unit, dur time.Duration
		i         int64
		want      time.Duration
		ok        bool
	}{
		{"first iteration at t0", 5000, 0, 201 * sec, 0, 0, true},
		{"5000/s: 1/5000 s apart", 5000, 0, 201 * sec, 1, 200 * time.Microsecond, true},
		{"5000/s: 1e6 iterations take exactly 200 s", 5000, 0, 201 * sec, 1_000_000, 200 * sec, true},
		{"5000/s for 201 s: 1,005,000 is at the end, so out", 5000, 0, 201 * sec, 1_005_000, 0, false},
		{"3/s: 1e9/3 = 333333333.33 ns, truncated", 3, 0, 10 * sec, 1, 333_333_333, true},
		{"3/s: 2e9/3 = 666666666.67 ns, truncated", 3, 0, 10 * sec, 2, 666_666_666, true},
		{"3/s: three thirds make exactly 1 s", 3, 0, 10 * sec, 3, sec, true},
		{"3/s: no drift after 3e6 iterations", 3, 0, 2_000_000 * sec, 3_000_000, 1_000_000 * sec, true},
		{"0.1/s is exactly one tenth: 10 s apart", 0.1, 0, 100 * sec, 1, 10 * sec, true},
		{"30 per minute: 2 s apart", 30, time.Minute, 10 * sec, 1, 2 * sec, true},
		{"7 per ms: the 7th is at 1 ms", 7, time.Millisecond, sec, 7, time.Millisecond, true},
		{"1e9/s: one per ns", 1e9, 0, sec, 123456789, 123456789, true},
		{"2/s for 1 s: second at 500 ms", 2, 0, sec, 1, 500 * time.Millisecond, true},
		{"2/s for 1 s: third would be at the end", 2, 0, sec, 2, 0, false},
		{"3/s for 1s-1ns: third at 666666666 still inside", 3, 0, sec - 1, 2, 666_666_666, true},
		{"negative iteration", 3, 0, sec, -1, 0, false},
		{"1e-9/s: the second is 1e18 ns away, past 1 h", 1e-9, 0, time.Hour, 1, 0, false},
		// 33.333333333333336 = 33333333333333336/1e15: the interval 1e24/33333333333333336 ns does not
		// fit in 64 bits (big.Int path); 100 intervals = 1e26/33333333333333336 = 2999999999.99999976.
		{"awkward decimal rate takes the big path", 33.333333333333336, 0, 10 * sec, 100, 2_999_999_999, true},
		// 2^62 iterations at 1/ns overflow nothing but are far past the end.
		{"huge iteration number", 1e9, 0, sec, 1 << 62, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewConstant(tt.rate, tt.unit, tt.dur)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := c.Offset(tt.i)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Offset(%d) = %d, %v; want %d, %v", tt.i, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestConstantIterationsAndRate(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		unit, dur time.Duration
		want      int64
		perSec    float64
	}{
		{"2/s for 1 s: 0 and 500 ms", 2, 0, sec, 2, 2},
		{"3/s for 1 s: 0, 1/3, 2/3", 3, 0, sec, 3, 3},
		{"3/s for 1 s + 1 ns: the 4th at 1 s is in", 3, 0, sec + 1, 4, 3},
		{"5000/s for 200 s", 5000, 0, 200 * sec, 1_000_000, 5000},
		{"30 per minute for 59 s: 0, 2, ..., 58", 30, time.Minute, 59 * sec, 30, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewConstant(tt.rate, tt.unit, tt.dur)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Iterations(); got != tt.want {
				t.Errorf("Iterations() = %d, want %d", got, tt.want)
			}
			if got := c.Rate(tt.dur / 2); got != tt.perSec {
				t.Errorf("Rate = %v, want %v", got, tt.perSec)
			}
			if got := c.Rate(tt.dur); got != 0 {
				t.Errorf("Rate at the end = %v, want 0", got)
			}
		})
	}
}

func TestNewConstantRejects(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		unit, dur time.Duration
	}{
		{"zero rate", 0, 0, sec},
		{"negative rate", -1, 0, sec},
		{"NaN rate", nan(), 0, sec},
		{"zero duration", 1, 0, 0},
		{"negative unit", 1, -sec, sec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewConstant(tt.rate, tt.unit, tt.dur); !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
	var zero Constant
	if _, ok := zero.Offset(0); ok {
		t.Error("the zero Constant schedules an iteration")
	}
}

func nan() float64 { v, _ := strconv.ParseFloat("NaN", 64); return v }

func TestRampingOffset(t *testing.T) {
	up := []Stage{{10 * sec, 10}}                                       // 0 -> 10/s over 10 s: N(t) = t²/2
	down := []Stage{{10 * sec, 0}}                                      // 10 -> 0/s over 10 s: N(t) = 10t - t²/2
	gap := []Stage{{sec, 10}, {0, 0}, {5 * sec, 0}, {0, 10}, {sec, 10}} // 10/s, 5 s silence, 10/s
	lead := []Stage{{2 * sec, 0}, {0, 4}, {sec, 4}}                     // 2 s of nothing, then 4/s
	tests := []struct {
		name   string
		start  float64
		unit   time.Duration
		stages []Stage
		i      int64
		want   time.Duration
		ok     bool
	}{
		{"up: N(0)=0", 0, 0, up, 0, 0, true},
		{"up: sqrt(2) s", 0, 0, up, 1, 1_414_213_562, true},
		{"up: sqrt(4) = 2 s", 0, 0, up, 2, 2 * sec, true},
		{"up: sqrt(16) = 4 s", 0, 0, up, 8, 4 * sec, true},
		{"up: sqrt(36) = 6 s", 0, 0, up, 18, 6 * sec, true},
		{"up: sqrt(64) = 8 s", 0, 0, up, 32, 8 * sec, true},
		{"up: sqrt(98) = 9.89949493661 s", 0, 0, up, 49, 9_899_494_936, true},
		{"up: N(10 s) = 50 is the end", 0, 0, up, 50, 0, false},
		{"down: 10 - sqrt(100) = 0", 10, 0, down, 0, 0, true},
		{"down: 10 - sqrt(64) = 2 s", 10, 0, down, 18, 2 * sec, true},
		{"down: 10 - sqrt(36) = 4 s", 10, 0, down, 32, 4 * sec, true},
		{"down: 10 - sqrt(16) = 6 s", 10, 0, down, 42, 6 * sec, true},
		{"down: 10 - sqrt(4) = 8 s", 10, 0, down, 48, 8 * sec, true},
		{"down: 10 - sqrt(2) = 8.58578643763 s", 10, 0, down, 49, 8_585_786_437, true},
		{"down: N(10 s) = 50 is the end", 10, 0, down, 50, 0, false},
		{"gap: 10th of the first second at 900 ms", 10, 0, gap, 9, 900 * time.Millisecond, true},
		{"gap: the 11th waits for the rate to return at 6 s", 10, 0, gap, 10, 6 * sec, true},
		{"gap: then 100 ms apart", 10, 0, gap, 15, 6500 * time.Millisecond, true},
		{"gap: 20 in all", 10, 0, gap, 20, 0, false},
		{"lead: nothing until 2 s", 0, 0, lead, 0, 2 * sec, true},
		{"lead: then 250 ms apart", 0, 0, lead, 3, 2750 * time.Millisecond, true},
		{"lead: 4 in all", 0, 0, lead, 4, 0, false},
		// 100 -> 200/s over 10 s: N(t) = 100t + 5t².
		{"100->200: N(1 s) = 105", 100, 0, []Stage{{10 * sec, 200}}, 105, sec, true},
		{"100->200: t = -10 + sqrt(180)", 100, 0, []Stage{{10 * sec, 200}}, 400, 3_416_407_864, true},
		{"100->200: t = (-100 + sqrt(39980))/10", 100, 0, []Stage{{10 * sec, 200}}, 1499, 9_994_999_374, true},
		{"100->200: N(10 s) = 1500 is the end", 100, 0, []Stage{{10 * sec, 200}}, 1500, 0, false},
		// 0 -> 60 per minute over 10 s: rate 0.1·t per s, N(t) = t²/20.
		{"per minute: sqrt(20) s", 0, time.Minute, []Stage{{10 * sec, 60}}, 1, 4_472_135_954, true},
		{"per minute: sqrt(80) s", 0, time.Minute, []Stage{{10 * sec, 60}}, 4, 8_944_271_909, true},
		{"per minute: N(10 s) = 5 is the end", 0, time.Minute, []Stage{{10 * sec, 60}}, 5, 0, false},
		// Steps(100, 100, 2, 20 s): 21 s at 100/s = 2100, then 100->200 in 1 s: 100t + 50t² = 150 at t = 1.
		{"steps: second hold starts at 22 s", 100, 0, Steps(100, 100, 2, 20*sec), 2250, 22 * sec, true},
		{"steps: 200/s in the hold", 100, 0, Steps(100, 100, 2, 20*sec), 2251, 22*sec + 5*time.Millisecond, true},
		{"steps: 2100 + 150 + 4000 in all", 100, 0, Steps(100, 100, 2, 20*sec), 6250, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRamping(tt.start, tt.unit, tt.stages)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := r.Offset(tt.i)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Offset(%d) = %d, %v; want %d, %v", tt.i, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestRampingIterationsAndRate(t *testing.T) {
	tests := []struct {
		name   string
		start  float64
		unit   time.Duration
		stages []Stage
		want   int64
		at     time.Duration
		rate   float64
	}{
		{"0->10/s over 10 s: 50", 0, 0, []Stage{{10 * sec, 10}}, 50, 3 * sec, 3},
		{"100->200/s over 10 s: 1500", 100, 0, []Stage{{10 * sec, 200}}, 1500, 5 * sec, 150},
		{"0->3/s over 1 s: 1.5 -> 2", 0, 0, []Stage{{sec, 3}}, 2, 0, 0},
		{"10/s, 5 s silence, 10/s", 10, 0, []Stage{{sec, 10}, {0, 0}, {5 * sec, 0}, {0, 10}, {sec, 10}}, 20, 3 * sec, 0},
		{"0->60/min over 10 s: 5", 0, time.Minute, []Stage{{10 * sec, 60}}, 5, 5 * sec, 0.5},
		{"steps 100,200,300 / 20 s", 100, 0, Steps(100, 100, 3, 20*sec), 12500, 42500 * time.Millisecond, 250}, // mid-jump 200->300,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRamping(tt.start, tt.unit, tt.stages)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Iterations(); got != tt.want {
				t.Errorf("Iterations() = %d, want %d", got, tt.want)
			}
			if got := r.Rate(tt.at); got != tt.rate {
				t.Errorf("Rate(%v) = %v, want %v", tt.at, got, tt.rate)
			}
			if got := r.Rate(r.Duration()); got != 0 {
				t.Errorf("Rate at the end = %v, want 0", got)
			}
		})
	}
}

func TestNewRampingRejects(t *testing.T) {
	tests := []struct {
		name   string
		start  float64
		stages []Stage
	}{
		{"no stages", 10, nil},
		{"only instant stages", 10, []Stage{{0, 20}}},
		{"negative start", -1, []Stage{{sec, 1}}},
		{"negative target", 1, []Stage{{sec, -1}}},
		{"NaN target", 1, []Stage{{sec, nan()}}},
		{"negative duration", 1, []Stage{{-sec, 1}, {2 * sec, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewRamping(tt.start, 0, tt.stages); !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestStepsAndWindows(t *testing.T) {
	got := Steps(100, 50, 2, 20*sec)
	want := []Stage{{sec, 100}, {20 * sec, 100}, {sec, 150}, {20 * sec, 150}}
	if len(got) != len(want) {
		t.Fatalf("Steps = %v, want %v", got, want)
	}
	for n := range want {
		if got[n] != want[n] {
			t.Errorf("stage %d = %v, want %v", n, got[n], want[n])
		}
	}
	ws := StepWindows(100, 50, 2, 20*sec)
	wantW := []Window{{100, sec, 21 * sec}, {150, 22 * sec, 42 * sec}}
	for n := range wantW {
		if ws[n] != wantW[n] {
			t.Errorf("window %d = %v, want %v", n, ws[n], wantW[n])
		}
	}
	if len(Steps(1, 1, -3, sec)) != 0 || len(StepWindows(1, 1, 0, sec)) != 0 {
		t.Error("no steps should give no stages")
	}
}

// integral is N(t) for a ramp, worked out directly with rationals (trapezoids),
// as an oracle independent of the quadratic solver.
func integral(t *testing.T, start float64, unit time.Duration, stages []Stage, at time.Duration) *big.Rat {
	t.Helper()
	if unit == 0 {
		unit = sec
	}
	rat := func(f float64) *big.Rat {
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
		if !ok {
			t.Fatalf("bad rate %v", f)
		}
		return r.Quo(r, new(big.Rat).SetInt64(int64(unit))) // per ns
	}
	sum, from := new(big.Rat), rat(start)
	var t0 time.Duration
	for _, st := range stages {
		to := rat(st.Target)
		if st.Duration > 0 && at > t0 {
			d := min(at-t0, st.Duration)
			// rate at t0+d: from + (to-from)·d/D
			end := new(big.Rat).Sub(to, from)
			end.Mul(end, big.NewRat(int64(d), int64(st.Duration)))
			end.Add(end, from)
			area := new(big.Rat).Add(from, end)
			area.Mul(area, big.NewRat(int64(d), 2))
			sum.Add(sum, area)
		}
		t0 += st.Duration
		from = to
	}
	return sum
}

// checkInverse asserts t_i = floor(inf{t : N(t) > i}): N(t_i) <= i and N(t_i+1) > i
// unless the rate is zero right after t_i ... which the half-open rule excludes.
func checkInverse(t *testing.T, start float64, unit time.Duration, stages []Stage, i int64, at time.Duration) {
	t.Helper()
	iv := new(big.Rat).SetInt64(i)
	if integral(t, start, unit, stages, at).Cmp(iv) > 0 {
		t.Fatalf("N(t_%d = %d) > %d", i, at, i)
	}
	if integral(t, start, unit, stages, at+1).Cmp(iv) <= 0 {
		t.Fatalf("N(t_%d + 1ns = %d) <= %d", i, at+1, i)
	}
}

func TestRampingProperties(t *testing.T) {
	plans := []struct {
		start  float64
		unit   time.Duration
		stages []Stage
	}{
		{0, 0, []Stage{{10 * sec, 10}}},
		{10, 0, []Stage{{10 * sec, 0}}},
		{7.5, 0, []Stage{{3 * sec, 0.3}, {0, 12}, {2 * sec, 12}, {5 * sec, 0}, {sec, 0}, {2 * sec, 40}}},
		{0, time.Minute, []Stage{{30 * sec, 600}, {30 * sec, 10}}},
		{33.3, 0, Steps(33.3, 11.1, 4, 3*sec)},
	}
	for n, p := range plans {
		r, err := NewRamping(p.start, p.unit, p.stages)
		if err != nil {
			t.Fatal(err)
		}
		var last time.Duration
		var count int64
		for i := int64(0); ; i++ {
			at, ok := r.Offset(i)
			if !ok {
				break
			}
			count++
			if at < last || at >= r.Duration() {
				t.Fatalf("plan %d: t_%d = %v after t_%d = %v or past the end %v", n, i, at, i-1, last, r.Duration())
			}
			last = at
			checkInverse(t, p.start, p.unit, p.stages, i, at)
		}
		// count = ceil(N(duration)): the count over the duration is the integral.
		total := integral(t, p.start, p.unit, p.stages, r.Duration())
		ceil := new(big.Int).Quo(total.Num(), total.Denom())
		if !total.IsInt() {
			ceil.Add(ceil, big.NewInt(1))
		}
		if count != ceil.Int64() || r.Iterations() != count {
			t.Errorf("plan %d: %d iterations, Iterations() = %d, ceil(integral) = %v", n, count, r.Iterations(), ceil)
		}
	}
}

func TestRampingMatchesConstant(t *testing.T) {
	for _, rate := range []float64{1, 3, 7.7, 5000, 0.1} {
		c, _ := NewConstant(rate, 0, 10*sec)
		r, _ := NewRamping(rate, 0, []Stage{{4 * sec, rate}, {6 * sec, rate}})
		if c.Iterations() != r.Iterations() {
			t.Fatalf("rate %v: %d vs %d iterations", rate, c.Iterations(), r.Iterations())
		}
		for i := range c.Iterations() + 1 {
			a, aok := c.Offset(i)
			b, bok := r.Offset(i)
			if a != b || aok != bok {
				t.Fatalf("rate %v, i %d: constant %v %v, ramping %v %v", rate, i, a, aok, b, bok)
			}
		}
	}
}

func TestVUSteps(t *testing.T) {
	tests := []struct {
		name   string
		start  int
		stages []Stage
		want   []VUStep
	}{
		{"0->4 over 4 s: one more each second", 0, []Stage{{4 * sec, 4}},
			[]VUStep{{0, 0}, {sec, 1}, {2 * sec, 2}, {3 * sec, 3}, {4 * sec, 4}}},
		{"4->0 over 4 s: one fewer each second", 4, []Stage{{4 * sec, 0}},
			[]VUStep{{0, 4}, {sec, 3}, {2 * sec, 2}, {3 * sec, 1}, {4 * sec, 0}}},
		{"0->3 over 1 s: thirds, truncated", 0, []Stage{{sec, 3}},
			[]VUStep{{0, 0}, {333_333_333, 1}, {666_666_666, 2}, {sec, 3}}},
		{"instant jump, hold, ramp down", 2, []Stage{{0, 5}, {3 * sec, 5}, {3 * sec, 2}},
			[]VUStep{{0, 5}, {4 * sec, 4}, {5 * sec, 3}, {6 * sec, 2}}},
		{"hold only", 3, []Stage{{10 * sec, 3}}, []VUStep{{0, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := VUSteps(tt.start, tt.stages)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("VUSteps = %v, want %v", got, tt.want)
			}
			for n := range got {
				if got[n] != tt.want[n] {
					t.Errorf("step %d = %v, want %v", n, got[n], tt.want[n])
				}
			}
		})
	}
	for _, bad := range [][]Stage{{{sec, 1.5}}, {{sec, -1}}, {{-sec, 1}}} {
		if _, err := VUSteps(0, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("VUSteps(%v) err = %v, want ErrInvalid", bad, err)
		}
	}
}

func FuzzRamping(f *testing.F) {
	f.Add(0.0, 10.0, int64(10_000), 3.0, int64(500), int64(7))
	f.Add(10.0, 0.0, int64(10_000), 0.0, int64(0), int64(49))
	f.Add(0.5, 1e4, int64(1), 1e-3, int64(3_600_000), int64(3))
	f.Fuzz(func(t *testing.T, start, t1 float64, d1ms int64, t2 float64, d2ms int64, i int64) {
		// Keep the oracle affordable: up to 1e6/s and an hour per stage.
		if start > 1e6 || t1 > 1e6 || t2 > 1e6 || d1ms > 3_600_000 || d2ms > 3_600_000 {
			return
		}
		stages := []Stage{{time.Duration(d1ms) * time.Millisecond, t1}, {time.Duration(d2ms) * time.Millisecond, t2}}
		r, err := NewRamping(start, 0, stages)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		at, ok := r.Offset(i)
		if !ok {
			if i >= 0 && i < r.Iterations() {
				t.Fatalf("Offset(%d) false but Iterations() = %d", i, r.Iterations())
			}
			return
		}
		if i >= r.Iterations() || at < 0 || at >= r.Duration() {
			t.Fatalf("Offset(%d) = %v with %d iterations over %v", i, at, r.Iterations(), r.Duration())
		}
		checkInverse(t, start, 0, stages, i, at)
		if next, ok := r.Offset(i + 1); ok && next < at {
			t.Fatalf("t_%d = %v before t_%d = %v", i+1, next, i, at)
		}
	})
}

func FuzzConstant(f *testing.F) {
	f.Add(5000.0, int64(1), int64(200_000), int64(1_000_000))
	f.Add(3.0, int64(1000), int64(1), int64(2))
	f.Fuzz(func(t *testing.T, rate float64, unitMS, durMS, i int64) {
		c, err := NewConstant(rate, time.Duration(unitMS)*time.Millisecond, time.Duration(durMS)*time.Millisecond)
		if err != nil {
			return
		}
		at, ok := c.Offset(i)
		if ok != (i >= 0 && i < c.Iterations()) {
			t.Fatalf("Offset(%d) ok=%v with %d iterations", i, ok, c.Iterations())
		}
		if ok && (at < 0 || at >= c.Duration()) {
			t.Fatalf("Offset(%d) = %v outside [0, %v)", i, at, c.Duration())
		}
	})
}

func BenchmarkConstantOffset(b *testing.B) {
	c, _ := NewConstant(5000, 0, time.Hour)
	for i := 0; b.Loop(); i++ {
		c.Offset(int64(i % 1_000_000))
	}
}

func BenchmarkRampingOffset(b *testing.B) {
	r, _ := NewRamping(100, 0, Steps(100, 100, 10, 20*sec))
	n := r.Iterations()
	for i := 0; b.Loop(); i++ {
		r.Offset(int64(i) % n)
	}
}

func TestRemaining(t *testing.T) {
	c := func(rate float64, d time.Duration) Constant {
		s, err := NewConstant(rate, time.Second, d)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name string
		s    Schedule
		from int64
		want int64
	}{
		{"10/s for 1 s, from 0", c(10, time.Second), 0, 10},
		{"10/s for 1 s, from 1", c(10, time.Second), 1, 9},
		{"10/s for 1 s, from the end", c(10, time.Second), 10, 0},
		{"10/s for 1 s, past the end", c(10, time.Second), 25, 0},
		{"negative from counts from 0", c(10, time.Second), -3, 10},
		{"3/s for 1 s: 0, 333, 666 ms", c(3, time.Second), 1, 2},
		{"100000/s for 3 s", c(100000, 3*time.Second), 68877, 300000 - 68877},
		{"0.5/s for 3 s: 0 and 2 s", c(0.5, 3*time.Second), 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Remaining(tt.s, tt.from); got != tt.want {
				t.Errorf("Remaining(%d) = %d, want %d", tt.from, got, tt.want)
			}
		})
	}
}

func TestDue(t *testing.T) {
	tenPerSecond, err := NewConstant(10, time.Second, time.Second) // 0, 100, ..., 900 ms
	if err != nil {
		t.Fatal(err)
	}
	ramp, err := NewRamping(0, time.Second, []Stage{{Target: 2, Duration: 2 * time.Second}}) // 2 iterations: rate t/s
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		s       Schedule
		elapsed time.Duration
		want    int64
	}{
		{"nothing before the start", tenPerSecond, 0, 0},
		{"iteration 0 starts at 0", tenPerSecond, 1, 1},
		{"100 ms is iteration 1's start: not before it", tenPerSecond, 100 * time.Millisecond, 1},
		{"just after 100 ms", tenPerSecond, 100*time.Millisecond + 1, 2},
		{"950 ms: all ten", tenPerSecond, 950 * time.Millisecond, 10},
		{"past the end", tenPerSecond, 5 * time.Second, 10},
		{"negative elapsed", tenPerSecond, -time.Second, 0},
		// Rate t/s from 0: iteration i starts when t²/2 = i, at sqrt(2i) s: 0 s, 1.414 s.
		{"ramp at 1 s: one", ramp, time.Second, 1},
		{"ramp at 1.5 s: two", ramp, 1500 * time.Millisecond, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Due(tt.s, tt.elapsed); got != tt.want {
				t.Errorf("Due(%v) = %d, want %d", tt.elapsed, got, tt.want)
			}
		})
	}
}
