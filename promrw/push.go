// Package promrw pushes a run's intervals to Prometheus by remote write
// (knee run --out prometheus-rw=URL): latency as a native histogram (sparse
// exponential buckets, which add across runners as HdrHistograms do) and
// counters of requests by status, errors by class and dropped iterations,
// labelled by test id, scenario, request name and runner. Values are
// cumulative from the run's start, as Prometheus counters are, so
// histogram_quantile(0.99, sum(rate(knee_latency_seconds[1m]))) over all
// runners is a real percentile.
package promrw

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/snappy"

	"github.com/knee-dev/knee/record"
)

// DefaultSchema is 3: buckets 2^(1/8) apart, each about 9 % wide.
const DefaultSchema = 3

// Metric names.
const (
	LatencyMetric  = "knee_latency_seconds"
	RequestsMetric = "knee_requests_total"
	ErrorsMetric   = "knee_errors_total"
	DroppedMetric  = "knee_dropped_iterations_total"
)

// Pusher sends every interval it is given, in order, from one goroutine, so
// a slow receiver never holds up the run; it keeps the last maxQueue
// requests and counts the ones it had to drop.
type Pusher struct {
	url    string
	client *http.Client
	base   []Label // test_id, runner
	schema int32

	hists    map[record.Key]*record.Histogram // cumulative, by scenario and name
	counters map[string]record.Counters       // cumulative, by scenario

	queue  chan []byte
	done   chan struct{}
	ctx    context.Context // ends the push in flight and those queued: Close's deadline
	cancel context.CancelFunc
	mu     sync.Mutex
	stats  Stats
}

// Stats is what a Pusher did.
type Stats struct {
	Requests int   // remote-write requests the server took
	Bytes    int64 // compressed bytes the server took
	Failed   int   // requests that failed (unreachable, or refused: LastError says why)
	Dropped  int   // requests not sent because the queue was full
	// Unsent are the intervals still queued, or in flight, when Close's
	// deadline passed: not pushed.
	Unsent    int
	LastError error
}

// DefaultCloseTimeout is how long Close waits, in all, for what is queued.
const DefaultCloseTimeout = 5 * time.Second

const maxQueue = 64

// New returns a Pusher to url, labelling every series with testID and runner.
func New(url, testID, runner string) (*Pusher, error) {
	if url == "" {
		return nil, errors.New("prometheus-rw: give the remote-write URL, e.g. prometheus-rw=http://prometheus:9090/api/v1/write")
	}
	p := &Pusher{url: url, client: &http.Client{Timeout: 10 * time.Second},
		base:   []Label{{"runner", runner}, {"test_id", testID}},
		schema: DefaultSchema, hists: map[record.Key]*record.Histogram{}, counters: map[string]record.Counters{},
		queue: make(chan []byte, maxQueue), done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go p.send()
	return p, nil
}

// Interval adds one interval, ending at the wall-clock time end, and queues
// the cumulative series for sending. It does not block.
func (p *Pusher) Interval(end time.Time, snap record.IntervalSnapshot) {
	for k, h := range snap.Histograms {
		if k.Metric != record.Latency {
			continue
		}
		k.Metric = ""
		if have, ok := p.hists[k]; ok {
			have.Merge(h)
		} else {
			p.hists[k] = h.Clone()
		}
	}
	for sc, c := range snap.Counters {
		sum := p.counters[sc]
		sum.Add(c)
		p.counters[sc] = sum
	}
	body := snappy.Encode(nil, encodeWriteRequest(p.series(end.UnixMilli())))
	select {
	case p.queue <- body:
	default:
		p.mu.Lock()
		p.stats.Dropped++
		p.mu.Unlock()
	}
}

// series is every cumulative series at ms.
func (p *Pusher) series(ms int64) []Series {
	var out []Series
	for _, k := range slices.SortedFunc(maps.Keys(p.hists), func(a, b record.Key) int { return cmpKey(a, b) }) {
		out = append(out, Series{Labels: p.labels(LatencyMetric, "name", k.Name, "scenario", k.Scenario),
			Histograms: []Timed{{Native: FromHdr(p.hists[k], p.schema), MS: ms}}})
	}
	for _, sc := range slices.Sorted(maps.Keys(p.counters)) {
		c := p.counters[sc]
		for _, st := range []string{"1xx", "2xx", "3xx", "4xx", "5xx"} {
			if n, ok := c.ByStatus[st]; ok {
				out = append(out, Series{Labels: p.labels(RequestsMetric, "scenario", sc, "status", st), Samples: []Sample{{float64(n), ms}}})
			}
		}
		// Requests that got no status (transport errors) are counted too, so
		// the status series add up to the requests.
		var withStatus int64
		for _, n := range c.ByStatus {
			withStatus += n
		}
		if none := c.Requests - withStatus; none > 0 {
			out = append(out, Series{Labels: p.labels(RequestsMetric, "scenario", sc, "status", "none"), Samples: []Sample{{float64(none), ms}}})
		}
		for _, cl := range slices.Sorted(maps.Keys(c.ErrorsByClass)) {
			out = append(out, Series{Labels: p.labels(ErrorsMetric, "class", cl, "scenario", sc), Samples: []Sample{{float64(c.ErrorsByClass[cl]), ms}}})
		}
		out = append(out, Series{Labels: p.labels(DroppedMetric, "scenario", sc), Samples: []Sample{{float64(c.DroppedIterations), ms}}})
	}
	return out
}

// labels is __name__, the pairs kv and the base labels, sorted by name.
func (p *Pusher) labels(name string, kv ...string) []Label {
	ls := []Label{{"__name__", name}}
	for i := 0; i+1 < len(kv); i += 2 {
		ls = append(ls, Label{kv[i], kv[i+1]})
	}
	ls = append(ls, p.base...)
	slices.SortFunc(ls, func(a, b Label) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return ls
}

func cmpKey(a, b record.Key) int {
	switch {
	case a.Scenario != b.Scenario:
		if a.Scenario < b.Scenario {
			return -1
		}
		return 1
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}

func (p *Pusher) send() {
	defer close(p.done)
	for body := range p.queue {
		err := p.ctx.Err()
		if err == nil {
			err = p.post(body)
		}
		p.mu.Lock()
		if p.ctx.Err() != nil {
			p.stats.Unsent++ // the close deadline passed
		} else if err != nil {
			p.stats.Failed++
			p.stats.LastError = err
		} else {
			p.stats.Requests++
			p.stats.Bytes += int64(len(body))
		}
		p.mu.Unlock()
	}
}

func (p *Pusher) post(body []byte) error {
	req, err := http.NewRequestWithContext(p.ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("prometheus-rw %s: %w", p.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("prometheus-rw %s: %s: %s", p.url, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// Close sends what is queued within timeout in all (0 or less: none) or
// until ctx ends, then gives up on the rest, which Stats.Unsent counts, and
// returns what was sent.
func (p *Pusher) Close(ctx context.Context, timeout time.Duration) Stats {
	close(p.queue)
	t := time.NewTimer(max(timeout, 0))
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	case <-ctx.Done():
	}
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}
