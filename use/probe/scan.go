package probe

import (
	"context"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/use"
	"io"
	"os"
	"time"
)

// ScanOptions are a USE scan of a target under whatever load is running.
type ScanOptions struct {
	Probes     []Probe       // the target's (Target.Probes); the machine is always sampled too
	TargetPIDs []int         // the target's processes, which the machine probe tells from other work
	Duration   time.Duration // how long to sample; at least two intervals (a rate needs two samples)
	Interval   time.Duration // 0 means DefaultInterval
	Progress   io.Writer     // a line saying what is sampled; nil for none
	Root       string        // roots /proc for the machine probe ("" is "/"); tests set it
}

// ScanResult is a USE scan: the table over the whole scan and its verdict.
type ScanResult struct {
	USE        use.Table   `json:"use"`
	Bottleneck use.Verdict `json:"bottleneck"`
}

// Scan samples the probes and the machine every interval for the duration,
// or until ctx ends, then summarizes the samples into one table and judges
// it with the default thresholds.
func Scan(ctx context.Context, opt ScanOptions) (*ScanResult, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	every := opt.interval()
	probes := append(append([]Probe{}, opt.Probes...), &Machine{Root: opt.Root, TargetPIDs: opt.TargetPIDs})
	s := &Sampler{Probes: probes, Interval: every, T0: time.Now()}
	defer s.Close()
	if opt.Progress != nil {
		fmt.Fprintf(opt.Progress, "sampling %d probes every %s for %s...\n", len(probes), every, opt.Duration)
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Duration)
	defer cancel()
	if err := s.Run(ctx); err != nil {
		return nil, fmt.Errorf("USE sampling: %w", err)
	}
	samples := s.Samples()
	if len(samples) == 0 {
		return nil, errors.New("USE scan: no sample was taken")
	}
	t := use.Summarize(samples, 0, 0)
	t.Label = fmt.Sprintf("USE table over %s", opt.Duration)
	return &ScanResult{USE: t, Bottleneck: use.Judge([]use.Table{t}, nil)}, nil
}

// Validate refuses a scan too short for a rate, naming knee use's flag.
func (o ScanOptions) Validate() error {
	if o.Duration < 2*o.interval() {
		return fmt.Errorf("--duration %s: must be at least %s (a rate needs two samples)", o.Duration, 2*o.interval())
	}
	return nil
}

func (o ScanOptions) interval() time.Duration {
	if o.Interval <= 0 {
		return use.DefaultInterval
	}
	return o.Interval
}

// ReadSamplesFile reads a resources.jsonl; a file that does not exist
// holds no samples, which is not an error (a run made without sampling).
// torn reports a last line cut short, dropped (rundir.TornNote says so).
func ReadSamplesFile(path string) (s []use.Sample, torn bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	s, torn, err = use.ReadSamplesTorn(f)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return s, torn, nil
}
