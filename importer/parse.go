package importer

import (
	"math"
	"strconv"
	"time"
)

// parseScaled parses a non-negative decimal number of units, each scale
// nanoseconds, into whole nanoseconds. Plain decimals ("3.778939") are
// converted exactly without floating point, which is also the fast path;
// exponents, signs and other forms strconv accepts go through ParseFloat.
// Results beyond the int64 range saturate (record clamps them anyway).
func parseScaled(b []byte, scale int64) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var whole, frac int64
	intDigits, fracDigits, i := 0, 0, 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if whole > (math.MaxInt64-9)/10 {
			return parseScaledSlow(b, scale)
		}
		whole = whole*10 + int64(b[i]-'0')
		intDigits++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if fracDigits < 18 { // further digits are below a nanosecond
				frac = frac*10 + int64(b[i]-'0')
				fracDigits++
			}
		}
	}
	if i != len(b) || intDigits+fracDigits == 0 {
		return parseScaledSlow(b, scale)
	}
	if whole > math.MaxInt64/scale {
		return math.MaxInt64, true
	}
	ns := whole * scale
	if fracDigits > 0 {
		// frac/10^fracDigits*scale, rounded half up, without overflow for scale <= 1e9.
		p := int64(1)
		for range fracDigits {
			p *= 10
		}
		if scale <= 1e9 && frac <= math.MaxInt64/scale {
			ns += (frac*scale + p/2) / p
		} else {
			ns += int64(math.Round(float64(frac) / float64(p) * float64(scale)))
		}
	}
	return ns, true
}

func parseScaledSlow(b []byte, scale int64) (int64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	v := f * float64(scale)
	if v >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	return int64(math.Round(v)), true
}

// parseCount parses a non-negative k6 counter or gauge value ("1.000000").
func parseCount(b []byte) (float64, bool) {
	n, ok := parseScaled(b, 1e6) // exact to k6's six decimals
	return float64(n) / 1e6, ok
}

// parseInt parses a small non-negative decimal integer (an HTTP status, a k6 error code).
func parseInt(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// timeParser parses the timestamps k6 writes, remembering the last one:
// the rows of one request share it, so most calls are a comparison.
type timeParser struct {
	last   []byte
	lastNs int64
}

// parse reads a unix time in seconds, milliseconds, microseconds or
// nanoseconds (told apart by digit count, valid for dates from 2001 to
// 2286: k6's timeFormat unix, unix_milli, unix_micro, unix_nano), a decimal
// number of seconds, or RFC 3339 with or without fractional seconds.
func (p *timeParser) parse(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if string(b) == string(p.last) {
		return p.lastNs, true
	}
	ns, ok := parseTime(b)
	if ok {
		p.last = append(p.last[:0], b...)
		p.lastNs = ns
	}
	return ns, ok
}

func parseTime(b []byte) (int64, bool) {
	if n, ok := allDigits(b); ok {
		switch {
		case len(b) <= 11:
			return saturatingMul(n, int64(time.Second)), true
		case len(b) <= 14:
			return saturatingMul(n, int64(time.Millisecond)), true
		case len(b) <= 17:
			return saturatingMul(n, int64(time.Microsecond)), true
		case len(b) <= 19:
			return n, true
		}
		return 0, false
	}
	if b[0] >= '0' && b[0] <= '9' && len(b) < 32 {
		if len(b) >= 10 && (b[4] == '-' || b[4] == 'T') {
			goto rfc
		}
		return parseScaled(b, int64(time.Second))
	}
rfc:
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}

func allDigits(b []byte) (int64, bool) {
	if len(b) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, len(b) > 0 && n >= 0
}

func saturatingMul(a, b int64) int64 {
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}
