// Package coord is the coordinator of a test split among runners on
// machines whose clocks knee does not trust (knee coordinate, and knee run
// --coordinator on each runner): the runners report ready and wait; once
// all N are ready it releases them at one instant, or fails the test with
// a message naming the runners that never came. Each runner then sends its
// run directory (a tar stream checked against its SHA-256); the
// coordinator keeps the parts, hands them to the merge, and serves the
// merged run directory to whoever fetches it.
//
// A runner keeps its ready request open until it has sent its part, so a
// runner that dies mid-test (its connection closes) is known at once, not
// after a timeout.
package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/knee-dev/knee/load/schedule"
)

// Paths of the coordinator's endpoints.
const (
	ReadyPath  = "/v1/ready"
	PartPath   = "/v1/part"
	ResultPath = "/v1/result"
)

// Headers of the protocol.
const (
	DigestHeader  = "Knee-Sha256"  // hex SHA-256 of a tar stream, sent before it
	ExitHeader    = "Knee-Exit"    // the coordinator's exit code for the test, with the result
	MessageHeader = "Knee-Message" // why, when not 0
)

// DefaultMaxPart bounds one part's upload.
const DefaultMaxPart = 4 << 30

// Options describe the test the coordinator waits for.
type Options struct {
	Runners      int
	Dir          string        // the parts go to Dir/part-INDEX
	ReadyTimeout time.Duration // how long all N may take to report ready
	PartsTimeout time.Duration // how long after the release the parts may take
	MaxPart      int64         // bytes one part's upload may hold; 0 means DefaultMaxPart
	Heartbeat    time.Duration // what a waiting runner's connection is kept alive with; 0 means 5 s
}

// Check reports what is wrong with o, with the fix.
func (o Options) Check() error {
	var errs []error
	if o.Runners < 1 || o.Runners > 1000 {
		errs = append(errs, fmt.Errorf("--runners %d: use 1 to 1000", o.Runners))
	}
	if o.Dir == "" {
		errs = append(errs, errors.New("--dir: give the directory to keep the parts in"))
	}
	if o.ReadyTimeout <= 0 || o.PartsTimeout <= 0 {
		errs = append(errs, errors.New("--ready-timeout and --parts-timeout must be positive, e.g. 10m"))
	}
	return errors.Join(errs...)
}

// Missing is a part that did not arrive.
type Missing struct {
	Index   int
	Segment string // e.g. "1/3:2/3"
	Runner  string // its name, when it reported ready
	Reason  string
}

func (m Missing) String() string {
	who := ""
	if m.Runner != "" {
		who = " (" + m.Runner + ")"
	}
	return fmt.Sprintf("segment %s, runner %d%s: %s", m.Segment, m.Index, who, m.Reason)
}

// Outcome is what the runners left once the wait is over.
type Outcome struct {
	Release time.Time // the coordinator's clock when it released the runners
	Parts   []string  // the received parts' run directories, by index
	Missing []Missing // the parts that did not arrive, by index
}

// Coordinator holds one test's barrier and parts.
type Coordinator struct {
	opt      Options
	segments []string

	mu       sync.Mutex
	ready    map[int]string // index → runner name, of the runners waiting
	release  time.Time
	released chan struct{} // closed at the release
	failed   chan struct{} // closed when the barrier fails
	failMsg  string
	parts    map[int]string // index → run directory
	digests  map[int]string
	partIn   []chan struct{} // closed when part i is in
	busy     map[int]bool    // parts being received
	lost     map[int]string  // index → why its part will not come
	changed  chan struct{}   // a buffered nudge: a part arrived or a runner was lost
	done     chan struct{}   // closed when Wait returns: no more parts taken

	published  bool
	result     string // the published run directory; "" for none
	resultExit int
	resultMsg  string
	fetched    chan struct{}
	fetchOnce  sync.Once
}

// New returns the coordinator of the test o describes.
func New(o Options) (*Coordinator, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.MaxPart <= 0 {
		o.MaxPart = DefaultMaxPart
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 5 * time.Second
	}
	seq, err := schedule.EvenSequence(o.Runners)
	if err != nil {
		return nil, err
	}
	segs := make([]string, len(seq))
	for i, s := range seq {
		segs[i] = s.String()
	}
	partIn := make([]chan struct{}, o.Runners)
	for i := range partIn {
		partIn[i] = make(chan struct{})
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("--dir %s: %w", o.Dir, err)
	}
	return &Coordinator{opt: o, segments: segs,
		ready: map[int]string{}, released: make(chan struct{}), failed: make(chan struct{}),
		parts: map[int]string{}, digests: map[int]string{}, lost: map[int]string{},
		changed: make(chan struct{}, 1), done: make(chan struct{}), fetched: make(chan struct{}),
		partIn: partIn, busy: map[int]bool{},
	}, nil
}

