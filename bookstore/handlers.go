package bookstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Request limits; anything beyond them is a 400.
const (
	MaxBodyBytes   = 1 << 20 // POST /api/orders body
	MaxQueryLen    = 200     // bytes of the q parameter
	MaxPage        = 100_000 // deep enough to pass the end of any catalogue
	MaxOrderAmount = 1_000   // copies in one order
)

// routes builds the mux. Every route is timed under its pattern, so the
// duration histogram's route label reads like k6's request name.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h http.Handler) {
		mux.Handle(pattern, s.metrics.instrument(pattern, h))
	}
	handle("GET /api/books/{isbn}", s.cache.middleware(http.HandlerFunc(s.getBook)))
	handle("GET /api/books", s.cache.middleware(http.HandlerFunc(s.searchBooks)))
	handle("POST /api/orders", http.HandlerFunc(s.createOrder))
	handle("GET /healthz", http.HandlerFunc(healthz))
	handle("GET /metrics", s.metrics.handler())
	return jsonFallback(mux, s.metrics.instrument("unmatched", http.HandlerFunc(jsonNotRouted(mux))))
}

// jsonFallback sends what mux routes to mux and the rest to notRouted.
func jsonFallback(mux *http.ServeMux, notRouted http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		notRouted.ServeHTTP(w, r)
	})
}

// jsonNotRouted answers what mux does not route (its 404, 405 and path
// redirects) with mux's status and headers but a JSON body, so every error
// this server sends is {"error": "..."}.
func jsonNotRouted(mux *http.ServeMux) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		probe := &headerProbe{header: http.Header{}}
		mux.ServeHTTP(probe, r)
		for _, k := range []string{"Allow", "Location"} {
			if v := probe.header.Get(k); v != "" {
				w.Header().Set(k, v)
			}
		}
		if probe.code == 0 {
			probe.code = http.StatusNotFound
		}
		writeError(w, probe.code, http.StatusText(probe.code))
	}
}

// headerProbe records the status and headers of a response and drops its body.
type headerProbe struct {
	header http.Header
	code   int
}

func (p *headerProbe) Header() http.Header { return p.header }
func (p *headerProbe) WriteHeader(code int) {
	if p.code == 0 {
		p.code = code
	}
}

func (p *headerProbe) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return len(b), nil
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) getBook(w http.ResponseWriter, r *http.Request) {
	isbn, err := parseISBN(r.PathValue("isbn"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	b, err := s.store.book(r.Context(), isbn)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (s *Server) searchBooks(w http.ResponseWriter, r *http.Request) {
	q, page, err := parseSearch(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := s.store.search(r.Context(), q, page)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// parseSearch reads q (optional, at most MaxQueryLen bytes of UTF-8 text) and page
// (optional, 1..MaxPage, default 1).
func parseSearch(r *http.Request) (q string, page int, err error) {
	query := r.URL.Query()
	q = query.Get("q")
	if len(q) > MaxQueryLen {
		return "", 0, fmt.Errorf("q is longer than %d bytes", MaxQueryLen)
	}
	// SQLite would cut the pattern at a NUL (matching everything) and
	// PostgreSQL refuses NUL and invalid UTF-8 in text: neither is a title.
	if !utf8.ValidString(q) || strings.ContainsFunc(q, unicode.IsControl) {
		return "", 0, errors.New("q must be UTF-8 text without control characters")
	}
	page = 1
	if p := query.Get("page"); p != "" {
		page, err = strconv.Atoi(p)
		if err != nil || page < 1 || page > MaxPage {
			return "", 0, fmt.Errorf("page %q is not a whole number from 1 to %d", p, MaxPage)
		}
	}
	return q, page, nil
}

// orderRequest is the body of POST /api/orders.
type orderRequest struct {
	ISBN     string `json:"isbn"`
	Quantity int    `json:"quantity"`
}

func (s *Server) createOrder(w http.ResponseWriter, r *http.Request) {
	req, err := decodeOrder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	o, err := s.store.order(r.Context(), req.ISBN, req.Quantity)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, o)
}

// decodeOrder reads exactly one JSON object with known fields, a valid ISBN
// (returned in its ISBN-13 form) and a quantity from 1 to MaxOrderAmount.
func decodeOrder(body io.Reader) (orderRequest, error) {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	var req orderRequest
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return req, fmt.Errorf("body is larger than %d bytes", tooBig.Limit)
		}
		return req, fmt.Errorf("bad JSON body: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return req, fmt.Errorf("body is larger than %d bytes", tooBig.Limit)
		}
		return req, errors.New("bad JSON body: more than one value")
	}
	isbn, err := parseISBN(req.ISBN)
	if err != nil {
		return req, err
	}
	req.ISBN = isbn
	if req.Quantity < 1 || req.Quantity > MaxOrderAmount {
		return req, fmt.Errorf("quantity %d is not from 1 to %d", req.Quantity, MaxOrderAmount)
	}
	return req, nil
}

// fail maps a store error to its status: 404, 409, 503 for a pool timeout
// or a busy database, 500 (logged) for anything else.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errNotFound):
		writeError(w, http.StatusNotFound, errNotFound.Error())
	case errors.Is(err, errOutOfStock):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, errPoolTimeout):
		writeError(w, http.StatusServiceUnavailable, errPoolTimeout.Error())
	case errors.Is(err, errDBBusy):
		s.log.Warn("database busy", "path", r.URL.Path, "err", err)
		writeError(w, http.StatusServiceUnavailable, errDBBusy.Error())
	case r.Context().Err() != nil:
		// The client is gone; nobody reads this, but the histogram does.
		writeError(w, http.StatusServiceUnavailable, "request cancelled")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		writeError(w, http.StatusServiceUnavailable, "request cancelled")
	default:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "internal error")
	}
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// writeJSON encodes v before writing anything, so an encoding failure can
// still become a 500 instead of a truncated 200.
func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		code = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"internal error"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes()) // a client that left cannot be told
}
