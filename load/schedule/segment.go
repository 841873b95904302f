package schedule

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Execution segments split one test among several runners, with k6's
// meaning (its --execution-segment and --execution-segment-sequence):
//
//   - a Segment is a part (from, to] of the test, 0 <= from < to <= 1;
//   - a Sequence is the list of all runners' segments, end to end from 0 to 1;
//   - within a sequence, the iterations (and VUs) are dealt out in a pattern
//     that repeats every L of them, L the least common denominator of the
//     segments' lengths: position p of each block of L goes to the segment
//     that is most behind its share, biggest segments first. So every
//     iteration of the whole schedule belongs to exactly one segment, and a
//     segment's iterations are spread evenly over the test, not bunched.
//
// All runners must use the same sequence for their shares to fit together;
// a segment given without one is completed to a sequence with the pieces
// before and after it (as k6 does), which fits only runners given the same
// completion.

// maxLCD bounds the repeating block, whose pattern is kept in memory.
const maxLCD = 1 << 20

// Segment is a part (From, To] of a test. The zero value is the whole test.
type Segment struct {
	from, to *big.Rat // nil means 0 and 1
}

// From is where the segment starts.
func (s Segment) From() *big.Rat {
	if s.from == nil {
		return new(big.Rat)
	}
	return new(big.Rat).Set(s.from)
}

// To is where the segment ends.
func (s Segment) To() *big.Rat {
	if s.to == nil {
		return big.NewRat(1, 1)
	}
	return new(big.Rat).Set(s.to)
}

// Length is To − From.
func (s Segment) Length() *big.Rat { return new(big.Rat).Sub(s.To(), s.From()) }

// IsWhole reports whether s is 0:1.
func (s Segment) IsWhole() bool { return s.From().Sign() == 0 && s.To().Cmp(big.NewRat(1, 1)) == 0 }

// Equal reports whether s and o are the same part.
func (s Segment) Equal(o Segment) bool {
	return s.From().Cmp(o.From()) == 0 && s.To().Cmp(o.To()) == 0
}

// String is "from:to" in lowest terms, e.g. "1/4:1/2"; ParseSegment reads it back.
func (s Segment) String() string { return s.From().RatString() + ":" + s.To().RatString() }

// NewSegment checks 0 <= from < to <= 1.
func NewSegment(from, to *big.Rat) (Segment, error) {
	switch {
	case from.Sign() < 0:
		return Segment{}, fmt.Errorf("%w: segment start %s is below 0", ErrInvalid, from.RatString())
	case to.Cmp(big.NewRat(1, 1)) > 0:
		return Segment{}, fmt.Errorf("%w: segment end %s is above 1", ErrInvalid, to.RatString())
	case from.Cmp(to) >= 0:
		return Segment{}, fmt.Errorf("%w: segment start %s must be below its end %s", ErrInvalid, from.RatString(), to.RatString())
	}
	return Segment{from: new(big.Rat).Set(from), to: new(big.Rat).Set(to)}, nil
}

// ParseSegment reads k6's forms: "from:to" or "to" (meaning 0:to), each
// value a fraction (1/4), a decimal (0.25) or a percentage (25%). "" is the
// whole test.
func ParseSegment(s string) (Segment, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Segment{}, nil
	}
	fromS, toS, found := strings.Cut(s, ":")
	if !found {
		fromS, toS = "0", s
	}
	from, err := parseFraction(fromS)
	if err != nil {
		return Segment{}, fmt.Errorf("segment %q: %w", s, err)
	}
	to, err := parseFraction(toS)
	if err != nil {
		return Segment{}, fmt.Errorf("segment %q: %w", s, err)
	}
	seg, err := NewSegment(from, to)
	if err != nil {
		return Segment{}, fmt.Errorf("segment %q: %w (write from:to with 0 <= from < to <= 1, e.g. 1/4:2/4)", s, err)
	}
	return seg, nil
}

// parseFraction reads 1/4, 0.25 or 25%.
func parseFraction(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		r, ok := new(big.Rat).SetString(p)
		if !ok || strings.ContainsAny(p, "/eE") {
			return nil, fmt.Errorf("%w: %q is not a percentage such as 25%%", ErrInvalid, s)
		}
		return r.Quo(r, big.NewRat(100, 1)), nil
	}
	if strings.ContainsAny(s, "eE") || s == "" { // big.Rat would read 1e9999999: refuse exponents
		return nil, fmt.Errorf("%w: %q is not a fraction such as 1/4, 0.25 or 25%%", ErrInvalid, s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a fraction such as 1/4, 0.25 or 25%%", ErrInvalid, s)
	}
	return r, nil
}