// Handler serves the runners' and the fetcher's requests; wrap it in a guard.
func (c *Coordinator) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+ReadyPath, c.serveReady)
	mux.HandleFunc("PUT "+PartPath, c.servePart)
	mux.HandleFunc("GET "+ResultPath, c.serveResult)
	return mux
}

func (c *Coordinator) nudge() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// index reads ?index= of r, answering 400 itself when it is not a runner's.
func (c *Coordinator) index(w http.ResponseWriter, r *http.Request) (int, bool) {
	i, err := strconv.Atoi(r.URL.Query().Get("index"))
	if err != nil || i < 0 || i >= c.opt.Runners {
		http.Error(w, fmt.Sprintf("index %q: want 0 to %d, the runner's --execution-segment-index", r.URL.Query().Get("index"), c.opt.Runners-1), http.StatusBadRequest)
		return 0, false
	}
	return i, true
}

// serveReady registers a runner, answers it at the release (or the
// barrier's failure), then holds the connection until its part is in: a
// connection that closes first means the runner is gone.
func (c *Coordinator) serveReady(w http.ResponseWriter, r *http.Request) {
	i, ok := c.index(w, r)
	if !ok {
		return
	}
	name := r.URL.Query().Get("runner")
	c.mu.Lock()
	select {
	case <-c.released:
		c.mu.Unlock()
		http.Error(w, fmt.Sprintf("runner %d reported ready after the test started (%s): it cannot take part; raise the runners' readiness or --ready-timeout", i, c.release.UTC().Format(time.RFC3339Nano)), http.StatusConflict)
		return
	case <-c.failed:
		c.mu.Unlock()
		http.Error(w, c.failMsg, http.StatusGone)
		return
	default:
	}
	if other, dup := c.ready[i]; dup {
		c.mu.Unlock()
		http.Error(w, fmt.Sprintf("runner %d is already ready as %q: two runners were given one --execution-segment-index", i, other), http.StatusConflict)
		return
	}
	c.ready[i] = name
	if len(c.ready) == c.opt.Runners {
		c.release = time.Now()
		close(c.released)
	}
	c.mu.Unlock()

	select {
	case <-c.released:
	case <-c.failed:
		http.Error(w, c.failMsg, http.StatusGone)
		return
	case <-r.Context().Done():
		c.mu.Lock()
		select {
		case <-c.released: // released as it left: it is lost below
		default:
			delete(c.ready, i) // gone before the start: it may come back
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(releaseMsg{Release: c.release, Runners: c.opt.Runners})
	flush(w)
	t := time.NewTicker(c.opt.Heartbeat)
	defer t.Stop()
	for {
		c.mu.Lock()
		_, in := c.parts[i]
		c.mu.Unlock()
		if in {
			return
		}
		select {
		case <-r.Context().Done():
			c.lose(i, "its runner went away (connection closed) before sending its part")
			return
		case <-c.done:
			return
		case <-c.partIn[i]:
		case <-t.C:
			io.WriteString(w, "\n")
			flush(w)
		}
	}
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

type releaseMsg struct {
	Release time.Time `json:"release"`
	Runners int       `json:"runners"`
}

func (c *Coordinator) lose(i int, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, in := c.parts[i]; in {
		return
	}
	if _, was := c.lost[i]; !was {
		c.lost[i] = why
		c.nudge()
	}
}

// servePart takes one runner's run directory: a tar stream whose SHA-256
// the DigestHeader announced, spooled to disk (never held in memory),
// checked, then unpacked. Sent again with the same digest, it is taken once.
func (c *Coordinator) servePart(w http.ResponseWriter, r *http.Request) {
	i, ok := c.index(w, r)
	if !ok {
		return
	}
	want := strings.ToLower(r.Header.Get(DigestHeader))
	if len(want) != 64 {
		http.Error(w, "missing "+DigestHeader+" header: the part's SHA-256 in hex", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	prev, have := c.digests[i]
	select {
	case <-c.done:
		c.mu.Unlock()
		http.Error(w, fmt.Sprintf("part %d came after the coordinator stopped waiting for parts", i), http.StatusGone)
		return
	default:
	}
	if !have && c.busy[i] {
		c.mu.Unlock()
		http.Error(w, fmt.Sprintf("part %d is being received on another connection; retry later", i), http.StatusServiceUnavailable)
		return
	}
	c.busy[i] = !have
	c.mu.Unlock()
	if have {
		if prev == want {
			io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, c.opt.MaxPart))
			fmt.Fprintf(w, "part %d already received\n", i)
			return
		}
		http.Error(w, fmt.Sprintf("part %d was already received with another digest", i), http.StatusConflict)
		return
	}
	defer func() { c.mu.Lock(); delete(c.busy, i); c.mu.Unlock() }()
	dir := filepath.Join(c.opt.Dir, "part-"+strconv.Itoa(i))
	if err := receive(http.MaxBytesReader(w, r.Body, c.opt.MaxPart), want, dir, c.opt.Dir); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("part %d is larger than %d bytes (raise --max-part)", i, c.opt.MaxPart), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, fmt.Sprintf("part %d: %v", i, err), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.parts[i], c.digests[i] = dir, want
	delete(c.lost, i)
	close(c.partIn[i])
	c.nudge()
	c.mu.Unlock()
	fmt.Fprintf(w, "part %d received\n", i)
}

// Wait waits for the barrier, then for every part or its loss. An error
// means the barrier failed: the test never started.
func (c *Coordinator) Wait(ctx context.Context) (Outcome, error) {
	defer close(c.done)
	t := time.NewTimer(c.opt.ReadyTimeout)
	select {
	case <-c.released:
		t.Stop()
	case <-t.C:
		c.mu.Lock()
		select {
		case <-c.released: // at the last instant
			t.Stop()
		default:
			var absent []string
			for i := range c.opt.Runners {
				if _, ok := c.ready[i]; !ok {
					absent = append(absent, strconv.Itoa(i))
				}
			}
			c.failMsg = fmt.Sprintf("the test did not start: %d of %d runners ready after %v; never ready: runner %s (fix: check those pods' events and logs — image pull, scheduling, resources — or raise --ready-timeout)",
				len(c.ready), c.opt.Runners, c.opt.ReadyTimeout, strings.Join(absent, ", "))
			close(c.failed)
			c.mu.Unlock()
			return Outcome{}, errors.New(c.failMsg)
		}
		c.mu.Unlock()
	case <-ctx.Done():
		return Outcome{}, fmt.Errorf("interrupted while waiting for the runners: %w", context.Cause(ctx))
	}
	deadline := time.NewTimer(c.opt.PartsTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		n := len(c.parts) + len(c.lost)
		c.mu.Unlock()
		if n >= c.opt.Runners {
			break
		}
		select {
		case <-c.changed:
			continue
		case <-deadline.C:
		case <-ctx.Done():
		}
		break
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Outcome{Release: c.release}
	for i := range c.opt.Runners {
		if d, ok := c.parts[i]; ok {
			out.Parts = append(out.Parts, d)
			continue
		}
		why, ok := c.lost[i]
		if !ok {
			why = fmt.Sprintf("no part within --parts-timeout %v of the start", c.opt.PartsTimeout)
			if ctx.Err() != nil {
				why = "the coordinator was interrupted before it came"
			}
		}
		out.Missing = append(out.Missing, Missing{Index: i, Segment: c.segments[i], Runner: c.ready[i], Reason: why})
	}
	slices.SortFunc(out.Missing, func(a, b Missing) int { return a.Index - b.Index })
	return out, nil
}

// Released is closed when the runners are released.
func (c *Coordinator) Released() <-chan struct{} { return c.released }

// Publish serves dir (the merged run directory) at ResultPath, with the
// test's exit code and message; with dir "", only the message, as a
// failure (the test never started, or nothing could be merged).
func (c *Coordinator) Publish(dir string, exit int, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.published, c.result, c.resultExit, c.resultMsg = true, dir, exit, msg
}

// Fetched is closed once the published result has been sent whole.
func (c *Coordinator) Fetched() <-chan struct{} { return c.fetched }

func (c *Coordinator) serveResult(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	published, dir, exit, msg := c.published, c.result, c.resultExit, c.resultMsg
	parts, lost := len(c.parts), len(c.lost)
	c.mu.Unlock()
	if !published {
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("no result yet: %d of %d parts in, %d lost", parts, c.opt.Runners, lost), http.StatusServiceUnavailable)
		return
	}
	if dir == "" {
		w.Header().Set(ExitHeader, strconv.Itoa(exit))
		http.Error(w, msg, http.StatusGone)
		c.fetchOnce.Do(func() { close(c.fetched) })
		return
	}
	sum, err := Digest(dir)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set(DigestHeader, sum)
	w.Header().Set(ExitHeader, strconv.Itoa(exit))
	w.Header().Set(MessageHeader, strings.ToValidUTF8(strings.ReplaceAll(msg, "\n", " "), "?"))
	if err := Pack(w, dir); err != nil {
		return // the fetcher's digest check fails and it retries
	}
	c.fetchOnce.Do(func() { close(c.fetched) })
}
