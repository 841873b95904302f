package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/rundir"
)

// fakeCO is an experiment whose repetition i (from 1) measures i × 10
// requests closed, i × 20 corrected and i × 100 open, and notes its
// directory; it cancels the context in repetition stopAt, if any.
func fakeCO(dirs *[]string, stopAt int, cancel context.CancelFunc) func(context.Context, COOptions) (*COResult, error) {
	return func(_ context.Context, o COOptions) (*COResult, error) {
		*dirs = append(*dirs, o.Out)
		i := int64(len(*dirs))
		if int(i) == stopAt {
			cancel()
		}
		return &COResult{Closed: rundir.Summary{Rate: float64(i * 10)}, ClosedCorrected: rundir.Summary{Rate: float64(i * 20)},
			Open: rundir.Summary{Rate: float64(i * 100)}}, nil
	}
}

func rate(t *testing.T, r analyze.RepetitionReport) analyze.Spread {
	t.Helper()
	for _, m := range r.Metrics {
		if m.Metric == "rate" {
			return m.Spread
		}
	}
	t.Fatalf("no rate in %+v", r)
	return analyze.Spread{}
}

// Three repetitions, 5 s apart, each in its own directory, printed as they
// go; each measurement's spread over them: rates 10, 20, 30 closed give
// median 20 in [10, 30], and so on.
func TestRepeatCO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dirs, calls []string
		start := time.Now()
		res, err := repeatCO(context.Background(), COOptions{Out: "base"}, 3, 5*time.Second, fakeCO(&dirs, 0, nil),
			func(i int, r *COResult) { calls = append(calls, fmt.Sprintf("%d:%v", i, r != nil)) })
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 10*time.Second {
			t.Errorf("three repetitions took %s; want two pauses of 5 s", took)
		}
		if want := []string{filepath.Join("base", "r1"), filepath.Join("base", "r2"), filepath.Join("base", "r3")}; !reflect.DeepEqual(dirs, want) {
			t.Errorf("directories %q, want %q", dirs, want)
		}
		if want := []string{"1:false", "1:true", "2:false", "2:true", "3:false", "3:true"}; !reflect.DeepEqual(calls, want) {
			t.Errorf("each called %q, want %q", calls, want)
		}
		if len(res.Repetitions) != 3 {
			t.Fatalf("%d repetitions", len(res.Repetitions))
		}
		for name, want := range map[string]analyze.Spread{
			"Closed model":            {Median: 20, Min: 10, Max: 30, N: 3},
			"Closed model, corrected": {Median: 40, Min: 20, Max: 60, N: 3},
			"Open model":              {Median: 200, Min: 100, Max: 300, N: 3},
		} {
			rep, ok := res.Spread[name]
			if !ok || rep.Runs != 3 {
				t.Fatalf("%s: %+v", name, rep)
			}
			if got := rate(t, rep); got != want {
				t.Errorf("%s rate %+v, want %+v", name, got, want)
			}
		}
	})
}

// An interrupt during the second repetition ends the repetitions: the two
// that ran are reported, the third never starts.
func TestRepeatCOInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dirs []string
	res, err := repeatCO(ctx, COOptions{Out: "base"}, 3, time.Millisecond, fakeCO(&dirs, 2, cancel), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 2 || len(res.Repetitions) != 2 || rate(t, res.Spread["Open model"]).Median != 150 {
		t.Errorf("ran %q, reported %d; want 2 and an open median of 150", dirs, len(res.Repetitions))
	}
}