// Sequence is every runner's segment, end to end. It need not start at 0 or
// end at 1; Share completes it.
type Sequence []Segment

// ParseSequence reads k6's form "p0,p1,...,pn": the segments (p0,p1], (p1,p2], ...
// "" is no sequence.
func ParseSequence(s string) (Sequence, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) < 2 {
		return nil, fmt.Errorf("sequence %q: %w: give at least two points, e.g. 0,1/4,2/4,3/4,1", s, ErrInvalid)
	}
	var seq Sequence
	prev, err := parseFraction(parts[0])
	if err != nil {
		return nil, fmt.Errorf("sequence %q: %w", s, err)
	}
	for _, p := range parts[1:] {
		next, err := parseFraction(p)
		if err != nil {
			return nil, fmt.Errorf("sequence %q: %w", s, err)
		}
		seg, err := NewSegment(prev, next)
		if err != nil {
			return nil, fmt.Errorf("sequence %q: %w (points must rise from 0 to 1)", s, err)
		}
		seq = append(seq, seg)
		prev = next
	}
	return seq, nil
}

// String is "p0,p1,...,pn"; ParseSequence reads it back.
func (q Sequence) String() string {
	if len(q) == 0 {
		return ""
	}
	pts := []string{q[0].From().RatString()}
	for _, s := range q {
		pts = append(pts, s.To().RatString())
	}
	return strings.Join(pts, ",")
}

// EvenSequence splits the test into n equal segments: 0,1/n,...,1.
func EvenSequence(n int) (Sequence, error) {
	if n < 1 || n > maxLCD {
		return nil, fmt.Errorf("%w: %d runners; use 1 to %d", ErrInvalid, n, maxLCD)
	}
	seq := make(Sequence, n)
	for i := range n {
		seq[i] = Segment{from: big.NewRat(int64(i), int64(n)), to: big.NewRat(int64(i+1), int64(n))}
	}
	return seq, nil
}

// Share is one segment's part of a test split by a sequence: which
// iterations (and VUs) of the whole are its own. The zero value is the
// whole test.
type Share struct {
	seg Segment
	seq Sequence // completed: from 0 to 1
	lcd int64
	pos []int64 // this segment's positions in each block of lcd, ascending
}

// NewShare places seg in seq (completed from 0 to 1 with the pieces missing
// before, between or after). seq may be nil: the sequence is then seg and
// the pieces around it. seg must be one of seq's segments.
func NewShare(seg Segment, seq Sequence) (Share, error) {
	if seg.IsWhole() && len(seq) <= 1 {
		return Share{}, nil
	}
	if len(seq) == 0 {
		seq = Sequence{seg}
	}
	full, err := complete(seq)
	if err != nil {
		return Share{}, err
	}
	idx := slices.IndexFunc(full, seg.Equal)
	if idx < 0 {
		return Share{}, fmt.Errorf("%w: segment %s is not one of the sequence %s; give each runner one of its segments", ErrInvalid, seg, full)
	}
	lcd, err := commonDenominator(full)
	if err != nil {
		return Share{}, err
	}
	return Share{seg: seg, seq: full, lcd: lcd, pos: stripe(full, lcd)[idx]}, nil
}

// complete checks that seq's segments are end to end and adds the pieces
// from 0 to its start and from its end to 1.
func complete(seq Sequence) (Sequence, error) {
	for i := 1; i < len(seq); i++ {
		if seq[i].From().Cmp(seq[i-1].To()) != 0 {
			return nil, fmt.Errorf("%w: sequence %s: segment %d starts at %s, not where segment %d ends (%s)",
				ErrInvalid, seq, i+1, seq[i].From().RatString(), i, seq[i-1].To().RatString())
		}
	}
	var full Sequence
	if f := seq[0].From(); f.Sign() > 0 {
		full = append(full, Segment{from: new(big.Rat), to: f})
	}
	full = append(full, seq...)
	if t := seq[len(seq)-1].To(); t.Cmp(big.NewRat(1, 1)) < 0 {
		full = append(full, Segment{from: t, to: big.NewRat(1, 1)})
	}
	return full, nil
}

