package bookstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// Errors the store returns; handlers map them to status codes.
var (
	errNotFound    = errors.New("book not found")
	errOutOfStock  = errors.New("out of stock")
	errPoolTimeout = errors.New("timeout obtaining a connection from the pool")
	errDBBusy      = errors.New("database is busy")
)

// PageSize is how many books one search page holds.
const PageSize = 20

// store is the catalogue behind the API. Every request borrows one pooled
// connection for all its queries, the way an ADO.NET or JDBC handler does, so
// the pool is a resource the USE method can watch.
//
// Concurrency: safe for concurrent use; Reset must not overlap requests
// that expect the seeded state.
type store struct {
	db          *sql.DB
	d           dialect
	poolTimeout time.Duration
	queryDelay  time.Duration
	gate        chan struct{} // one slot when queries are serialised, else nil

	poolTimeouts atomic.Uint64 // requests that never got a connection
	busyErrors   atomic.Uint64 // SQLite busy/locked errors
	gateWaiting  atomic.Int64  // requests queued for the serialised database
}

// openStore opens dsn (a PostgreSQL DSN, or a SQLite file path), sizes the
// pool and restores the seeded state.
func openStore(ctx context.Context, dsn string, o Options) (*store, error) {
	d, source := sqliteDialect(), sqliteDSN(dsn, o.BusyTimeout)
	if isPostgres(dsn) {
		d, source = postgresDialect(), dsn
	}
	db, err := sql.Open(d.driver, source)
	if err != nil {
		return nil, fmt.Errorf("bookstore: open %s: %w", d.name, err)
	}
	db.SetMaxOpenConns(o.MaxPool)
	// As many idle as open: with database/sql's default of 2, a pool under
	// load would close and reopen connections all the time.
	db.SetMaxIdleConns(o.MaxPool)
	s := &store{db: db, d: d, poolTimeout: o.PoolTimeout, queryDelay: o.QueryDelay}
	if o.SerializeQueries {
		s.gate = make(chan struct{}, 1)
	}
	if err := s.seed(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return s, nil
}

func (s *store) close() error { return s.db.Close() }

// seed drops and recreates the tables and inserts the catalogue: whatever
// an earlier version or run left in the database, a new store starts from
// the same state.
func (s *store) seed(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("bookstore: seed: %w", err)
	}
	if err := s.createAndFill(ctx, tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("bookstore: seed: commit: %w", err)
	}
	if s.d.analyze != "" {
		if _, err := s.db.ExecContext(ctx, s.d.analyze); err != nil {
			return fmt.Errorf("bookstore: seed: %w", err)
		}
	}
	return nil
}

// seedBatch rows go in one INSERT: 7 parameters a row stays far below both
// databases' parameter limits, and 10,000 single-row INSERTs would make
// PostgreSQL seeding take seconds.
const seedBatch = 200

func (s *store) createAndFill(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range s.d.schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("bookstore: create schema: %w", err)
		}
	}
	books := seedCatalogue()
	for start := 0; start < len(books); start += seedBatch {
		batch := books[start:min(start+seedBatch, len(books))]
		var q strings.Builder
		q.WriteString(`INSERT INTO books (isbn, title, author, year, price_cents, stock, seed_stock) VALUES `)
		args := make([]any, 0, 7*len(batch))
		for i, b := range batch {
			if i > 0 {
				q.WriteString(", ")
			}
			n := 7 * i
			fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
			args = append(args, b.isbn, b.title, b.author, b.year, b.priceCents, b.stock, b.stock)
		}
		if _, err := tx.ExecContext(ctx, s.d.rebind(q.String()), args...); err != nil {
			return fmt.Errorf("bookstore: seed books %d..%d: %w", start, start+len(batch)-1, err)
		}
	}
	return nil
}

// reset restores the seeded state in one transaction. Orders are the only
// writes the API makes, so deleting them and putting back the stock they
// took is the whole of it, and far cheaper than seeding again.
func (s *store) reset(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("bookstore: reset: %w", err)
	}
	for _, stmt := range []string{s.d.clearOrders, `UPDATE books SET stock = seed_stock WHERE stock <> seed_stock`} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return errors.Join(fmt.Errorf("bookstore: reset: %w", err), tx.Rollback())
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("bookstore: reset: commit: %w", err)
	}
	return nil
}

// withConn runs fn on a pooled connection. Waiting for the connection is
// bounded by the pool timeout (errPoolTimeout); then, while the connection
// is held, come the optional queue for a serialised database and the
// artificial query delay, so a slow database fills the pool as a real one
// does.
func (s *store) withConn(ctx context.Context, fn func(*sql.Conn) error) error {
	acquire, cancel := context.WithTimeout(ctx, s.poolTimeout)
	conn, err := s.db.Conn(acquire)
	cancel()
	if err != nil {
		// Only our deadline is a pool timeout; a client that went away is not.
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			s.poolTimeouts.Add(1)
			return errPoolTimeout
		}
		return fmt.Errorf("bookstore: obtaining a connection: %w", err)
	}
	defer conn.Close() // returns it to the pool
	if s.gate != nil {
		s.gateWaiting.Add(1)
		select {
		case s.gate <- struct{}{}:
			s.gateWaiting.Add(-1)
		case <-ctx.Done():
			s.gateWaiting.Add(-1)
			return fmt.Errorf("bookstore: waiting for the database: %w", ctx.Err())
		}
		defer func() { <-s.gate }()
	}
	if s.queryDelay > 0 {
		t := time.NewTimer(s.queryDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("bookstore: query delay: %w", ctx.Err())
		}
	}
	return s.classify(fn(conn))
}

// classify counts and marks SQLite busy/locked errors, which are the
// database saying it is saturated rather than a bug.
func (s *store) classify(err error) error {
	if err != nil && isBusy(err) {
		s.busyErrors.Add(1)
		return fmt.Errorf("%w: %w", errDBBusy, err)
	}
	return err
}

const bookColumns = `isbn, title, author, year, price_cents, stock`

func scanBook(row interface{ Scan(...any) error }) (Book, error) {
	var b seedBook
	if err := row.Scan(&b.isbn, &b.title, &b.author, &b.year, &b.priceCents, &b.stock); err != nil {
		return Book{}, err
	}
	return b.book(), nil
}

// book returns the book with the given ISBN-13, or errNotFound.
func (s *store) book(ctx context.Context, isbn string) (Book, error) {
	var b Book
	err := s.withConn(ctx, func(c *sql.Conn) error {
		var err error
		b, err = scanBook(c.QueryRowContext(ctx,
			s.d.rebind(`SELECT `+bookColumns+` FROM books WHERE isbn = $1`), isbn))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return errNotFound
		case err != nil:
			return fmt.Errorf("bookstore: get book %s: %w", isbn, err)
		}
		return nil
	})
	return b, err
}
