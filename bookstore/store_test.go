package bookstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestSeededStoreHoldsTheCatalogue(t *testing.T) {
	forEachStore(t, Options{}, func(t *testing.T, s *Server) {
		var n int
		if err := s.store.db.QueryRow(`SELECT count(*) FROM books`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != SeedBooks {
			t.Errorf("books = %d, want %d", n, SeedBooks)
		}
		for _, isbn := range ArticleISBNs() {
			if got := do(t, s, "GET", "/api/books/"+isbn, ""); got.code != 200 {
				t.Errorf("GET %s = %d %s", isbn, got.code, got.body)
			}
		}
	})
}

func TestOrdersDecrementStockUntilOutOfStock(t *testing.T) {
	forEachStore(t, Options{}, func(t *testing.T, s *Server) {
		run := 0
		stock := func() string { // bypasses the cache with a fresh query string
			run++
			return do(t, s, "GET", fmt.Sprintf("/api/books/%s?run=%d", braveISBN, run), "").body
		}
		order := func(q int) response {
			return do(t, s, "POST", "/api/orders", fmt.Sprintf(`{"isbn":%q,"quantity":%d}`, braveISBN, q))
		}
		steps := []struct {
			quantity  int
			wantCode  int
			wantBody  string
			wantStock int
		}{
			{150, 201, `{"id":1,"isbn":"9780060850524","quantity":150,"stock":50}`, 50},
			{51, 409, `{"error":"out of stock: 50 of 9780060850524 left, 51 requested"}`, 50},
			{50, 201, `{"id":2,"isbn":"9780060850524","quantity":50,"stock":0}`, 0},
			{1, 409, `{"error":"out of stock: 0 of 9780060850524 left, 1 requested"}`, 0},
		}
		for i, st := range steps {
			got := order(st.quantity)
			if got.code != st.wantCode {
				t.Fatalf("step %d: status %d, want %d: %s", i, got.code, st.wantCode, got.body)
			}
			wantJSON(t, got.body, st.wantBody)
			wantJSON(t, stock(), fmt.Sprintf(
				`{"isbn":"9780060850524","title":"Brave New World","author":"Aldous Huxley","year":1932,"price":10.99,"stock":%d}`,
				st.wantStock))
		}
		// Reset puts back the stock and restarts order ids.
		if err := s.Reset(context.Background()); err != nil {
			t.Fatal(err)
		}
		wantJSON(t, order(1).body, `{"id":1,"isbn":"9780060850524","quantity":1,"stock":199}`)
	})
}

func TestConcurrentOrdersNeverOversell(t *testing.T) {
	// 20 buyers want 15 copies each of a book with 200: exactly 13 orders
	// (195 copies) fit, 7 must get 409, and 5 copies remain.
	forEachStore(t, Options{}, func(t *testing.T, s *Server) {
		var wg sync.WaitGroup
		codes := make([]int, 20)
		for i := range codes {
			wg.Go(func() {
				codes[i] = do(t, s, "POST", "/api/orders", `{"isbn":"`+braveISBN+`","quantity":15}`).code
			})
		}
		wg.Wait()
		count := map[int]int{}
		for _, c := range codes {
			count[c]++
		}
		if count[201] != 13 || count[409] != 7 {
			t.Errorf("statuses %v, want 13×201 and 7×409", count)
		}
		var stock int
		if err := s.store.db.QueryRow(s.store.d.rebind(`SELECT stock FROM books WHERE isbn = $1`), braveISBN).Scan(&stock); err != nil {
			t.Fatal(err)
		}
		if stock != 5 {
			t.Errorf("stock = %d, want 5", stock)
		}
	})
}

// expectedSearch is the oracle for search: the seed filtered and sorted in
// plain Go, independently of the SQL.
func expectedSearch(q string) []seedBook {
	q = strings.ToLower(q)
	var hits []seedBook
	for _, b := range seedCatalogue() {
		if strings.Contains(strings.ToLower(b.title), q) || strings.Contains(strings.ToLower(b.author), q) {
			hits = append(hits, b)
		}
	}
	rank := func(b seedBook) int {
		if strings.HasPrefix(strings.ToLower(b.title), q) || strings.HasPrefix(strings.ToLower(b.author), q) {
			return 0
		}
		return 1
	}
	slices.SortFunc(hits, func(a, b seedBook) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.title, b.title), strings.Compare(a.isbn, b.isbn))
	})
	return hits
}

func TestSearchPagesMatchTheSeed(t *testing.T) {
	forEachStore(t, Options{}, func(t *testing.T, s *Server) {
		for _, q := range []string{"", "the", "Ada", "ember", "rossi", "of salt"} {
			want := expectedSearch(q)
			lastPage := (len(want) + PageSize - 1) / PageSize
			for _, page := range []int{1, 2, lastPage, lastPage + 1} {
				if page < 1 {
					continue
				}
				target := fmt.Sprintf("/api/books?q=%s&page=%d", url.QueryEscape(q), page)
				got := do(t, s, "GET", target, "")
				var res SearchPage
				if err := json.Unmarshal([]byte(got.body), &res); err != nil || got.code != 200 {
					t.Fatalf("%s: %d %v %s", target, got.code, err, got.body)
				}
				from, to := min((page-1)*PageSize, len(want)), min(page*PageSize, len(want))
				var wantISBNs, gotISBNs []string
				for _, b := range want[from:to] {
					wantISBNs = append(wantISBNs, b.isbn)
				}
				for _, b := range res.Books {
					gotISBNs = append(gotISBNs, b.ISBN)
				}
				if res.Total != len(want) || !slices.Equal(gotISBNs, wantISBNs) {
					t.Errorf("%s: total %d, isbns %v; want total %d, isbns %v",
						target, res.Total, gotISBNs, len(want), wantISBNs)
				}
			}
		}
	})
}
