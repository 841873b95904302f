package hostinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/knee-dev/knee/internal/proc"
)

// peakSampleEvery is how often PeakRSS samples the resident set when the
// kernel's high-water mark cannot be reset.
const peakSampleEvery = 100 * time.Millisecond

// PeakRSS measures one run's peak resident memory, so runs made one after
// another in one process (--repeat, knee lab co) each report their own:
// getrusage's ru_maxrss is the process's peak since it started, and every
// run after the first would inherit the first's.
//
// Start resets the kernel's high-water mark (VmHWM of /proc/PID/status) to
// the current resident set by writing "5" to /proc/PID/clear_refs (Linux
// 4.0 and later); Stop reads it back. Where the reset is refused, it samples
// VmRSS every 100 ms instead, and Stop says so: a spike shorter than that
// can be missed.
type PeakRSS struct {
	fs       proc.FS
	pid      int
	resetErr error // why the high-water mark could not be reset; nil when it was

	stop chan struct{}
	done chan struct{}
	once sync.Once

	mu      sync.Mutex
	sampled uint64 // bytes, the largest VmRSS sampled
	readErr error
}

// StartPeakRSS starts measuring the peak resident memory of the process
// Options.Self (this one by default) under Options.Root.
//
// It first returns freed heap to the system (debug.FreeOSMemory): the Go
// runtime keeps freed pages for minutes, so without it a run would start at,
// and report, the previous run's peak.
func StartPeakRSS(opts Options) *PeakRSS {
	opts = opts.withDefaults()
	p := &PeakRSS{fs: proc.FS{Root: opts.Root}, pid: opts.Self}
	if _, _, err := p.fs.Memory(p.pid); err != nil {
		p.resetErr, p.readErr = err, err
		return p
	}
	debug.FreeOSMemory()
	clear := opts.proc(strconv.Itoa(opts.Self), "clear_refs")
	if err := os.WriteFile(clear, []byte("5"), 0); err != nil {
		p.resetErr = fmt.Errorf("reset the peak: %w", err)
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		p.sample()
		go p.sampleLoop()
		return p
	}
	return p
}

func (p *PeakRSS) sampleLoop() {
	defer close(p.done)
	tick := time.NewTicker(peakSampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			p.sample()
			return
		case <-tick.C:
			p.sample()
		}
	}
}

func (p *PeakRSS) sample() {
	rss, _, err := p.fs.Memory(p.pid)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.readErr = err
		return
	}
	p.sampled = max(p.sampled, rss)
}

// Stop ends the measurement and returns the run's peak in MB (MiB, as
// getrusage's figure was) and, when the peak was sampled rather than read
// from the kernel's reset high-water mark, a note saying so and why.
func (p *PeakRSS) Stop() (mb float64, note string, err error) {
	if p.stop != nil {
		p.once.Do(func() { close(p.stop) })
		<-p.done
		p.mu.Lock()
		defer p.mu.Unlock()
		note = fmt.Sprintf("peak RSS sampled every %v (a shorter spike can be missed): the kernel's high-water mark could not be reset: %v", peakSampleEvery, p.resetErr)
		if p.sampled == 0 {
			return 0, note, fmt.Errorf("peak RSS: %w", p.readErr)
		}
		return toMB(p.sampled), note, nil
	}
	if p.resetErr != nil {
		return 0, "", fmt.Errorf("peak RSS: %w", p.resetErr)
	}
	_, hwm, err := p.fs.Memory(p.pid)
	if err != nil {
		return 0, "", fmt.Errorf("peak RSS: %w", err)
	}
	if hwm == 0 {
		return 0, "", fmt.Errorf("peak RSS: no VmHWM in %s", filepath.Join(fmt.Sprint(p.pid), "status"))
	}
	return toMB(hwm), "", nil
}

func toMB(bytes uint64) float64 { return float64(bytes) / (1 << 20) }
