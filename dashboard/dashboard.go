// Package dashboard serves the live view of a run: one self-contained page
// (the HTML report's chart code and palette) fed by server-sent events. It
// is fed every interval as the runner records it (Server.Add), or else
// reads the run directory back, so what it shows is what the run recorded:
// per-interval percentiles from that interval's merged histograms, never
// averages.
package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/knee-dev/knee/guard"
	"github.com/knee-dev/knee/record"
	"github.com/knee-dev/knee/rundir"
)

// DefaultAddr is where --dashboard listens when given no address.
const DefaultAddr = "127.0.0.1:5665"

// CheckAddr accepts host:port. A loopback address (127.0.0.0/8, ::1,
// localhost) is served as it is; any other needs the random token printed at
// start (package guard), since the page shows the target's URLs and the run.
func CheckAddr(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("dashboard address %q: %w (write host:port, e.g. %s)", addr, err, DefaultAddr)
	}
	return nil
}

// Options say what to serve and where.
type Options struct {
	Addr     string        // host:port on loopback; "" means DefaultAddr
	Dir      string        // the run directory to watch (it may not exist yet)
	Interval time.Duration // the run's interval: the windows drawn and how often the directory is read
	Token    string        // require this token even on loopback; beyond loopback a random one is made when ""
}

// Server is a running dashboard.
type Server struct {
	opt   Options
	ln    net.Listener
	http  *http.Server
	page  []byte
	guard *guard.Guard

	buildMu sync.Mutex // one build at a time: the builder keeps the windows done
	builder builder

	mu        sync.Mutex
	last      []byte // the newest event
	seq       int
	intervals int // intervals in the newest event
	changed   chan struct{}
	finished  bool

	// The run as fed by Add, interval by interval: once fed, the dashboard
	// builds from it and never reads the directory.
	fed  bool
	run  rundir.Dir
	news chan struct{} // a new interval was fed (buffered, one pending)

	stop chan struct{}
	done chan struct{}
}

// Add is given every interval as the run records it (runner.Options.OnRecord).
// It keeps the interval with its histograms packed (~2 KB each, so an
// hour of 1 s intervals stays a few MB) and wakes the page's builder; it
// never blocks the run.
func (s *Server) Add(meta rundir.Meta, iv rundir.Interval) {
	kept := iv
	kept.Histograms = make(map[record.Key]*record.Histogram, len(iv.Histograms))
	for k, h := range iv.Histograms {
		kept.Histograms[k] = h.Packed()
	}
	// The run's running totals are the runner's to change; the dashboard
	// counts from the intervals.
	meta.Counters = record.Counters{}
	s.mu.Lock()
	s.fed = true
	s.run.Dir, s.run.Meta = s.opt.Dir, meta
	s.run.Intervals = append(s.run.Intervals, kept)
	s.mu.Unlock()
	select {
	case s.news <- struct{}{}:
	default:
	}
}

// fedRun is the run fed so far, safe to read while Add goes on: intervals
// are only appended and their histograms never change.
func (s *Server) fedRun() (*rundir.Dir, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fed {
		return nil, false
	}
	r := s.run
	r.Intervals = r.Intervals[:len(r.Intervals):len(r.Intervals)]
	return &r, true
}

