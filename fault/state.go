package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// StateFile is the file in the state directory listing frozen targets.
const StateFile = "frozen.json"

// Methods recorded in the state file and in rundir.Fault.Method.
const (
	MethodV1Freezer = "cgroup-v1-freezer"
	MethodV2Freeze  = "cgroup-v2-freeze"
	MethodSIGSTOP   = "sigstop"
)

// StateEntry is one target a knee process froze and has not thawed yet.
type StateEntry struct {
	Method     string    `json:"method"`
	Path       string    `json:"path,omitempty"`      // cgroup directory
	PID        int       `json:"pid,omitempty"`       // sigstop target
	PIDStart   uint64    `json:"pid_start,omitempty"` // its starttime, so a reused PID is left alone
	Owner      int       `json:"owner_pid"`           // the knee that froze it
	OwnerStart uint64    `json:"owner_start"`
	Since      time.Time `json:"since"`
}

type stateDoc struct {
	Frozen []StateEntry `json:"frozen"`
}

// DefaultStateDir is $XDG_STATE_HOME/knee, or $HOME/.local/state/knee.
func DefaultStateDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "knee"), nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "knee"), nil
	}
	return "", errors.New("no state directory: neither XDG_STATE_HOME nor HOME is set")
}

// entryFor describes f for the state file; false for freezers knee cannot
// thaw from a record (ones it does not know).
func entryFor(f Freezer, owner int, ownerStart uint64, now time.Time) (StateEntry, bool) {
	e := StateEntry{Owner: owner, OwnerStart: ownerStart, Since: now}
	switch f := f.(type) {
	case *Cgroup:
		e.Method, e.Path = f.Method(), f.dir("freezer")
	case *SignalFreezer:
		e.Method, e.PID, e.PIDStart = f.Method(), f.pid, f.start
	default:
		return StateEntry{}, false
	}
	return e, true
}

// sameTarget says whether two entries name the same frozen target by the same owner.
func (e StateEntry) sameTarget(o StateEntry) bool {
	return e.Method == o.Method && e.Path == o.Path && e.PID == o.PID && e.Owner == o.Owner
}

// String names the target and the knee that froze it, for `knee thaw`'s report.
func (e StateEntry) String() string {
	if e.Method == MethodSIGSTOP {
		return fmt.Sprintf("%s pid:%d (frozen by knee pid %d)", e.Method, e.PID, e.Owner)
	}
	return fmt.Sprintf("%s %s (frozen by knee pid %d)", e.Method, e.Path, e.Owner)
}

// updateState runs change on the state file's entries under an exclusive
// lock and writes the result atomically.
func updateState(dir string, change func([]StateEntry) []StateEntry) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, StateFile+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("lock state: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock state: %w", err)
	}
	path := filepath.Join(dir, StateFile)
	var doc stateDoc
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read state: %w", err)
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	doc.Frozen = change(doc.Frozen)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, append(out, '\n'), 0o600); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(fmt.Errorf("write state: %w", err), os.Remove(tmp))
	}
	return nil
}

func addEntry(dir string, e StateEntry) error {
	return updateState(dir, func(es []StateEntry) []StateEntry { return append(es, e) })
}

func removeEntry(dir string, e StateEntry) error {
	return updateState(dir, func(es []StateEntry) []StateEntry {
		return slices.DeleteFunc(es, e.sameTarget)
	})
}

// ThawResult is what ThawAll did with one entry.
type ThawResult struct {
	Entry  StateEntry
	Action string // "thawed", "kept" (its knee is still running) or "gone" (the PID exited)
	Err    error  // why the thaw failed; the entry stays for the next try
}

// ThawAll thaws every target in stateDir's frozen.json whose knee is no
// longer running (killed with SIGKILL, say), removes those entries and
// reports what it did with each. Entries of a running knee are kept.
func ThawAll(stateDir string) ([]ThawResult, error) { return thawAll(stateDir, "/proc") }

func thawAll(stateDir, procRoot string) ([]ThawResult, error) {
	var results []ThawResult
	err := updateState(stateDir, func(es []StateEntry) []StateEntry {
		var keep []StateEntry
		for _, e := range es {
			r := thawEntry(e, procRoot)
			results = append(results, r)
			if r.Action == "kept" || r.Err != nil {
				keep = append(keep, e)
			}
		}
		return keep
	})
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Entry, r.Err))
		}
	}
	return results, errors.Join(errs...)
}

func thawEntry(e StateEntry, procRoot string) ThawResult {
	if alive(procRoot, e.Owner, e.OwnerStart) {
		return ThawResult{Entry: e, Action: "kept"}
	}
	var err error
	switch e.Method {
	case MethodV1Freezer:
		err = writeFile(filepath.Join(e.Path, "freezer.state"), "THAWED")
	case MethodV2Freeze:
		err = writeFile(filepath.Join(e.Path, "cgroup.freeze"), "0")
	case MethodSIGSTOP:
		if !alive(procRoot, e.PID, e.PIDStart) {
			return ThawResult{Entry: e, Action: "gone"}
		}
		err = (&SignalFreezer{pid: e.PID}).Thaw()
	default:
		err = fmt.Errorf("unknown method %q", e.Method)
	}
	if errors.Is(err, os.ErrNotExist) {
		return ThawResult{Entry: e, Action: "gone"} // the cgroup was removed
	}
	if err != nil {
		return ThawResult{Entry: e, Err: err}
	}
	return ThawResult{Entry: e, Action: "thawed"}
}

// alive says whether pid runs and is the process that started at start.
func alive(procRoot string, pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := readProcStat(procRoot, pid)
	return err == nil && st.start == start && st.state != 'Z' && st.state != 'X'
}
