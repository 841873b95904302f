package probe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"github.com/knee-dev/knee/use"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// countingProbe reads a counter that grows by 10 per call as a rate, like a
// real probe: not measured on the first call.
type countingProbe struct {
	n      float64
	prevAt time.Time
}

func (p *countingProbe) Name() string { return "count" }

func (p *countingProbe) Sample(_ context.Context, now time.Time) ([]use.Reading, error) {
	p.n += 10
	r := notMeasured(use.HTTPServer, "hits", use.Info, use.UnitPerSec, whyFirstSample)
	if !p.prevAt.IsZero() {
		r = measured(use.HTTPServer, "hits", use.Info, 10/now.Sub(p.prevAt).Seconds(), use.UnitPerSec)
	}
	p.prevAt = now
	return []use.Reading{r}, nil
}

type failingProbe struct{}

func (failingProbe) Name() string { return "broken" }
func (failingProbe) Sample(context.Context, time.Time) ([]use.Reading, error) {
	return nil, errors.New("no such thing")
}

func TestSamplerRunWritesEveryTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		out := bufio.NewWriter(&buf)
		s := &Sampler{Probes: []Probe{&countingProbe{}, failingProbe{}}, Out: out, T0: time.Now()}
		ctx, cancel := context.WithTimeout(context.Background(), 3500*time.Millisecond)
		defer cancel()
		if err := s.Run(ctx); err != nil {
			t.Fatal(err)
		}
		// Ticks at 0, 1, 2 and 3 s; each flushed, so the buffer holds all eight lines.
		got, err := use.ReadSamples(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s.Samples()) {
			t.Errorf("file and memory differ:\n%+v\n%+v", got, s.Samples())
		}
		if len(got) != 8 {
			t.Fatalf("%d samples, want 4 ticks x 2 probes", len(got))
		}
		for i, smp := range got {
			tick := time.Duration(i/2) * time.Second
			if smp.At != tick {
				t.Errorf("sample %d at %v, want %v", i, smp.At, tick)
			}
			if i%2 == 1 && (smp.Probe != "broken" || smp.Error != "no such thing" || smp.Readings != nil) {
				t.Errorf("failing probe sample = %+v", smp)
			}
		}
		if r := got[2].Readings[0]; !r.Measured() || r.Value != 10 {
			t.Errorf("second tick's rate = %+v, want 10/s", r)
		}
	})
}

func TestReadSamplesErrorsNameTheLine(t *testing.T) {
	good := `{"t_s":1,"probe":"p","readings":[{"resource":"machine","metric":"m","kind":"info","value":1}]}`
	tests := []struct {
		name, in, want string
	}{
		{"bad json", good + "\n\n{\"t_s\":\n", "resources.jsonl:3:"}, // a newline: whole, not torn
		{"no probe", good + "\n" + `{"t_s":2,"readings":[]}`, `resources.jsonl:2: missing "probe"`},
		{"bad kind", `{"t_s":1,"probe":"p","readings":[{"resource":"r","metric":"m","kind":"hot"}]}`, `resources.jsonl:1: reading 1 (m): kind "hot"`},
		{"no metric", `{"t_s":1,"probe":"p","readings":[{"resource":"r","kind":"info"}]}`, `resources.jsonl:1: reading 1: missing "metric"`},
		{"huge time", `{"t_s":1e300,"probe":"p"}`, "resources.jsonl:1: t_s 1e+300 out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := use.ReadSamples(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	got, err := use.ReadSamples(strings.NewReader(good + "\n  \n" + good + "\n"))
	if err != nil || len(got) != 2 || got[1].At != time.Second || got[1].Readings[0].Value != 1 {
		t.Errorf("good file: %+v, %v", got, err)
	}
}

func FuzzReadSamples(f *testing.F) {
	f.Add(`{"t_s":1.5,"probe":"p","readings":[{"resource":"machine","metric":"m","kind":"info","value":1,"not_measured":"x"}],"error":"e"}` + "\n")
	f.Add("{}\n\n{\"t_s\":-1e9}")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := use.ReadSamples(strings.NewReader(in))
		if err != nil {
			return
		}
		// What reads back must write and read back the same.
		var buf bytes.Buffer
		for _, s := range got {
			if err := use.WriteSample(&buf, s); err != nil {
				t.Fatalf("write %+v: %v", s, err)
			}
		}
		again, err := use.ReadSamples(&buf)
		if err != nil {
			t.Fatalf("reread: %v", err)
		}
		if len(again) != len(got) {
			t.Fatalf("%d samples, then %d", len(got), len(again))
		}
		for i := range got {
			if d := again[i].At - got[i].At; d < -1 || d > 1 { // seconds round-trip within 1 ns
				t.Fatalf("sample %d: at %v, then %v", i, got[i].At, again[i].At)
			}
			if !reflect.DeepEqual(again[i].Readings, got[i].Readings) || again[i].Probe != got[i].Probe {
				t.Fatalf("sample %d differs: %+v vs %+v", i, got[i], again[i])
			}
		}
	})
}

// hangingProbe blocks until its context ends.
type hangingProbe struct{}

func (hangingProbe) Name() string { return "hang" }
func (hangingProbe) Sample(ctx context.Context, _ time.Time) ([]use.Reading, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestSamplerBoundsAndDropsTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A hung probe is cut off after one interval and recorded as failed.
		s := &Sampler{Probes: []Probe{hangingProbe{}}, T0: time.Now()}
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		if err := s.Run(ctx); err != nil {
			t.Fatal(err)
		}
		got := s.Samples()
		if len(got) != 1 || got[0].At != 0 || got[0].Error != context.DeadlineExceeded.Error() {
			t.Errorf("samples %+v, want only the first tick, failed by its own deadline", got)
		}
	})
}
