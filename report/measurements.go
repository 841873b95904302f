package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// Measurement is one row of the article's comparison table.
type Measurement struct {
	Name         string
	Requests     int64
	SlowerThan1s int64 // negative prints "-" (not meaningful, e.g. a corrected histogram)
	P95MS, P99MS float64
}

// MeasurementTable prints rows as the article does:
// Measurement | Requests | Slower than 1 s | p95 | p99.
func MeasurementTable(w io.Writer, rows []Measurement) error {
	t := table{header: []string{"Measurement", "Requests", "Slower than 1 s", "p95", "p99"},
		right: []bool{false, true, true, true, true}}
	for _, r := range rows {
		slow := "-"
		if r.SlowerThan1s >= 0 {
			slow = thousands(r.SlowerThan1s)
		}
		t.add(r.Name, thousands(r.Requests), slow, Ms(r.P95MS), Ms(r.P99MS))
	}
	return t.write(w)
}

// thousands writes n with thousands separators, as the article's tables do.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// Ratio formats x, a ratio whose denominator was den, such as 615× with
// decimals decimals; a ratio with a zero denominator (0/0, x/0) or no
// finite value has none and prints "-".
func Ratio(x, den float64, decimals int) string {
	if den == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', decimals, 64) + "×"
}

func trimFloat(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

func fmtP(p float64) string { return fmt.Sprintf(" (Mann-Whitney p=%.3g)", p) }
