package bookstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Server is the bookstore: its store, output cache, metrics and routes.
//
// Concurrency: Handler may serve any number of requests at once; Reset and
// Close are safe to call concurrently with them, though requests overlapping
// a Reset see either state.
type Server struct {
	opts    Options
	log     *slog.Logger
	store   *store
	cache   *outputCache
	metrics *metrics
	handler http.Handler
	tempDir string // removed by Close; empty when the caller chose the database

	closeOnce sync.Once
	closeErr  error
}

// New opens the store named by o.DB, seeds it (every start is the seeded
// state) and builds the routes. The caller must Close the Server.
func New(ctx context.Context, o Options) (*Server, error) {
	if errs := o.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	o = o.withDefaults()
	s := &Server{opts: o, log: o.Logger, cache: newOutputCache(o.CacheTTL, o.CacheEntries)}
	dsn := o.DB
	if dsn == "" {
		dir, err := os.MkdirTemp("", "knee-bookstore-")
		if err != nil {
			return nil, fmt.Errorf("bookstore: temp dir for SQLite: %w", err)
		}
		s.tempDir = dir
		dsn = filepath.Join(dir, "bookstore.db")
	}
	st, err := openStore(ctx, dsn, o)
	if err != nil {
		return nil, errors.Join(err, s.removeTemp())
	}
	s.store = st
	if s.metrics, err = newMetrics(st, s.cache); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	s.handler = s.routes()
	s.log.Info("bookstore ready", "db", st.d.name, "books", SeedBooks, "max_pool", o.MaxPool,
		"pool_timeout", o.PoolTimeout, "cache_ttl", o.CacheTTL, "query_delay", o.QueryDelay,
		"serialize_queries", o.SerializeQueries)
	return s, nil
}

// Handler returns the HTTP API, /healthz and /metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// Gatherer returns the server's metrics registry, for reading them in
// process without scraping /metrics.
func (s *Server) Gatherer() prometheus.Gatherer { return s.metrics.reg }

// Reset restores the seeded catalogue, deletes every order and empties the
// output cache, so repetitions of a run start from the same state.
func (s *Server) Reset(ctx context.Context) error {
	if err := s.store.reset(ctx); err != nil {
		return err
	}
	s.cache.clear()
	return nil
}

// ListenAndServe listens on Options.Addr and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("bookstore: listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves HTTP on ln until ctx ends, then shuts down gracefully: it
// stops accepting, lets requests in flight finish for up to
// Options.ShutdownTimeout, and closes the rest. It returns nil after a clean
// shutdown. It closes ln but not the Server.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	h := s.handler
	if s.opts.Wrap != nil {
		h = s.opts.Wrap(h)
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	s.log.Info("bookstore serving", "addr", ln.Addr().String())
	select {
	case err := <-served:
		return fmt.Errorf("bookstore: serve: %w", err)
	case <-ctx.Done():
	}
	// The shutdown gets its own deadline: ctx is already done.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	shutErr := hs.Shutdown(sctx)
	if shutErr != nil {
		shutErr = errors.Join(fmt.Errorf("bookstore: graceful shutdown: %w", shutErr), hs.Close())
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return errors.Join(shutErr, fmt.Errorf("bookstore: serve: %w", err))
	}
	s.log.Info("bookstore stopped")
	return shutErr
}

// Close closes the database and removes the temporary SQLite directory, if
// New made one. It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		var err error
		if s.store != nil {
			err = s.store.close()
		}
		s.closeErr = errors.Join(err, s.removeTemp())
	})
	return s.closeErr
}

func (s *Server) removeTemp() error {
	if s.tempDir == "" {
		return nil
	}
	if err := os.RemoveAll(s.tempDir); err != nil {
		return fmt.Errorf("bookstore: remove %s: %w", s.tempDir, err)
	}
	return nil
}