// commonDenominator is the least common multiple of the lengths' denominators.
func commonDenominator(seq Sequence) (int64, error) {
	l := big.NewInt(1)
	for _, s := range seq {
		d := s.Length().Denom()
		g := new(big.Int).GCD(nil, nil, l, d)
		l.Mul(l, new(big.Int).Quo(d, g))
		if l.Cmp(big.NewInt(maxLCD)) > 0 {
			return 0, fmt.Errorf("%w: sequence %s repeats only every %s iterations or more (limit %d); use simpler fractions such as 1/8",
				ErrInvalid, seq, l, maxLCD)
		}
	}
	return l.Int64(), nil
}

// stripe deals the positions 0..lcd-1 of a block out to seq's segments.
// Segment s owns n_s = length·lcd positions per block. Position p goes to
// the first segment, biggest first (ties in sequence order), whose count c
// so far satisfies c·lcd <= p·n_s, that is whose next position is due. Some
// segment always qualifies (their counts sum to p), and each ends the block
// with exactly n_s positions. This is k6's striping rule, so a segment owns
// the same iterations in knee as in k6.
func stripe(seq Sequence, lcd int64) [][]int64 {
	n := make([]int64, len(seq))
	for i, s := range seq {
		l := s.Length()
		n[i] = l.Num().Int64() * (lcd / l.Denom().Int64())
	}
	order := make([]int, len(seq))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case n[a] > n[b]:
			return -1
		case n[a] < n[b]:
			return 1
		}
		return 0
	})
	count := make([]int64, len(seq))
	out := make([][]int64, len(seq))
	for p := range lcd {
		for _, i := range order {
			if count[i]*lcd <= p*n[i] {
				count[i]++
				out[i] = append(out[i], p)
				break
			}
		}
	}
	return out
}

// Segment is the share's segment; 0:1 for the zero Share.
func (sh Share) Segment() Segment { return sh.seg }

// Sequence is the completed sequence; nil for the zero Share.
func (sh Share) Sequence() Sequence { return slices.Clone(sh.seq) }

// IsWhole reports whether the share is the whole test.
func (sh Share) IsWhole() bool { return sh.lcd == 0 }

// Global is the number, in the whole test, of the share's j-th item (0-based);
// false if it does not fit in an int64.
func (sh Share) Global(j int64) (int64, bool) {
	if sh.lcd == 0 {
		return j, j >= 0
	}
	if j < 0 {
		return 0, false
	}
	k := int64(len(sh.pos))
	block := j / k
	if block > (1<<63-1-sh.lcd)/sh.lcd {
		return 0, false
	}
	return block*sh.lcd + sh.pos[j%k], true
}

// Scale is how many of the whole test's first n items (iterations, VUs) are
// the share's. Over the segments of a sequence the Scales add up to n.
func (sh Share) Scale(n int64) int64 {
	if sh.lcd == 0 || n <= 0 {
		return max(n, 0)
	}
	got := n / sh.lcd * int64(len(sh.pos))
	rem := n % sh.lcd
	for _, p := range sh.pos {
		if p < rem {
			got++
		}
	}
	return got
}

// Segmented is sched cut to sh: its iteration j is the whole schedule's
// iteration sh.Global(j), at the same offset. The zero Share returns sched.
func Segmented(sched Schedule, sh Share) Schedule {
	if sh.IsWhole() {
		return sched
	}
	frac, _ := sh.seg.Length().Float64()
	return segmented{whole: sched, sh: sh, frac: frac}
}

type segmented struct {
	whole Schedule
	sh    Share
	frac  float64
}

// Offset implements Schedule.
func (s segmented) Offset(j int64) (time.Duration, bool) {
	g, ok := s.sh.Global(j)
	if !ok {
		return 0, false
	}
	return s.whole.Offset(g)
}

// Rate implements Schedule: the share's part of the whole rate.
func (s segmented) Rate(at time.Duration) float64 { return s.whole.Rate(at) * s.frac }

// Duration implements Schedule.
func (s segmented) Duration() time.Duration { return s.whole.Duration() }
