//go:build !linux

package runner

import "time"

// clockState cannot ask the kernel outside Linux.
func clockState() (synced bool, maxErr, offset time.Duration, note string) {
	return false, 0, 0, "clock synchronisation unknown: adjtimex is Linux only"
}
