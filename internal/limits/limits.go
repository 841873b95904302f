// Package limits holds the size limits of what knee reads, in one place (the
// README's limits table lists them), and the bounded reads that enforce
// them: a file larger than its limit, or one that never ends (/dev/zero, a
// pipe from yes), is an error that names the file, the limit and the fix,
// read no further than the limit.
package limits

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// The limits, each far above what a real file of its kind holds.
const (
	// Scenario is a scenario YAML file, or standard input (knee run -).
	Scenario = 4 << 20
	// Script is a k6 script, and each module it imports, local or remote.
	Script = 16 << 20
	// ScriptOpen is a file a k6 script reads with open() (test data).
	ScriptOpen = 64 << 20
	// RunMeta is a run directory's run.json (knee writes a few KB).
	RunMeta = 16 << 20
	// Line is one line of a k6 CSV or JSON output, a latency list, or a
	// run's counters.jsonl or resources.jsonl (a few hundred bytes each).
	Line = 1 << 20
	// HlogLine is one line of an HdrHistogram log (a wide histogram is a
	// few KB compressed).
	HlogLine = 4 << 20
)

// ErrTooLarge is wrapped by every error of a read past its limit.
var ErrTooLarge = errors.New("too large")

// MiB prints a limit for messages: "16 MiB", or bytes below one MiB.
func MiB(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// TooLarge is the error of a read past its limit: what was read (name and
// what it is), the limit and how to do without.
func TooLarge(name, what string, max int64, fix string) error {
	return fmt.Errorf("%s: %w: a %s is read up to %s (fix: %s)", name, ErrTooLarge, what, MiB(max), fix)
}

// ReadAll reads r to its end, but no more than max bytes: past that it is
// TooLarge(name, what, max, fix).
func ReadAll(r io.Reader, max int64, name, what, fix string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, TooLarge(name, what, max, fix)
	}
	return b, nil
}

// ReadFile is os.ReadFile bounded by max (see ReadAll). A file that is not
// a regular file (a device, a pipe) is read the same way, up to the limit.
func ReadFile(path string, max int64, what, fix string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > max {
		return nil, TooLarge(path, what, max, fix)
	}
	return ReadAll(f, max, path, what, fix)
}

// CheckFile is for files another library reads (esbuild): path must be a
// regular file of at most max bytes.
func CheckFile(path string, max int64, what, fix string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (a device or a pipe): a %s must be a file (fix: save it to a file)", path, what)
	}
	if st.Size() > max {
		return TooLarge(path, what, max, fix)
	}
	return nil
}
