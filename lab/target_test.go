package lab_test

import (
	"context"
	"fmt"
	"github.com/knee-dev/knee/internal/kneetest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/lab"
)

// When the lab stops the Bookstore it says so, in place of the child's own
// words for the SIGTERM, which read like a failure.
func TestStopSaysTheLabStoppedIt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the Bookstore (seeding takes a few seconds)")
	}
	t.Setenv(asKnee, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr kneetest.Buffer
	tg, err := lab.StartBookstore(ctx, lab.TargetOptions{Executable: exe, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Stop(); err != nil {
		t.Fatal(err)
	}
	got := stderr.String()
	if want := fmt.Sprintf("bookstore: stopped by the lab (pid %d)\n", tg.PID); !strings.Contains(got, want) {
		t.Errorf("the Bookstore's stderr %q, want the line %q", got, want)
	}
	if strings.Contains(got, "stopping gracefully") || strings.Contains(got, "terminated") {
		t.Errorf("the child's own shutdown words reached the user: %q", got)
	}
}
