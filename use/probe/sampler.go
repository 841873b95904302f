package probe

import (
	"context"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/use"
	"io"
	"slices"
	"sync"
	"time"
)

// Probe reads the resources it knows about. Sample is called once per tick
// with the tick's time; probes that turn counters into rates keep the
// previous reading and divide by the time between ticks.
//
// A value a probe cannot read is a Reading with NotMeasured set to why
// ("no cgroup CPU limit", "metrics endpoint unreachable: ..."), never a
// zero. An error means the probe could not run at all; the sampler records
// it in the sample and keeps going.
//
// Concurrency: the Sampler calls each probe from one goroutine at a time,
// so a probe needs no locks for its own state. A probe that holds resources
// may implement io.Closer; Sampler.Close closes it.
type Probe interface {
	Name() string
	Sample(ctx context.Context, now time.Time) ([]use.Reading, error)
}

// Sampler samples every probe each Interval, writes each probe's sample as
// one line to Out (resources.jsonl), flushed per tick, and keeps them for
// the summary. The zero value samples nothing; set Probes and T0.
//
// Concurrency: Run must not be called twice at once; Samples may be called
// from any goroutine while Run runs.
type Sampler struct {
	Probes   []Probe
	Out      io.Writer     // nil: keep the samples in memory only
	Interval time.Duration // 0 means DefaultInterval
	T0       time.Time     // sample times count from here

	mu      sync.Mutex
	samples []use.Sample
}

// flusher is a writer that buffers, like *bufio.Writer.
type flusher interface{ Flush() error }

// Run samples at once and then every Interval until ctx is done, then
// returns nil. It returns early only when writing to Out fails. A tick cut
// short by the end of ctx is dropped, not written half-read.
func (s *Sampler) Run(ctx context.Context) error {
	every := s.Interval
	if every <= 0 {
		every = use.DefaultInterval
	}
	// The first tick primes the counters, so rates exist from the second.
	if err := s.tick(ctx, every, time.Now()); err != nil {
		return err
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			if err := s.tick(ctx, every, now); err != nil {
				return err
			}
		}
	}
}

// tick is one Tick bounded by one interval: a hung scrape must not delay
// the next tick.
func (s *Sampler) tick(ctx context.Context, every time.Duration, now time.Time) error {
	tickCtx, cancel := context.WithTimeout(ctx, every)
	defer cancel()
	out := s.sampleAll(tickCtx, now)
	if ctx.Err() != nil {
		return nil
	}
	return s.record(out)
}

// Tick samples every probe once, at now, concurrently; it writes the
// samples in probe order and flushes Out when Out can be flushed.
func (s *Sampler) Tick(ctx context.Context, now time.Time) error {
	return s.record(s.sampleAll(ctx, now))
}

func (s *Sampler) sampleAll(ctx context.Context, now time.Time) []use.Sample {
	out := make([]use.Sample, len(s.Probes))
	var wg sync.WaitGroup
	for i, p := range s.Probes {
		wg.Go(func() { out[i] = s.sampleOne(ctx, p, now) })
	}
	wg.Wait()
	return out
}

// record keeps the samples and writes them to Out.
func (s *Sampler) record(out []use.Sample) error {
	s.mu.Lock()
	s.samples = append(s.samples, out...)
	s.mu.Unlock()
	if s.Out == nil {
		return nil
	}
	for _, smp := range out {
		if err := use.WriteSample(s.Out, smp); err != nil {
			return err
		}
	}
	if f, ok := s.Out.(flusher); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("flush resources: %w", err)
		}
	}
	return nil
}

func (s *Sampler) sampleOne(ctx context.Context, p Probe, now time.Time) use.Sample {
	smp := use.Sample{At: now.Sub(s.T0), Probe: p.Name()}
	rs, err := p.Sample(ctx, now)
	if err != nil {
		smp.Error = err.Error()
		return smp
	}
	smp.Readings = make([]use.Reading, len(rs))
	for i, r := range rs {
		smp.Readings[i] = r.Finite()
	}
	return smp
}

// Samples returns a copy of every sample taken so far, in tick order.
func (s *Sampler) Samples() []use.Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.samples)
}

// Close closes every probe that is an io.Closer and returns their errors
// joined.
func (s *Sampler) Close() error {
	var errs []error
	for _, p := range s.Probes {
		if c, ok := p.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close probe %s: %w", p.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}
