package schedule

import (
	"math/big"
	"slices"
	"testing"
	"time"
)

func mustSeq(t *testing.T, s string) Sequence {
	t.Helper()
	q, err := ParseSequence(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestStripeByHand checks the dealing rule against blocks worked out on paper.
func TestStripeByHand(t *testing.T) {
	tests := []struct {
		seq, seg string
		want     []int64
		lcd      int64
	}{
		// thirds: one each, in order
		{"0,1/3,2/3,1", "0:1/3", []int64{0}, 3},
		{"0,1/3,2/3,1", "1/3:2/3", []int64{1}, 3},
		{"0,1/3,2/3,1", "2/3:1", []int64{2}, 3},
		// 3/5 and 2/5: p0→A (0·5<=0·3); p1→B (A: 5>3); p2→A (5<=6); p3→B (A: 10>9); p4→A (10<=12)
		{"0,3/5,1", "0:3/5", []int64{0, 2, 4}, 5},
		{"0,3/5,1", "3/5:1", []int64{1, 3}, 5},
		// the bigger segment deals first even when it comes later: 1/4 and 3/4.
		// p0→B; p1→A (B: 1·4 > 1·3); p2→B (4 <= 6); p3→B (8 <= 9)
		{"0,1/4,1", "1/4:1", []int64{0, 2, 3}, 4},
		{"0,1/4,1", "0:1/4", []int64{1}, 4},
	}
	for _, tt := range tests {
		seg, err := ParseSegment(tt.seg)
		if err != nil {
			t.Fatal(err)
		}
		sh, err := NewShare(seg, mustSeq(t, tt.seq))
		if err != nil {
			t.Fatal(err)
		}
		if sh.lcd != tt.lcd || !slices.Equal(sh.pos, tt.want) {
			t.Errorf("%s in %s: block %d positions %v, want %d %v", tt.seg, tt.seq, sh.lcd, sh.pos, tt.lcd, tt.want)
		}
	}
}

// TestSegmentsUnionIsTheSchedule enumerates every segment's iterations and
// checks they are the whole schedule's, each exactly once, at the same
// intended offsets, for uneven splits and rates that do not divide.
func TestSegmentsUnionIsTheSchedule(t *testing.T) {
	constant := func(rate float64, d time.Duration) Schedule {
		s, err := NewConstant(rate, 0, d)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ramp := func() Schedule {
		s, err := NewRamping(3, 0, []Stage{{Duration: 2 * time.Second, Target: 71}, {Duration: 1500 * time.Millisecond, Target: 0}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	scheds := map[string]Schedule{
		"7/s for 10s":       constant(7, 10*time.Second),
		"1000/3 per s, 3s":  constant(1000.0/3, 3*time.Second),
		"4000/s for 1.001s": constant(4000, 1001*time.Millisecond),
		"ramp 3→71→0":       ramp(),
	}
	seqs := []string{"0,1/3,2/3,1", "0,1/4,2/4,3/4,1", "0,3/5,1", "0,1/7,1/2,5/6,1", "0,0.1,0.35,1"}
	for name, whole := range scheds {
		var want []time.Duration
		for i := int64(0); ; i++ {
			off, ok := whole.Offset(i)
			if !ok {
				break
			}
			want = append(want, off)
		}
		for _, sq := range seqs {
			seq := mustSeq(t, sq)
			owner := make([]int, len(want)) // 1 + segment index
			var got []time.Duration
			for si, seg := range seq {
				sh, err := NewShare(seg, seq)
				if err != nil {
					t.Fatal(err)
				}
				part := Segmented(whole, sh)
				var n int64
				for j := int64(0); ; j++ {
					off, ok := part.Offset(j)
					if !ok {
						break
					}
					g, _ := sh.Global(j)
					if g >= int64(len(want)) || want[g] != off {
						t.Fatalf("%s, %s, segment %s: item %d is global %d at %v, not the schedule's", name, sq, seg, j, g, off)
					}
					if owner[g] != 0 {
						t.Fatalf("%s, %s: iteration %d in segments %d and %d", name, sq, g, owner[g]-1, si)
					}
					owner[g] = si + 1
					got = append(got, off)
					n++
				}
				if n != sh.Scale(int64(len(want))) {
					t.Errorf("%s, %s, segment %s: %d iterations, Scale says %d", name, sq, seg, n, sh.Scale(int64(len(want))))
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s, %s: the segments start %d iterations, the whole schedule %d", name, sq, len(got), len(want))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s, %s: union of the segments' offsets differs from the schedule", name, sq)
			}
		}
	}
}

func TestSegmentedByHand(t *testing.T) {
	whole, err := NewConstant(7, 0, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	seq := mustSeq(t, "0,1/3,2/3,1")
	sh, err := NewShare(seq[1], seq)
	if err != nil {
		t.Fatal(err)
	}
	part := Segmented(whole, sh)
	// 1/3:2/3 owns iterations 1, 4, 7, ..., 67 of 70: 23 of them, 3/7 s apart.
	for j, want := range map[int64]time.Duration{0: 142_857_142, 1: 571_428_571, 22: 67 * time.Second / 7} {
		if got, ok := part.Offset(j); !ok || got != want {
			t.Errorf("Offset(%d) = %v %v, want %v", j, got, ok, want)
		}
	}
	if _, ok := part.Offset(23); ok {
		t.Errorf("Offset(23) exists; the segment has 23 iterations")
	}
	if r := part.Rate(time.Second); r < 7.0/3-1e-9 || r > 7.0/3+1e-9 {
		t.Errorf("Rate = %v, want 7/3", r)
	}
}

func TestScaleSplitsVUs(t *testing.T) {
	seq := mustSeq(t, "0,1/3,2/3,1")
	// 10 VUs in thirds: positions ≡0,1,2 mod 3 below 10 → 4, 3, 3.
	for i, want := range []int64{4, 3, 3} {
		sh, err := NewShare(seq[i], seq)
		if err != nil {
			t.Fatal(err)
		}
		if got := sh.Scale(10); got != want {
			t.Errorf("segment %s: Scale(10) = %d, want %d", seq[i], got, want)
		}
	}
	for _, sq := range []string{"0,1/4,2/4,3/4,1", "0,3/5,1", "0,1/7,1/2,5/6,1"} {
		seq := mustSeq(t, sq)
		for n := int64(0); n < 200; n++ {
			var sum int64
			for _, seg := range seq {
				sh, _ := NewShare(seg, seq)
				sum += sh.Scale(n)
			}
			if sum != n {
				t.Fatalf("%s: Scale(%d) adds up to %d", sq, n, sum)
			}
		}
	}
}

func TestParseSegment(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"1/4:2/4", "1/4:1/2", true},
		{"0.25:50%", "1/4:1/2", true},
		{"1/3", "0:1/3", true},
		{"", "0:1", true},
		{"2/4:1/4", "", false},
		{"0:1.5", "", false},
		{"-1/4:1/4", "", false},
		{"a:b", "", false},
		{"1e9:1", "", false},
		{"1/0:1", "", false},
	}
	for _, tt := range tests {
		s, err := ParseSegment(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseSegment(%q) error %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && s.String() != tt.want {
			t.Errorf("ParseSegment(%q) = %s, want %s", tt.in, s, tt.want)
		}
	}
}

func TestShareErrors(t *testing.T) {
	seq := mustSeq(t, "0,1/4,2/4,3/4,1")
	seg, _ := ParseSegment("1/4:3/4")
	if _, err := NewShare(seg, seq); err == nil {
		t.Error("a segment outside the sequence was accepted")
	}
	if _, err := ParseSequence("0,1/2,1/4,1"); err == nil {
		t.Error("a falling sequence was accepted")
	}
	// A segment alone is completed around: 1/4:2/4 with 0:1/4 and 2/4:1.
	sh, err := NewShare(mustSeq(t, "1/4,2/4")[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := sh.Sequence().String(); got != "0,1/4,1/2,1" {
		t.Errorf("completed sequence %s, want 0,1/4,1/2,1", got)
	}
	if _, err := NewShare(mustSeq(t, "0,1/2000003,1")[0], nil); err == nil {
		t.Error("a block beyond the limit was accepted")
	}
}

func FuzzParseSegment(f *testing.F) {
	for _, s := range []string{"1/4:2/4", "0.25:50%", "1/3", "", "0,1/3,2/3,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if seg, err := ParseSegment(s); err == nil {
			back, err := ParseSegment(seg.String())
			if err != nil || !back.Equal(seg) {
				t.Fatalf("%q → %s does not read back: %v", s, seg, err)
			}
		}
		seq, err := ParseSequence(s)
		if err != nil || len(seq) == 0 {
			return
		}
		var sum int64
		for _, seg := range seq {
			sh, err := NewShare(seg, seq)
			if err != nil {
				return // a block too large is a valid refusal
			}
			sum += sh.Scale(1000)
		}
		if seq[0].From().Sign() == 0 && seq[len(seq)-1].To().Cmp(big.NewRat(1, 1)) == 0 && sum != 1000 {
			t.Fatalf("%s: the shares of 1000 add up to %d", seq, sum)
		}
	})
}
