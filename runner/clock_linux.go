package runner

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// clockState asks the kernel (adjtimex, read only) whether the wall clock
// is synchronised, e.g. by NTP or chrony, its bound on the clock's error and
// the offset its time daemon last measured and is still correcting.
func clockState() (synced bool, maxErr, offset time.Duration, note string) {
	var tx unix.Timex // Modes 0: read, change nothing
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return false, 0, 0, "adjtimex failed: " + err.Error()
	}
	maxErr = time.Duration(tx.Maxerror) * time.Microsecond
	offset = time.Duration(tx.Offset) * time.Microsecond
	if tx.Status&unix.STA_NANO != 0 {
		offset = time.Duration(tx.Offset)
	}
	if state == unix.TIME_ERROR || tx.Status&unix.STA_UNSYNC != 0 {
		return false, maxErr, offset, fmt.Sprintf("the kernel reports the clock unsynchronised (adjtimex state %d, status %#x)", state, tx.Status)
	}
	return true, maxErr, offset, fmt.Sprintf("the kernel reports the clock synchronised, offset %v, max error %v", offset, maxErr)
}
