package k6script

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knee-dev/knee/load"
)

// execState is what k6/execution tells about the whole test beyond the
// iteration counts: when it started, the VUs in an iteration now, the
// iterations the run's end cut short, and test.abort().
type execState struct {
	startOnce   sync.Once
	start       time.Time // the first iteration's due start: the test's start as the script sees it
	active      atomic.Int64
	interrupted atomic.Int64

	abortMu  sync.Mutex
	aborted  string // the reason, once test.abort() was called
	failed   string // the first reason given to test.fail(); the test runs on
	abortFns []func(reason string)
}

// MarkedFailed is the first reason given to exec.test.fail(), if it was
// called: the test ran to its end and exits as k6's MarkedAsFailed (110).
func (s *Script) MarkedFailed() (string, bool) {
	s.exec.abortMu.Lock()
	defer s.exec.abortMu.Unlock()
	return s.exec.failed, s.exec.failed != ""
}

func (s *Script) markFailed(reason string) {
	s.exec.abortMu.Lock()
	defer s.exec.abortMu.Unlock()
	if s.exec.failed == "" {
		s.exec.failed = reason
	}
}

// OnAbort registers f, called once when the script calls
// exec.test.abort(reason); the caller stops the run.
func (s *Script) OnAbort(f func(reason string)) {
	s.exec.abortMu.Lock()
	defer s.exec.abortMu.Unlock()
	s.exec.abortFns = append(s.exec.abortFns, f)
}

// Aborted is the reason given to exec.test.abort(), if it was called.
func (s *Script) Aborted() (string, bool) {
	s.exec.abortMu.Lock()
	defer s.exec.abortMu.Unlock()
	return s.exec.aborted, s.exec.aborted != ""
}

func (s *Script) abort(reason string) {
	s.exec.abortMu.Lock()
	first := s.exec.aborted == ""
	if first {
		s.exec.aborted = reason
	}
	fns := slices.Clone(s.exec.abortFns)
	s.exec.abortMu.Unlock()
	if first {
		for _, f := range fns {
			f(reason)
		}
	}
}

// dueStart is when an iteration was due: its intended start in the open
// model, its actual start in the closed one.
func dueStart(st load.Start) time.Time {
	if !st.Intended.IsZero() {
		return st.Intended
	}
	return st.Called
}
