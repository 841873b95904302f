package cli

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/knee-dev/knee/k6metric"
	"github.com/knee-dev/knee/k6script"
)

// The k6 block writes each value as k6 v1.8.1's end-of-test summary does
// (internal/js/summary.js: humanizeValue and the functions it calls), so
// a number reads the same in both: a rate truncated to 2 decimals, never
// rounded up to 100.00 %; durations truncated, without trailing zeros,
// or fixed in summaryTimeUnit; bytes in kB, MB by 1000.

// k6Value writes v, a value of a metric of kind whose values are contains
// (k6metric.Time, Data or Plain), in summaryTimeUnit unit ("" for k6's
// own choice).
func k6Value(v float64, kind, contains, unit string) string {
	if kind == k6script.KindRate {
		return jsToFixed(math.Trunc(v*100*100)/100, 2) + "%"
	}
	switch contains {
	case k6metric.Data:
		return k6Bytes(v)
	case k6metric.Time:
		return k6Duration(v, unit)
	}
	return noTrailingZeros(v, 6)
}

// k6Bytes is k6's humanizeBytes: below 10 as is, else by powers of 1000,
// one decimal under 10.
func k6Bytes(b float64) string {
	if b < 10 {
		return jsNumber(b) + " B"
	}
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"}
	e := int(math.Floor(math.Log(b) / math.Log(1000)))
	e = min(e, len(units)-1)
	v := math.Floor(b/math.Pow(1000, float64(e))*10+0.5) / 10
	prec := 0
	if v < 10 {
		prec = 1
	}
	return jsToFixed(v, prec) + " " + units[e]
}

// k6Duration is k6's humanizeDuration of ms milliseconds: fixed to 2
// decimals in unit (s, ms or us), else k6's generic form: ns, µs, ms, s,
// then m and h, each truncated.
func k6Duration(ms float64, unit string) string {
	if u, ok := map[string]struct {
		name string
		coef float64
	}{"s": {"s", 0.001}, "ms": {"ms", 1}, "us": {"µs", 1000}}[unit]; ok {
		return jsToFixed(ms*u.coef, 2) + u.name
	}
	switch {
	case ms == 0:
		return "0s"
	case ms < 0.001:
		return jsNumber(math.Trunc(ms*1e6)) + "ns"
	case ms < 1:
		return truncNoTrailingZeros(ms*1000, 2) + "µs"
	case ms < 1000:
		return truncNoTrailingZeros(ms, 2) + "ms"
	}
	prec := 2
	if ms > 60000 {
		prec = 0
	}
	out := truncNoTrailingZeros(math.Mod(ms, 60000)/1000, prec) + "s"
	rem := math.Trunc(ms / 60000)
	if rem < 1 {
		return out
	}
	out = jsNumber(math.Mod(rem, 60)) + "m" + out
	if rem = math.Trunc(rem / 60); rem < 1 {
		return out
	}
	return jsNumber(rem) + "h" + out
}

// truncNoTrailingZeros is k6's toFixedNoTrailingZerosTrunc.
func truncNoTrailingZeros(v float64, prec int) string {
	mult := math.Pow(10, float64(prec))
	return noTrailingZeros(math.Trunc(mult*v)/mult, prec)
}

// noTrailingZeros is k6's toFixedNoTrailingZeros: JavaScript's
// parseFloat(v.toFixed(prec)).toString().
func noTrailingZeros(v float64, prec int) string {
	f, _ := strconv.ParseFloat(jsToFixed(v, prec), 64)
	return jsNumber(f)
}

// jsNumber is JavaScript's Number.prototype.toString for the values the
// summary prints (no exponent below 1e21).
func jsNumber(v float64) string {
	if v == 0 {
		return "0" // -0 too
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// jsToFixed is JavaScript's Number.prototype.toFixed: the exact value of
// v rounded to prec decimals, a tie away from zero (Go's FormatFloat
// rounds a tie to even: 0.125 to 2 decimals is 0.13 here, 0.12 there).
func jsToFixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) >= 1e21 {
		return jsNumber(v)
	}
	neg := v < 0
	x := new(big.Float).SetPrec(2048).SetFloat64(math.Abs(v))
	x.Mul(x, new(big.Float).SetPrec(2048).SetFloat64(math.Pow(10, float64(prec))))
	x.Add(x, big.NewFloat(0.5))
	n, _ := x.Int(nil) // floor: x is not negative
	digits := n.String()
	if prec > 0 {
		if len(digits) <= prec {
			digits = strings.Repeat("0", prec-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-prec] + "." + digits[len(digits)-prec:]
	}
	if neg { // -0.001 to 2 decimals is -0.00, as in JavaScript
		digits = "-" + digits
	}
	return digits
}
