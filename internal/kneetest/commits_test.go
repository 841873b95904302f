package kneetest

import (
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// subjectsFrom is the last commit whose subject was allowed to run long:
// the rule below holds for every commit after it.
const subjectsFrom = "6ba46f9"

// maxSubject is the longest commit subject git's tools and reviewers show
// whole; the why and the measurements go in the body.
const maxSubject = 72

// Every commit since subjectsFrom has a subject of at most maxSubject
// characters, so a reviewer can scan the log.
func TestCommitSubjects(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the git history; not with -short")
	}
	if err := exec.Command("git", "rev-parse", "--verify", "--quiet", subjectsFrom+"^{commit}").Run(); err != nil {
		t.Skipf("SKIP: %s is not in this checkout's history (not a git clone, or a shallow one): commit subjects are not checked", subjectsFrom)
	}
	out, err := exec.Command("git", "log", "--format=%h %s", subjectsFrom+"..HEAD").Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		hash, subject, _ := strings.Cut(line, " ")
		if n := utf8.RuneCountInString(subject); n > maxSubject {
			t.Errorf("commit %s: subject of %d characters, over %d: %q (put the why and the figures in the body)", hash, n, maxSubject, subject)
		}
	}
}
