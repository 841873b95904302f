package runner

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// clockState asks the kernel (adjtimex, read only) whether the wall clock
// is synchronised, e.g. by NTP or chrony, and its bound on the clock's error.
func clockState() (synced bool, maxErr time.Duration, note string) {
	var tx unix.Timex // Modes 0: read, change nothing
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return false, 0, "adjtimex failed: " + err.Error()
	}
	maxErr = time.Duration(tx.Maxerror) * time.Microsecond
	if state == unix.TIME_ERROR || tx.Status&unix.STA_UNSYNC != 0 {
		return false, maxErr, fmt.Sprintf("the kernel reports the clock unsynchronised (adjtimex state %d, status %#x)", state, tx.Status)
	}
	return true, maxErr, fmt.Sprintf("the kernel reports the clock synchronised, max error %v", maxErr)
}
