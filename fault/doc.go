// Package fault applies faults to a target during a run: CPU limits and
// freezes through cgroups (v1 and v2), and SIGSTOP/SIGCONT of a PID where no
// cgroup is available.
//
// Whatever happens, a target is never left frozen by knee:
//   - Schedule thaws on every path out of it: normal end, error, context
//     cancellation (Ctrl-C and SIGTERM reach it as a cancelled context) and
//     panic (deferred thaw).
//   - Before freezing it records the target in a state file (frozen.json) and
//     removes the entry after the thaw, so ThawAll (`knee thaw`) can thaw what a
//     knee killed with SIGKILL left behind.
//
// Bad input (a PID that does not exist or is not ours, a path that is not a
// cgroup, a CPU count out of range) is a *ValidationError that errors.Is
// matches against ErrNoSuchPID, ErrNotOurs, ErrForbiddenPID, ErrNotCgroup or
// ErrBadCPUs.
//
// Concurrency: a Cgroup is safe for concurrent use; its methods are file
// writes the kernel serialises. Schedule runs every fault from one goroutine.
package fault
