//go:build !race

package kneetest

// raceEnabled: this test binary is built with the race detector.
const raceEnabled = false
