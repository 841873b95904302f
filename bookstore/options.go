package bookstore

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Defaults for the zero values of Options.
const (
	DefaultAddr            = "127.0.0.1:8080"
	DefaultMaxPool         = 100
	DefaultPoolTimeout     = 15 * time.Second
	DefaultCacheTTL        = 10 * time.Second
	DefaultCacheEntries    = 100_000
	DefaultBusyTimeout     = 5 * time.Second
	DefaultShutdownTimeout = 5 * time.Second
)

// Options configures a Server. The zero value is a working server on an
// embedded SQLite file in a temporary directory.
type Options struct {
	// Addr is where ListenAndServe listens (DefaultAddr when empty).
	Addr string
	// DB selects the store: empty for a SQLite file in a fresh temporary
	// directory (removed by Close), a postgres:// or postgresql:// DSN or
	// a keyword/value one ("host=db user=knee dbname=knee") for PostgreSQL,
	// anything else is the path of a SQLite file.
	DB string
	// MaxPool is the most open database connections (DefaultMaxPool when 0).
	MaxPool int
	// PoolTimeout is how long a request waits for a pooled connection before
	// it gets 503 (DefaultPoolTimeout when 0).
	PoolTimeout time.Duration
	// CacheTTL is how long a GET 200 response is served from the output cache
	// (DefaultCacheTTL when 0; negative disables the cache).
	CacheTTL time.Duration
	// CacheEntries bounds the output cache (DefaultCacheEntries when 0), so
	// a load test with a unique query string per request cannot grow it
	// without limit.
	CacheEntries int
	// QueryDelay is artificial database slowness: every query first sleeps
	// this long while holding its connection (0, the default, is off).
	QueryDelay time.Duration
	// SerializeQueries runs one query at a time, modelling a database that is
	// the bottleneck: requests queue for it while holding their connection.
	SerializeQueries bool
	// BusyTimeout is SQLite's busy_timeout (DefaultBusyTimeout when 0).
	BusyTimeout time.Duration
	// Wrap, when set, wraps the handler Serve serves (knee lab serve puts
	// its access guard there: loopback Host, token, cross-site refusal).
	Wrap func(http.Handler) http.Handler
	// ShutdownTimeout bounds the graceful shutdown in Serve
	// (DefaultShutdownTimeout when 0).
	ShutdownTimeout time.Duration
	// Logger receives errors and lifecycle events; nil logs nothing.
	Logger *slog.Logger
}

// Validate reports every invalid field and changes nothing.
func (o Options) Validate() []error {
	var errs []error
	if o.MaxPool < 0 {
		errs = append(errs, fmt.Errorf("bookstore: MaxPool %d is negative", o.MaxPool))
	}
	if o.PoolTimeout < 0 {
		errs = append(errs, fmt.Errorf("bookstore: PoolTimeout %v is negative", o.PoolTimeout))
	}
	if o.CacheEntries < 0 {
		errs = append(errs, fmt.Errorf("bookstore: CacheEntries %d is negative", o.CacheEntries))
	}
	if o.QueryDelay < 0 {
		errs = append(errs, fmt.Errorf("bookstore: QueryDelay %v is negative", o.QueryDelay))
	}
	if o.BusyTimeout < 0 {
		errs = append(errs, fmt.Errorf("bookstore: BusyTimeout %v is negative", o.BusyTimeout))
	}
	if o.ShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("bookstore: ShutdownTimeout %v is negative", o.ShutdownTimeout))
	}
	if o.DB == ":memory:" || strings.Contains(o.DB, "mode=memory") {
		errs = append(errs, errors.New("bookstore: in-memory SQLite is one database per connection; use a file"))
	}
	return errs
}

// withDefaults returns o with every zero value replaced by its default.
func (o Options) withDefaults() Options {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxPool == 0 {
		o.MaxPool = DefaultMaxPool
	}
	if o.PoolTimeout == 0 {
		o.PoolTimeout = DefaultPoolTimeout
	}
	if o.CacheTTL == 0 {
		o.CacheTTL = DefaultCacheTTL
	}
	if o.CacheEntries == 0 {
		o.CacheEntries = DefaultCacheEntries
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// isPostgres reports whether dsn names a PostgreSQL server: a URL, or
// libpq's keyword/value form ("host=db user=knee dbname=knee"), which a
// SQLite file path does not begin with.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || pgKeywordValue().MatchString(dsn)
}

// pgKeywordValue matches the start of a libpq keyword/value DSN.
var pgKeywordValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|passfile|sslmode|service|connect_timeout|application_name)\s*=`)
})
