package bookstore

import (
	"slices"
	"testing"
)

// validISBN13 checks an ISBN-13 the way the standard states it: the digits
// weighted 1,3,1,3,... sum to a multiple of 10.
func validISBN13(s string) bool {
	if len(s) != 13 {
		return false
	}
	sum := 0
	for i, c := range s {
		if c < '0' || c > '9' {
			return false
		}
		w := 1
		if i%2 == 1 {
			w = 3
		}
		sum += w * int(c-'0')
	}
	return sum%10 == 0
}

func TestSeedCatalogue(t *testing.T) {
	books := seedCatalogue()
	if len(books) != SeedBooks || SeedBooks < 10_000 {
		t.Fatalf("seed has %d books, want SeedBooks = %d >= 10000", len(books), SeedBooks)
	}
	want := []string{"9780441172719", "9780261102217", "9780141439587", "9780451524935", "9780060850524"}
	if got := ArticleISBNs(); !slices.Equal(got, want) {
		t.Errorf("ArticleISBNs = %v, want %v", got, want)
	}
	seen := map[string]bool{}
	for i, b := range books {
		switch {
		case seen[b.isbn]:
			t.Fatalf("row %d: duplicate ISBN %s", i, b.isbn)
		case !validISBN13(b.isbn):
			t.Fatalf("row %d: invalid ISBN-13 %q", i, b.isbn)
		case b.title == "" || b.author == "":
			t.Fatalf("row %d: empty title or author: %+v", i, b)
		case b.stock < 0 || b.priceCents < 499 || b.priceCents > 4899 || b.priceCents%100 != 99:
			t.Fatalf("row %d: stock or price out of range: %+v", i, b)
		}
		seen[b.isbn] = true
	}
	for i, isbn := range want {
		if books[i].isbn != isbn || books[i].stock == 0 {
			t.Errorf("row %d = %+v, want %s with stock", i, books[i], isbn)
		}
	}
	if !slices.Equal(SeedISBNs()[:5], want) || len(SeedISBNs()) != SeedBooks {
		t.Errorf("SeedISBNs does not start with the article's five or has the wrong length")
	}
	if again := seedCatalogue(); !slices.Equal(books, again) {
		t.Error("seedCatalogue is not deterministic")
	}
}

func TestSplitmix64(t *testing.T) {
	// Reference outputs of splitmix64 seeded with 0 (Vigna's splitmix64.c):
	// the generator's state steps by the golden gamma before each mix.
	const gamma = 0x9e3779b97f4a7c15
	tests := []struct {
		state uint64
		want  uint64
	}{
		{0, 0xe220a8397b1dcdaf},
		{gamma, 0x6e789e6aa1b965f4},
		{0x3c6ef372fe94f82a, 0x06c45d188009454f}, // 2*gamma mod 2^64
	}
	for _, tt := range tests {
		if got := splitmix64(tt.state); got != tt.want {
			t.Errorf("splitmix64(%#x) = %#x, want %#x", tt.state, got, tt.want)
		}
	}
}
