package request

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// loopPlatform: the Sender has an event loop here.
const loopPlatform = runtime.GOOS == "linux"

// testSender is a Sender whose Do goes through its event loop when drv is
// set, so that every test written for Do also holds the loop to Do's results.
type testSender struct {
	*Sender
	drv *loopDriver
}

func (ts *testSender) Do(ctx context.Context, vu, iter uint64) load.Result {
	if ts.drv == nil {
		return ts.Sender.Do(ctx, vu, iter)
	}
	return ts.drv.do(ctx, vu, iter)
}

// Close closes the Sender's idle connections and the loop's, as Close
// does the lean client's.
func (ts *testSender) Close() {
	ts.Sender.Close()
	if ts.drv != nil {
		ts.drv.call(&loopCall{closeIdle: true})
	}
}

// loopDriver owns a Loop on a goroutine of its own, as load's driver
// does, and serves Do calls from any goroutine: one iteration at a time
// per VU (later ones for a busy VU wait their turn), Cancel when a
// caller's context ends.
type loopDriver struct {
	loop  load.Loop
	calls chan *loopCall
	quit  chan struct{}
	done  chan struct{}
}

type loopCall struct {
	ctx       context.Context
	vu, iter  uint64
	res       chan load.Result
	closeIdle bool // Release every VU seen instead
}

func startLoopDriver(tb testing.TB, s *Sender) *loopDriver {
	tb.Helper()
	d := &loopDriver{calls: make(chan *loopCall, 1024), quit: make(chan struct{}), done: make(chan struct{})}
	errc := make(chan error)
	go d.run(s, errc)
	if err := <-errc; err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		close(d.quit)
		d.loop.Wake()
		<-d.done
	})
	return d
}

func (d *loopDriver) do(ctx context.Context, vu, iter uint64) load.Result {
	c := &loopCall{ctx: ctx, vu: vu, iter: iter, res: make(chan load.Result, 1)}
	stop := context.AfterFunc(ctx, d.loop.Wake)
	defer stop()
	return d.call(c)
}

func (d *loopDriver) call(c *loopCall) load.Result {
	if c.res == nil {
		c.res = make(chan load.Result, 1)
	}
	d.calls <- c
	d.loop.Wake()
	return <-c.res
}

func (d *loopDriver) run(s *Sender, errc chan<- error) {
	defer close(d.done)
	lp, err := s.NewLoop()
	if err != nil {
		errc <- err
		return
	}
	defer lp.Close()
	d.loop = lp
	errc <- nil
	busy := map[uint64]*loopCall{}
	seen := map[uint64]bool{}
	var queued []*loopCall
	var ended []load.Ended
	take := func(c *loopCall) {
		if c.closeIdle {
			for vu := range seen {
				lp.Release(vu)
			}
			c.res <- load.Result{}
			return
		}
		queued = append(queued, c)
	}
	for {
	drain:
		for {
			select {
			case c := <-d.calls:
				take(c)
			default:
				break drain
			}
		}
		rest := queued[:0]
		for _, c := range queued {
			if busy[c.vu] != nil {
				rest = append(rest, c)
				continue
			}
			busy[c.vu], seen[c.vu] = c, true
			lp.Start(c.vu, c.iter)
		}
		queued = rest
		if len(busy) == 0 {
			select {
			case c := <-d.calls:
				take(c)
				continue
			case <-d.quit:
				return
			}
		}
		select {
		case <-d.quit:
			return
		default:
		}
		for _, c := range busy {
			if c.ctx.Err() != nil {
				lp.Cancel()
				break
			}
		}
		ended = lp.Wait(time.Time{}, ended[:0])
		for _, e := range ended {
			c := busy[e.VU]
			delete(busy, e.VU)
			c.res <- e.Result
		}
	}
}
