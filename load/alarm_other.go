//go:build !linux

package load

// newKernelTimer: no kernel timer the runtime's netpoller can watch is wired
// up on this system; runtime timers alone pace the VUs.
func newKernelTimer() kernelTimer { return nil }
