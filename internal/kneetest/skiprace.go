package kneetest

import "testing"

// SkipUnderRace skips a test that measures the process's resident memory
// when the binary is built with the race detector: the detector's shadow
// memory (several bytes per byte of heap) stays resident after the Go heap
// returns its pages, so the figures say nothing of knee's. The test suite's
// pass without -race runs it.
func SkipUnderRace(t testing.TB) {
	t.Helper()
	if raceEnabled {
		t.Skip("SKIP: built with -race, whose shadow memory stays resident: resident-memory figures are not knee's here; the pass without -race runs this test")
	}
}
