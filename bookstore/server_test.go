package bookstore

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	duneJSON  = `{"isbn":"9780441172719","title":"Dune","author":"Frank Herbert","year":1965,"price":9.99,"stock":1000}`
	braveISBN = "9780060850524" // stock 200 in the seed
)

// apiCase is one request and the exact answer it must get from a freshly
// seeded store.
type apiCase struct {
	name, method, target, body string
	wantCode                   int
	wantBody                   string // exact JSON
}

func apiCases() []apiCase {
	badISBN := `{"error":"` + errBadISBN.Error() + `"}`
	return []apiCase{
		{"book", "GET", "/api/books/9780441172719", "", 200, duneJSON},
		{"book by ISBN-10", "GET", "/api/books/0441172717", "", 200, duneJSON},
		{"ISBN-10 ending in X", "GET", "/api/books/044117271X", "", 200, duneJSON},
		{"book with query string", "GET", "/api/books/9780441172719?run=1-1", "", 200, duneJSON},
		{"classic", "GET", "/api/books/9780141439587", "", 200,
			`{"isbn":"9780141439587","title":"Emma","author":"Jane Austen","year":1815,"price":6.99,"stock":600}`},
		{"unknown book", "GET", "/api/books/9780000000002", "", 404, `{"error":"book not found"}`},
		{"ISBN too short", "GET", "/api/books/12345", "", 400, badISBN},
		{"ISBN with letters", "GET", "/api/books/97804411727ab", "", 400, badISBN},
		{"ISBN with hyphens", "GET", "/api/books/978-0441172719", "", 400, badISBN},
		{"ISBN-10 with X inside", "GET", "/api/books/04411X2717", "", 400, badISBN},
		{"search by author", "GET", "/api/books?q=orwell", "", 200,
			`{"query":"orwell","page":1,"page_size":20,"total":1,"books":[` +
				`{"isbn":"9780451524935","title":"Nineteen Eighty-Four","author":"George Orwell","year":1949,"price":7.99,"stock":400}]}`},
		{"search ignores case", "GET", "/api/books?q=BRAVE+new", "", 200,
			`{"query":"BRAVE new","page":1,"page_size":20,"total":1,"books":[` +
				`{"isbn":"9780060850524","title":"Brave New World","author":"Aldous Huxley","year":1932,"price":10.99,"stock":200}]}`},
		{"search substring", "GET", "/api/books?q=uxle", "", 200,
			`{"query":"uxle","page":1,"page_size":20,"total":1,"books":[` +
				`{"isbn":"9780060850524","title":"Brave New World","author":"Aldous Huxley","year":1932,"price":10.99,"stock":200}]}`},
		{"percent is literal", "GET", "/api/books?q=%25", "", 200,
			`{"query":"%","page":1,"page_size":20,"total":0,"books":[]}`},
		{"underscore is literal", "GET", "/api/books?q=_", "", 200,
			`{"query":"_","page":1,"page_size":20,"total":0,"books":[]}`},
		{"page past the end", "GET", "/api/books?q=dune&page=2", "", 200,
			`{"query":"dune","page":2,"page_size":20,"total":1,"books":[]}`},
		{"page zero", "GET", "/api/books?page=0", "", 400, `{"error":"page \"0\" is not a whole number from 1 to 100000"}`},
		{"page not a number", "GET", "/api/books?page=x", "", 400, `{"error":"page \"x\" is not a whole number from 1 to 100000"}`},
		{"page too deep", "GET", "/api/books?page=100001", "", 400, `{"error":"page \"100001\" is not a whole number from 1 to 100000"}`},
		{"query too long", "GET", "/api/books?q=" + strings.Repeat("a", 201), "", 400, `{"error":"q is longer than 200 bytes"}`},
		{"query with NUL", "GET", "/api/books?q=%00", "", 400, `{"error":"q must be UTF-8 text without control characters"}`},
		{"query not UTF-8", "GET", "/api/books?q=%FF", "", 400, `{"error":"q must be UTF-8 text without control characters"}`},
		{"order", "POST", "/api/orders", `{"isbn":"9780060850524","quantity":3}`, 201,
			`{"id":1,"isbn":"9780060850524","quantity":3,"stock":197}`},
		{"order by ISBN-10", "POST", "/api/orders", `{"isbn":"0441172717","quantity":1}`, 201,
			`{"id":1,"isbn":"9780441172719","quantity":1,"stock":999}`},
		{"order more than stock", "POST", "/api/orders", `{"isbn":"9780060850524","quantity":201}`, 409,
			`{"error":"out of stock: 200 of 9780060850524 left, 201 requested"}`},
		{"order unknown book", "POST", "/api/orders", `{"isbn":"9780000000002","quantity":1}`, 404, `{"error":"book not found"}`},
		{"order bad ISBN", "POST", "/api/orders", `{"isbn":"123","quantity":1}`, 400, badISBN},
		{"order zero", "POST", "/api/orders", `{"isbn":"9780060850524","quantity":0}`, 400,
			`{"error":"quantity 0 is not from 1 to 1000"}`},
		{"order too many", "POST", "/api/orders", `{"isbn":"9780060850524","quantity":1001}`, 400,
			`{"error":"quantity 1001 is not from 1 to 1000"}`},
		{"order unknown field", "POST", "/api/orders", `{"isbn":"9780060850524","quantity":1,"coupon":"x"}`, 400,
			`{"error":"bad JSON body: json: unknown field \"coupon\""}`},
		{"order bad JSON", "POST", "/api/orders", `{"isbn":`, 400, `{"error":"bad JSON body: unexpected EOF"}`},
		{"order two objects", "POST", "/api/orders", `{"isbn":"9780060850524","quantity":1}{}`, 400,
			`{"error":"bad JSON body: more than one value"}`},
		{"order wrong type", "POST", "/api/orders", `{"isbn":9780060850524,"quantity":1}`, 400,
			`{"error":"bad JSON body: json: cannot unmarshal number into Go struct field orderRequest.isbn of type string"}`},
		{"order empty body", "POST", "/api/orders", ``, 400, `{"error":"bad JSON body: EOF"}`},
		{"order body over 1 MiB", "POST", "/api/orders",
			`{"isbn":"9780060850524","quantity":1,"x":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, 400,
			`{"error":"body is larger than 1048576 bytes"}`},
		{"healthz", "GET", "/healthz", "", 200, `{"status":"ok"}`},
		{"no such route", "GET", "/api/authors", "", 404, `{"error":"Not Found"}`},
		{"wrong method", "DELETE", "/api/orders", "", 405, `{"error":"Method Not Allowed"}`},
	}
}

func TestAPI(t *testing.T) {
	forEachStore(t, Options{}, func(t *testing.T, s *Server) {
		for _, tt := range apiCases() {
			t.Run(tt.name, func(t *testing.T) {
				// Orders change stock: every case starts from the seed.
				if err := s.Reset(context.Background()); err != nil {
					t.Fatalf("Reset: %v", err)
				}
				got := do(t, s, tt.method, tt.target, tt.body)
				if got.code != tt.wantCode {
					t.Errorf("status = %d, want %d (body %s)", got.code, tt.wantCode, got.body)
				}
				if ct := got.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
				wantJSON(t, got.body, tt.wantBody)
			})
		}
	})
}

func TestWrongMethodNamesAllowed(t *testing.T) {
	s := newTestServer(t, Options{})
	got := do(t, s, "PUT", "/api/books/9780441172719", "")
	if got.code != 405 || got.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("PUT a book: status %d, Allow %q; want 405, \"GET, HEAD\"", got.code, got.header.Get("Allow"))
	}
}

func TestServeShutsDownGracefully(t *testing.T) {
	// The held request sleeps in QueryDelay while Serve is asked to stop:
	// graceful shutdown must let it finish with its 200.
	s := newTestServer(t, Options{QueryDelay: 300 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	health, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	health.Body.Close()
	if health.StatusCode != 200 {
		t.Fatalf("GET /healthz = %d", health.StatusCode)
	}
	slow := make(chan error, 1)
	go func() {
		resp, err := http.Get(base + "/api/books/9780441172719")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		slow <- err
	}()
	waitFor(t, func() bool { return metricValue(t, s, MetricInFlight) == 1 })
	cancel()
	if err := <-slow; err != nil {
		t.Errorf("request in flight during shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("listener still accepts after Serve returned")
	}
}

// waitFor polls cond until it holds, failing after a generous bound: the
// condition is about order of events, never about how long they take.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	_, err := New(context.Background(), Options{MaxPool: -1, QueryDelay: -time.Second, DB: ":memory:"})
	if err == nil {
		t.Fatal("New accepted negative MaxPool and QueryDelay")
	}
	for _, want := range []string{"MaxPool -1", "QueryDelay -1s", "in-memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
