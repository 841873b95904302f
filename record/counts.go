package record

import (
	"reflect"
	"unsafe"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// hdrhistogram-go offers no walk over a histogram's buckets that does not
// copy them (Export copies the ~190 KB counts array, Distribution allocates
// a bar per bucket), and a run reads each interval's histograms several
// times (summary, log line, packed copy): at 300 req/s those copies and
// their page faults were a fifth of the generator's CPU. So record reads
// the two fields it needs in place, found by name and type through
// reflect: a release of the library that renames or retypes one makes the
// read a copy through Export again, never a misread (TestCountsOfIsExport).

// countsOf is h's counts array, read in place: the one way record reads a
// full histogram's buckets. The slice aliases h: read it only while h is
// not changed, and never write to it.
func countsOf(h *hdrhistogram.Histogram) []int64 {
	if c, ok := fieldOf[[]int64](h, "counts"); ok {
		return *c
	}
	return h.Export().Counts
}

// conversionRatioOf is h's V2 integer-to-double conversion ratio, as
// Export reports it (0 when never set).
func conversionRatioOf(h *hdrhistogram.Histogram) float64 {
	if r, ok := fieldOf[float64](h, "conversionRatio"); ok {
		return *r
	}
	return h.Export().IntegerToDoubleConversionRatio
}

// fieldOf points at h's unexported field name if it has type T.
func fieldOf[T any](h *hdrhistogram.Histogram, name string) (*T, bool) {
	f, ok := reflect.TypeFor[hdrhistogram.Histogram]().FieldByName(name)
	if !ok || f.Type != reflect.TypeFor[T]() {
		return nil, false
	}
	return (*T)(unsafe.Add(unsafe.Pointer(h), f.Offset)), true
}
