package record

import (
	"slices"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The in-place reads see exactly what Export copies, for histograms of
// knee's geometry and another, empty and filled, and one decoded with a
// conversion ratio: if the library's layout changed under them, this fails
// (or they fall back to Export and it passes for that reason).
func TestCountsOfIsExport(t *testing.T) {
	filled := newHdr()
	for _, v := range []int64{1, 2, 2, 2047, 2048, 2049, 5_000, 1_000_000, HighestMicros} {
		if err := filled.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	ratio := hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: 1, HighestTrackableValue: 1000,
		SignificantFigures: 2, Counts: []int64{0, 3, 0, 7}, IntegerToDoubleConversionRatio: 0.001})
	for _, c := range []struct {
		name string
		h    *hdrhistogram.Histogram
	}{
		{"empty", newHdr()},
		{"filled", filled},
		{"foreign geometry and ratio", ratio},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := c.h.Export()
			got := countsOf(c.h)
			if !slices.Equal(got, want.Counts) {
				t.Errorf("countsOf differs from Export's counts (len %d against %d)", len(got), len(want.Counts))
			}
			if got := conversionRatioOf(c.h); got != want.IntegerToDoubleConversionRatio {
				t.Errorf("conversionRatioOf = %v, Export says %v", got, want.IntegerToDoubleConversionRatio)
			}
		})
	}
	// In place, not a copy: a value recorded after the read shows in it.
	h := newHdr()
	counts := countsOf(h)
	if err := h.RecordValue(3); err != nil {
		t.Fatal(err)
	}
	if counts[3] != 1 {
		t.Errorf("countsOf is a copy (counts[3] = %d after recording 3): the library's layout changed, each read copies ~190 KB again", counts[3])
	}
}
