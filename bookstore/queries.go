package bookstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// SearchPage is one page of search results, as the API returns it.
type SearchPage struct {
	Query    string `json:"query"`
	Page     int    `json:"page"`
	PageSize int    `json:"page_size"`
	Total    int    `json:"total"`
	Books    []Book `json:"books"`
}

// likeEscape escapes LIKE's wildcards in q so a user's % or _ matches
// itself; the queries declare \ as the escape character.
func likeEscape(q string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q)
}

// The search matches a case-insensitive substring of title or author and
// lists prefix matches first, then by title and ISBN so pages are stable.
const (
	searchWhere = ` FROM books WHERE lower(title) LIKE $1 ESCAPE '\' OR lower(author) LIKE $1 ESCAPE '\'`
	searchPage  = `SELECT ` + bookColumns + searchWhere + `
		ORDER BY CASE WHEN lower(title) LIKE $2 ESCAPE '\' OR lower(author) LIKE $2 ESCAPE '\' THEN 0 ELSE 1 END,
			title, isbn
		LIMIT $3 OFFSET $4`
	searchCount = `SELECT count(*)` + searchWhere
)

// search returns page (1-based) of the books whose title or author contains
// q, ignoring case; an empty q matches every book.
func (s *store) search(ctx context.Context, q string, page int) (SearchPage, error) {
	res := SearchPage{Query: q, Page: page, PageSize: PageSize, Books: []Book{}}
	esc := likeEscape(strings.ToLower(q))
	contains, prefix := "%"+esc+"%", esc+"%"
	err := s.withConn(ctx, func(c *sql.Conn) error {
		if err := c.QueryRowContext(ctx, s.d.rebind(searchCount), contains).Scan(&res.Total); err != nil {
			return fmt.Errorf("bookstore: count search %q: %w", q, err)
		}
		rows, err := c.QueryContext(ctx, s.d.rebind(searchPage),
			contains, prefix, PageSize, (page-1)*PageSize)
		if err != nil {
			return fmt.Errorf("bookstore: search %q: %w", q, err)
		}
		defer rows.Close()
		for rows.Next() {
			b, err := scanBook(rows)
			if err != nil {
				return fmt.Errorf("bookstore: search %q: %w", q, err)
			}
			res.Books = append(res.Books, b)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("bookstore: search %q: %w", q, err)
		}
		return nil
	})
	return res, err
}

// Order is a placed order, as the API returns it.
type Order struct {
	ID       int64  `json:"id"`
	ISBN     string `json:"isbn"`
	Quantity int    `json:"quantity"`
	// Stock is what is left of the book after this order.
	Stock int `json:"stock"`
}

// outOfStockError says how many copies were left; it wraps errOutOfStock.
type outOfStockError struct {
	isbn             string
	stock, requested int
}

func (e *outOfStockError) Error() string {
	return fmt.Sprintf("out of stock: %d of %s left, %d requested", e.stock, e.isbn, e.requested)
}

func (e *outOfStockError) Unwrap() error { return errOutOfStock }

// order places an order in one transaction: check stock, insert the order,
// decrement stock. It returns errNotFound or an *outOfStockError.
func (s *store) order(ctx context.Context, isbn string, quantity int) (Order, error) {
	o := Order{ISBN: isbn, Quantity: quantity}
	err := s.withConn(ctx, func(c *sql.Conn) error {
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("bookstore: order: begin: %w", err)
		}
		if err := s.orderTx(ctx, tx, &o); err != nil {
			return errors.Join(err, ignoreDone(tx.Rollback()))
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("bookstore: order: commit: %w", err)
		}
		return nil
	})
	return o, err
}

// ignoreDone drops sql.ErrTxDone: a transaction the context already rolled
// back needs no second rollback, and its cause is reported already.
func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

func (s *store) orderTx(ctx context.Context, tx *sql.Tx, o *Order) error {
	var stock int
	err := tx.QueryRowContext(ctx,
		s.d.rebind(`SELECT stock FROM books WHERE isbn = $1`+s.d.lockRow), o.ISBN).Scan(&stock)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return errNotFound
	case err != nil:
		return fmt.Errorf("bookstore: order: read stock: %w", err)
	case stock < o.Quantity:
		return &outOfStockError{isbn: o.ISBN, stock: stock, requested: o.Quantity}
	}
	err = tx.QueryRowContext(ctx,
		s.d.rebind(`INSERT INTO orders (isbn, quantity) VALUES ($1, $2) RETURNING id`),
		o.ISBN, o.Quantity).Scan(&o.ID)
	if err != nil {
		return fmt.Errorf("bookstore: order: insert: %w", err)
	}
	// The stock >= guard keeps stock from going negative even if the row
	// lock above were missing.
	res, err := tx.ExecContext(ctx,
		s.d.rebind(`UPDATE books SET stock = stock - $1 WHERE isbn = $2 AND stock >= $1`),
		o.Quantity, o.ISBN)
	if err != nil {
		return fmt.Errorf("bookstore: order: decrement stock: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("bookstore: order: decrement stock: %w", err)
	} else if n != 1 {
		return &outOfStockError{isbn: o.ISBN, stock: stock, requested: o.Quantity}
	}
	o.Stock = stock - o.Quantity
	return nil
}
