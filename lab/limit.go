package lab

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/knee-dev/knee/fault"
)

// LimitSelf moves the calling process into a new cgroup limited to cpus
// (for `knee lab serve --cpus`). release moves it back and removes the cgroup.
// cpus == 0 does nothing.
func LimitSelf(cpus float64) (release func() error, err error) {
	none := func() error { return nil }
	if cpus == 0 {
		return none, nil
	}
	if cpus < 0 || cpus > float64(runtime.NumCPU()) {
		return none, fmt.Errorf("--cpus %g: must be between 0 and the machine's %d CPUs", cpus, runtime.NumCPU())
	}
	caps := fault.Detect()
	if !caps.CPU {
		return none, fmt.Errorf("--cpus %g: cannot limit CPU here: %s", cpus, caps.CPUReason)
	}
	cg, err := fault.NewCgroup(caps.Hierarchy, "serve-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		return none, err
	}
	if err := cg.SetCPUs(cpus); err != nil {
		return none, errors.Join(err, cg.Remove())
	}
	if err := cg.AddPID(os.Getpid()); err != nil {
		return none, errors.Join(err, cg.Remove())
	}
	return cg.Remove, nil
}
