package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// sink receives a run as it is imported: open once with a first meta,
// write every interval, close with the final meta.
type sink interface {
	open(meta rundir.Meta) error
	write(snap record.IntervalSnapshot, extra map[string]rundir.IntervalCounters) error
	close(meta rundir.Meta) error
}

// dirSink creates the run directory lazily, at the first interval, when
// the run's start time is known, and removes it again if the import fails.
type dirSink struct {
	dir     string
	existed bool // dir was there (empty) before the import
	w       *rundir.Writer
}

func newDirSink(dir string) *dirSink {
	_, err := os.Stat(dir)
	return &dirSink{dir: dir, existed: err == nil}
}

// open creates the run directory with a first, unfinished meta.
func (s *dirSink) open(meta rundir.Meta) error {
	if s.w != nil {
		return nil
	}
	meta.ID = s.id(meta.ID)
	w, err := rundir.Create(s.dir, meta)
	if err != nil {
		return fmt.Errorf("import: %w: %w", ErrWrite, err)
	}
	s.w = w
	return nil
}

func (s *dirSink) write(snap record.IntervalSnapshot, extra map[string]rundir.IntervalCounters) error {
	if s.w == nil {
		return errors.New("import: internal error: interval written before the run directory was created")
	}
	if err := s.w.WriteInterval(snap, extra); err != nil {
		return fmt.Errorf("import: %w: %w", ErrWrite, err)
	}
	return nil
}

func (s *dirSink) close(meta rundir.Meta) error {
	if s.w == nil {
		if err := s.open(meta); err != nil {
			return err
		}
	}
	w := s.w
	s.w = nil
	meta.ID = s.id(meta.ID)
	if err := w.Close(meta); err != nil {
		return fmt.Errorf("import: %w: %w", ErrWrite, err)
	}
	return nil
}

// abandon closes and removes what the import wrote. Errors are ignored on
// purpose: the import's own error is the one to report.
func (s *dirSink) abandon() {
	if s.w != nil {
		_ = s.w.Close(rundir.Meta{}) // release files; the directory goes next
		s.w = nil
	}
	if !s.existed {
		_ = os.RemoveAll(s.dir)
		return
	}
	for _, name := range []string{rundir.MetaFile, rundir.LatencyFile, rundir.CountersFile, rundir.ResourcesFile} {
		_ = os.Remove(filepath.Join(s.dir, name))
	}
}

// id names the run after its directory unless it has a name.
func (s *dirSink) id(id string) string {
	if id != "" {
		return id
	}
	return filepath.Base(s.dir)
}
