package lab

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/knee-dev/knee/analyze"
)

// PoolOptions set up the small-pool, slow-database experiment (the
// article's Max Pool Size=20 exercise): the curve experiment against a
// Bookstore whose database serves one query at a time, each held QueryDelay,
// through a pool of MaxPool connections that gives up after PoolTimeout.
// Zero fields take the defaults below; the steps are lower than the
// curve's, because the database, not the CPU, sets the capacity.
type PoolOptions struct {
	CurveOptions
	MaxPool          int           // default DefaultPoolMaxPool
	QueryDelay       time.Duration // default DefaultPoolQueryDelay; negative for none
	SerializeQueries *bool         // nil means true
	PoolTimeout      time.Duration // default DefaultPoolTimeout
}

// Defaults of the pool experiment. A serialised database holding each query
// 10 ms serves at most 100 req/s, well under what half a CPU of API serves,
// so the API's CPU stays low. Steps of 20 req/s from 20 cross that capacity
// within the run; past it requests queue for the database holding their
// connections, the pool fills, and the 1 s pool timeout makes timeouts show
// within a step.
const (
	// DefaultPoolCPUs is the article's limit: in this experiment the CPU must
	// not be the bottleneck, so it keeps the headroom the curve's 0.25 lacks.
	DefaultPoolCPUs         = 0.5
	DefaultPoolMaxPool      = 20
	DefaultPoolQueryDelay   = 10 * time.Millisecond
	DefaultPoolTimeout      = time.Second
	DefaultPoolStart        = 20
	DefaultPoolStep         = 20
	DefaultPoolSteps        = 8
	DefaultPoolStepDuration = 15 * time.Second
	DefaultPoolWarmup       = 5 * time.Second
)

func (o PoolOptions) Defaults() PoolOptions {
	if o.CPUs == 0 {
		o.CPUs = DefaultPoolCPUs
	}
	if o.MaxPool == 0 {
		o.MaxPool = DefaultPoolMaxPool
	}
	if o.QueryDelay == 0 {
		o.QueryDelay = DefaultPoolQueryDelay
	}
	if o.PoolTimeout == 0 {
		o.PoolTimeout = DefaultPoolTimeout
	}
	if o.Start == 0 {
		o.Start = DefaultPoolStart
	}
	if o.Step == 0 {
		o.Step = DefaultPoolStep
	}
	if o.Steps == 0 {
		o.Steps = DefaultPoolSteps
	}
	if o.StepDuration == 0 {
		o.StepDuration = DefaultPoolStepDuration
	}
	if o.Warmup == 0 {
		o.Warmup = DefaultPoolWarmup
	}
	o.CurveOptions = o.CurveOptions.Defaults()
	return o
}

// Validate reports every setting that cannot work, before anything starts.
func (o PoolOptions) Validate() []error {
	errs := o.Defaults().CurveOptions.Validate()
	if o.MaxPool < 0 {
		errs = append(errs, fmt.Errorf("--max-pool %d: must be positive", o.MaxPool))
	}
	if o.PoolTimeout < 0 {
		errs = append(errs, fmt.Errorf("--pool-timeout %s: must be positive", o.PoolTimeout))
	}
	return errs
}

// serveArgs are the `knee lab serve` flags of the experiment's Bookstore.
func (o PoolOptions) serveArgs() []string {
	args := []string{"--max-pool", strconv.Itoa(o.MaxPool), "--pool-timeout", o.PoolTimeout.String()}
	if o.QueryDelay > 0 {
		args = append(args, "--query-delay", o.QueryDelay.String())
	}
	if o.SerializeQueries == nil || *o.SerializeQueries {
		args = append(args, "--serialize-queries")
	}
	return args
}

// Pool runs the pool experiment: the stepped test against the slowed
// Bookstore, its CPU and /metrics sampled. The expected diagnosis is the
// article's: the API's CPU well below its limit, the pool full with waiters
// and timeouts, and the database named as the bottleneck.
func Pool(ctx context.Context, opt PoolOptions) (*analyze.StepsResult, error) {
	opt = opt.Defaults()
	if errs := opt.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	what := fmt.Sprintf("knee lab pool: a %d-connection pool in front of a slow database (%s)", opt.MaxPool, fmt.Sprint(opt.serveArgs()))
	return bookstoreSteps(ctx, opt.CurveOptions, opt.serveArgs(), what)
}
