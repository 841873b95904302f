package bookstore

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestParseISBN(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"9780441172719", "9780441172719", true},
		{"0441172717", "9780441172719", true}, // Dune's ISBN-10
		{"0261102214", "9780261102217", true}, // The Hobbit's ISBN-10
		{"0451524934", "9780451524935", true}, // Nineteen Eighty-Four's ISBN-10
		{"080442957X", "9780804429573", true}, // an ISBN-10 whose check digit is X
		{"080442957x", "9780804429573", true},
		{"9790000000001", "9790000000001", true}, // shape only: any 13 digits
		{"", "", false},
		{"044117271", "", false},
		{"04411727177", "", false},
		{"X441172717", "", false},
		{"978044117271X", "", false},
		{"978-0441172719", "", false},
		{"٠١٢٣٤٥٦٧٨٩", "", false}, // Arabic-Indic digits are not ISBN digits
	}
	for _, tt := range tests {
		got, err := parseISBN(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseISBN(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseISBN(f *testing.F) {
	for _, s := range []string{"9780441172719", "0441172717", "080442957X", "", "978-0441172719"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseISBN(s)
		if err != nil {
			return
		}
		if len(s) == 13 && got != s {
			t.Fatalf("parseISBN(%q) = %q, changed an ISBN-13", s, got)
		}
		if len(s) == 10 && !validISBN13(got) {
			t.Fatalf("parseISBN(%q) = %q, not a valid ISBN-13", s, got)
		}
		if again, err := parseISBN(got); err != nil || again != got {
			t.Fatalf("parseISBN is not idempotent on %q: %q, %v", got, again, err)
		}
	})
}

func FuzzDecodeOrder(f *testing.F) {
	for _, s := range []string{
		`{"isbn":"9780441172719","quantity":1}`, `{"isbn":"0441172717","quantity":1000}`,
		`{"isbn":1}`, `{}`, `[]`, `{"isbn":"9780441172719","quantity":1}{}`, `{"quantity":1e3}`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req, err := decodeOrder(strings.NewReader(body))
		if err != nil {
			return
		}
		if !validShape(req.ISBN) || req.Quantity < 1 || req.Quantity > MaxOrderAmount {
			t.Fatalf("accepted %q as %+v", body, req)
		}
		// Whatever was accepted is one JSON object.
		var v map[string]any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("accepted %q, which is not one JSON object: %v", body, err)
		}
	})
}

func validShape(isbn string) bool {
	return len(isbn) == 13 && strings.Trim(isbn, "0123456789") == ""
}

// FuzzSearch drives arbitrary q and page values through the real handler and
// SQLite: the answer is 200 or 400, never a 500 from a query the escaping
// broke, and every book found contains q.
func FuzzSearch(f *testing.F) {
	s := newTestServer(f, Options{CacheTTL: -1})
	for _, q := range []string{"dune", "%", "_", `\`, "'; DROP TABLE books; --", "ß", "the"} {
		f.Add(q, "1")
	}
	f.Add("", "0")
	f.Add("a", "-1")
	f.Fuzz(func(t *testing.T, q, page string) {
		target := "/api/books?" + url.Values{"q": {q}, "page": {page}}.Encode()
		got := do(t, s, "GET", target, "")
		switch got.code {
		case 400:
			return
		case 200:
		default:
			t.Fatalf("%s = %d %s", target, got.code, got.body)
		}
		var res SearchPage
		if err := json.Unmarshal([]byte(got.body), &res); err != nil {
			t.Fatal(err)
		}
		lq := strings.ToLower(q)
		for _, b := range res.Books {
			if !strings.Contains(strings.ToLower(b.Title), lq) && !strings.Contains(strings.ToLower(b.Author), lq) {
				t.Fatalf("q %q found %+v", q, b)
			}
		}
	})
}
