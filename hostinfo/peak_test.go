package hostinfo

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
)

// touch allocates n MiB, writes every page so it is resident, and holds it
// for longer than two RSS samples so either way of measuring sees it.
func touch(n int) byte {
	b := make([]byte, n<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = byte(i)
	}
	time.Sleep(3 * peakSampleEvery)
	return b[len(b)/2]
}

// TestPeakRSSPerRun runs two "runs" in one process: the first touches
// 128 MiB, the second 8 MiB. The second must report its own peak, well
// under the first's: the first run's freed heap is neither resident nor
// counted in the second's high-water mark.
func TestPeakRSSPerRun(t *testing.T) {
	kneetest.SkipUnderRace(t)
	run := func(mib int) (float64, string) {
		p := StartPeakRSS(Options{})
		touch(mib)
		mb, note, err := p.Stop()
		if err != nil {
			t.Fatalf("run of %d MiB: %v", mib, err)
		}
		return mb, note
	}
	first, note := run(128)
	if note != "" {
		t.Logf("LOUD: the kernel's high-water mark cannot be reset here, peaks are sampled: %s", note)
	}
	second, _ := run(8)
	t.Logf("first run %.1f MB, second %.1f MB", first, second)
	if first < 128 {
		t.Errorf("first run's peak %.1f MB, want at least the 128 MiB it touched", first)
	}
	if second < 8 {
		t.Errorf("second run's peak %.1f MB, want at least the 8 MiB it touched", second)
	}
	if second > first-100 {
		t.Errorf("second run's peak %.1f MB, want its own (about 8 MiB over the process's base), not the first run's %.1f MB", second, first)
	}
}

// TestPeakRSSWithoutReset: where clear_refs cannot be written (here a
// directory stands in its place), the peak is sampled from VmRSS and Stop
// says so.
func TestPeakRSSWithoutReset(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{
		"proc/50/status":           "Name:\tknee\nVmHWM:\t  900000 kB\nVmRSS:\t  123904 kB\n",
		"proc/50/clear_refs/.keep": "",
	})
	p := StartPeakRSS(Options{Root: root, Self: 50})
	mb, note, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if want := 123904.0 / 1024; mb != want { // VmRSS, not the stale VmHWM
		t.Errorf("peak %v MB, want %v (VmRSS sampled)", mb, want)
	}
	if !strings.Contains(note, "sampled every 100ms") || !strings.Contains(note, "could not be reset") {
		t.Errorf("note %q, want it to say the peak was sampled and why", note)
	}
}

// TestPeakRSSReadsHighWaterMark: with the reset available, the peak is the
// kernel's VmHWM, not a sample.
func TestPeakRSSReadsHighWaterMark(t *testing.T) {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{
		"proc/50/status":     "Name:\tknee\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n",
		"proc/50/clear_refs": "",
	})
	p := StartPeakRSS(Options{Root: root, Self: 50})
	mb, note, err := p.Stop()
	if err != nil || note != "" || mb != 200 {
		t.Errorf("Stop() = %v, %q, %v; want 200 MB from VmHWM, no note", mb, note, err)
	}
	if b, _ := os.ReadFile(root + "/proc/50/clear_refs"); string(b) != "5" {
		t.Errorf("clear_refs holds %q, want \"5\" (reset the high-water mark)", b)
	}
	missing := StartPeakRSS(Options{Root: root, Self: 51})
	if _, _, err := missing.Stop(); err == nil {
		t.Error("a process without /proc entry: want an error")
	}
}
