//go:build !linux

package runner

// openFileLimit is unknown here: no warning.
func openFileLimit() uint64 { return 0 }
