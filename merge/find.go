package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/knee-dev/knee/internal/limits"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knee-dev/knee/rundir"
)

// FindParts expands each argument: a run directory itself, or every run
// directory up to two levels under it, skipping out. A directory given
// twice stays twice, so Merge refuses it.
func FindParts(args []string, out string) ([]string, error) {
	outAbs, _ := filepath.Abs(out)
	var dirs []string
	for _, arg := range args {
		if _, err := os.Stat(filepath.Join(arg, rundir.MetaFile)); err == nil {
			dirs = append(dirs, arg)
			continue
		}
		var found []string
		err := filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if abs, _ := filepath.Abs(p); abs == outAbs {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, rundir.MetaFile)); err == nil {
				found = append(found, p)
				return filepath.SkipDir
			}
			if rel, _ := filepath.Rel(arg, p); rel != "." && strings.Count(rel, string(filepath.Separator)) >= 1 {
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("merge %s: %w", arg, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("merge %s: no run directory (run.json) in it or two levels under it", arg)
		}
		slices.Sort(found)
		dirs = append(dirs, found...)
	}
	return dirs, nil
}

// WaitForParts polls every poll until n parts under args have finished
// (their run.json has an end time), then returns them as FindParts does.
func WaitForParts(ctx context.Context, args []string, out string, n int, timeout, poll time.Duration) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		dirs, _ := FindParts(args, out) // none yet is not an error while waiting
		done := 0
		for _, d := range dirs {
			if finished(d) {
				done++
			}
		}
		if done >= n {
			return dirs, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("merge: %d of %d parts finished after waiting %v (fix: check the runners' logs, or raise --wait-timeout)", done, n, timeout)
		case <-t.C:
		}
	}
}

func finished(dir string) bool {
	b, err := limits.ReadFile(filepath.Join(dir, rundir.MetaFile), limits.RunMeta, "run.json", "restore run.json or re-run the part")
	if err != nil {
		return false
	}
	var m rundir.Meta
	return json.Unmarshal(b, &m) == nil && !m.Ended.IsZero()
}
