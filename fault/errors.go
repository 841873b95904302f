package fault

import "errors"

// Sentinels for bad input, matched with errors.Is against a *ValidationError.
var (
	// ErrNoSuchPID: the process does not exist.
	ErrNoSuchPID = errors.New("no such process")
	// ErrNotOurs: the process belongs to another user and we are not root.
	ErrNotOurs = errors.New("process is not ours")
	// ErrForbiddenPID: knee itself, pid 1 or an ancestor of knee, which knee
	// refuses to stop.
	ErrForbiddenPID = errors.New("refusing to stop this process")
	// ErrNotCgroup: the path is not a cgroup directory.
	ErrNotCgroup = errors.New("not a cgroup")
	// ErrBadCPUs: a CPU limit <= 0 or above the machine's CPU count.
	ErrBadCPUs = errors.New("cpus out of range")
	// ErrBadName: a cgroup name that is empty or not a single path element.
	ErrBadName = errors.New("bad cgroup name")
)

// ErrUnsupported is returned when the cgroup lacks the controller an
// operation needs (no freezer, no cpu controller); callers fall back to
// SIGSTOP or skip the CPU limit, and say so.
var ErrUnsupported = errors.New("not supported by this cgroup")

// ValidationError is bad input, with a message meant for the user.
type ValidationError struct {
	Msg string // e.g. "/tmp/x is not a cgroup"
	Err error  // one of the sentinels above
}

// Error returns the message for the user.
func (e *ValidationError) Error() string { return e.Msg }

// Unwrap returns the sentinel, so errors.Is works.
func (e *ValidationError) Unwrap() error { return e.Err }

func invalid(sentinel error, msg string) error {
	return &ValidationError{Msg: msg, Err: sentinel}
}