// Start listens on opt.Addr and starts watching opt.Dir. Close stops both.
func Start(opt Options) (*Server, error) {
	if opt.Addr == "" {
		opt.Addr = DefaultAddr
	}
	if opt.Interval <= 0 {
		opt.Interval = time.Second
	}
	if err := CheckAddr(opt.Addr); err != nil {
		return nil, err
	}
	page, err := Page()
	if err != nil {
		return nil, err
	}
	g, err := guard.For(opt.Addr)
	if err != nil {
		return nil, err
	}
	if opt.Token != "" {
		g = guard.WithToken(opt.Token)
	}
	// The page's own inline code runs, by hash; nothing injected does.
	g = g.WithPolicy(guard.PolicyFor(inline(page, "script"), inline(page, "style")))
	ln, err := net.Listen("tcp", opt.Addr)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	s := &Server{opt: opt, ln: ln, page: page, guard: g, changed: make(chan struct{}), news: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.HandleFunc("GET /data", s.serveData)
	s.http = &http.Server{Handler: g.Handler(mux), ReadHeaderTimeout: 10 * time.Second}
	go s.http.Serve(ln)
	go s.watch()
	return s, nil
}

// URL is the page's address, with its token when one is required.
func (s *Server) URL() string {
	u := "http://" + s.ln.Addr().String() + "/"
	if tok := s.guard.Token(); tok != "" {
		u += "?token=" + tok
	}
	return u
}

// Announce prints where the page is and, beyond loopback, its token.
func (s *Server) Announce(w io.Writer) { s.guard.Announce(w, "dashboard", s.ln.Addr()) }

// inline returns the text of every <tag>...</tag> block of page, as the
// browser hashes it for the Content-Security-Policy.
func inline(page []byte, tag string) []string {
	var out []string
	open, end := []byte("<"+tag+">"), []byte("</"+tag+">")
	for {
		i := bytes.Index(page, open)
		if i < 0 {
			return out
		}
		page = page[i+len(open):]
		j := bytes.Index(page, end)
		if j < 0 {
			return out
		}
		out = append(out, string(page[:j]))
		page = page[j+len(end):]
	}
}

// watch publishes every new interval: as soon as Add feeds it, or, for a
// run not fed (a directory written by another process), by reading the
// run directory twice an interval.
func (s *Server) watch() {
	defer close(s.done)
	wait := max(s.opt.Interval/2, 50*time.Millisecond)
	for {
		select {
		case <-s.stop:
			return
		case <-s.news:
			began := time.Now()
			s.refresh(nil)
			// A fed build costs tens of milliseconds an hour of run (the
			// whole-run merges of the summary and the CO signals): resting
			// nine times as long keeps it under a tenth of a core, taken
			// from the machine the target runs on, and a new interval that
			// comes meanwhile waits in s.news.
			select {
			case <-s.stop:
				return
			case <-time.After(9 * time.Since(began)):
			}
			continue
		case <-time.After(wait):
		}
		if _, fed := s.fedRun(); fed {
			continue
		}
		began := time.Now()
		s.refresh(nil)
		// A refresh reads the whole run directory, which grows with the run;
		// waiting ten times as long as it took keeps the dashboard under a
		// tenth of one core of the generator's machine.
		wait = max(s.opt.Interval/2, 50*time.Millisecond, 10*time.Since(began))
	}
}

// refresh publishes a snapshot when the run holds a new interval, or always
// when done is set (the run's end). The run is the one fed by Add, else
// the directory read back.
func (s *Server) refresh(done *Done) {
	r, fed := s.fedRun()
	if !fed {
		var err error
		if r, err = rundir.Open(s.opt.Dir); err != nil {
			// Not created yet, or caught between two writes: the next read will do.
			if done == nil {
				return
			}
			r = nil
		}
	}
	s.mu.Lock()
	seen, finished := s.intervals, s.finished
	s.mu.Unlock()
	if finished || (done == nil && (r == nil || len(r.Intervals) == seen)) {
		return
	}
	s.buildMu.Lock()
	if done != nil {
		// The run's last state is built whole, not extended from a build
		// that may have caught the run between two intervals.
		s.builder = builder{}
	}
	snap := s.builder.build(r, s.opt.Dir, s.opt.Interval)
	s.buildMu.Unlock()
	snap.Done = done
	b, err := json.Marshal(snap)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return // the run's end was published while this was built
	}
	s.last, s.seq = b, s.seq+1
	if r != nil {
		s.intervals = len(r.Intervals)
	}
	s.finished = done != nil
	close(s.changed)
	s.changed = make(chan struct{})
}

// Finish publishes the run's last state and where its directory and report are.
func (s *Server) Finish(runDir, reportFile string) {
	s.refresh(&Done{RunDir: runDir, Report: reportFile})
}

// Close stops watching and serving; open event streams end.
func (s *Server) Close() error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.http.Close()
	}
	return err
}

func (s *Server) servePage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(s.page)
}

func (s *Server) serveData(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	b := s.last
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if b == nil {
		b = []byte("null")
	}
	w.Write(b)
}

// serveEvents streams every snapshot as one server-sent event ("data:" line
// of JSON), the newest first, until the client goes or the server closes.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	sent := 0
	for {
		s.mu.Lock()
		b, seq, ch := s.last, s.seq, s.changed
		s.mu.Unlock()
		if seq != sent && b != nil {
			if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", seq, b); err != nil {
				return
			}
			fl.Flush()
			sent = seq
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		case <-time.After(15 * time.Second):
			fmt.Fprint(w, ": keep-alive\n\n") // proxies close silent streams
			fl.Flush()
		}
	}
}
