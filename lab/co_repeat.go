package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/rundir"
)

// CORepetitions is the coordinated-omission experiment repeated: every
// repetition, and each measurement's median and range over them.
type CORepetitions struct {
	Repetitions []*COResult                         `json:"repetitions"`
	Spread      map[string]analyze.RepetitionReport `json:"spread"` // by COMeasurements' names
}

// COMeasurements names the experiment's three measurements, in the order
// of its table.
func COMeasurements() []string {
	return []string{"Closed model", "Closed model, corrected", "Open model"}
}

// RepeatCO runs CO n times, pause apart, each into its own rN under
// opt.Out and on a freshly started Bookstore (re-seeded, empty cache), so
// one run's figure is never the result. each, when not nil, is called
// before a repetition with a nil result and after it with its result, for
// printing as it goes. An interrupt (ctx) ends the repetitions; those that
// ran are reported.
func RepeatCO(ctx context.Context, opt COOptions, n int, pause time.Duration, each func(i int, res *COResult)) (*CORepetitions, error) {
	return repeatCO(ctx, opt, n, pause, CO, each)
}

// repeatCO is RepeatCO with the experiment given, for tests.
func repeatCO(ctx context.Context, opt COOptions, n int, pause time.Duration,
	run func(context.Context, COOptions) (*COResult, error), each func(int, *COResult)) (*CORepetitions, error) {
	if each == nil {
		each = func(int, *COResult) {}
	}
	base := opt.Out
	out := &CORepetitions{}
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		if i > 1 {
			select {
			case <-ctx.Done():
				continue
			case <-time.After(pause):
			}
		}
		each(i, nil)
		opt.Out = filepath.Join(base, fmt.Sprintf("r%d", i))
		res, err := run(ctx, opt)
		if err != nil {
			return nil, err
		}
		each(i, res)
		out.Repetitions = append(out.Repetitions, res)
	}
	var closed, corrected, open []rundir.Summary
	for _, r := range out.Repetitions {
		closed, corrected, open = append(closed, r.Closed), append(corrected, r.ClosedCorrected), append(open, r.Open)
	}
	names := COMeasurements()
	out.Spread = map[string]analyze.RepetitionReport{
		names[0]: analyze.Repetitions(closed),
		names[1]: analyze.Repetitions(corrected),
		names[2]: analyze.Repetitions(open),
	}
	return out, nil
}
