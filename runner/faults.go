package runner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/knee-dev/knee/fault"
	"github.com/knee-dev/knee/scenario"
)

// ResolveFaults turns the configured faults into freezers, before any load
// starts, so a bad target is an error up front. A fault without a target
// freezes def.
func ResolveFaults(fs []scenario.Fault, def fault.Freezer) ([]fault.Fault, error) {
	var out []fault.Fault
	for i, f := range fs {
		if f.Kind != "" && f.Kind != scenario.FaultFreeze {
			return nil, fmt.Errorf("fault %d: kind %q is not supported during a run; limit the target's CPU when starting it (knee lab serve --cpus)", i+1, f.Kind)
		}
		fr := def
		if f.Target != "" {
			var err error
			if fr, err = Freezer(f.Target); err != nil {
				return nil, fmt.Errorf("fault %d: %w", i+1, err)
			}
		}
		if fr == nil {
			return nil, fmt.Errorf("fault %d (freeze at %s): no target; give --target-pid or --target-cgroup, or target: in the scenario file", i+1, f.At)
		}
		out = append(out, fault.Fault{At: f.At, For: f.For, Freezer: fr})
	}
	if errs := fault.ValidateFaults(out); len(errs) > 0 {
		return nil, fmt.Errorf("faults: %w", errors.Join(errs...))
	}
	return out, nil
}

// Freezer resolves a target: "pid:N" (SIGSTOP/SIGCONT) or "cgroup:PATH"
// (the cgroup freezer).
func Freezer(target string) (fault.Freezer, error) {
	kind, val, ok := strings.Cut(target, ":")
	switch {
	case ok && kind == "pid":
		pid, err := strconv.Atoi(val)
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("target %q: the PID must be a positive number, e.g. pid:1234", target)
		}
		return fault.NewSignalFreezer(pid)
	case ok && kind == "cgroup":
		return fault.Open(val)
	}
	return nil, fmt.Errorf("target %q: write pid:N or cgroup:/sys/fs/cgroup/...", target)
}
