package bookstore

import "fmt"

// SeedBooks is how many books a freshly seeded store holds.
const SeedBooks = 10_000

// Book is one row of the catalogue, as the API returns it.
type Book struct {
	ISBN   string  `json:"isbn"`
	Title  string  `json:"title"`
	Author string  `json:"author"`
	Year   int     `json:"year"`
	Price  float64 `json:"price"`
	Stock  int     `json:"stock"`
}

// seedBook is a Book with its price in cents, as stored: money is never a
// float in the database.
type seedBook struct {
	isbn, title, author string
	year, priceCents    int
	stock               int
}

// book converts a stored row to the API's shape.
func (b seedBook) book() Book {
	return Book{
		ISBN: b.isbn, Title: b.title, Author: b.author, Year: b.year,
		Price: float64(b.priceCents) / 100, Stock: b.stock,
	}
}

// classics are the five ISBNs the reference article's load scripts request.
func classics() []seedBook {
	return []seedBook{
		{"9780441172719", "Dune", "Frank Herbert", 1965, 999, 1000},
		{"9780261102217", "The Hobbit", "J. R. R. Tolkien", 1937, 899, 800},
		{"9780141439587", "Emma", "Jane Austen", 1815, 699, 600},
		{"9780451524935", "Nineteen Eighty-Four", "George Orwell", 1949, 799, 400},
		{"9780060850524", "Brave New World", "Aldous Huxley", 1932, 1099, 200},
	}
}

// ArticleISBNs returns the five ISBNs the reference article's k6 scripts
// request, all of them seeded with stock.
func ArticleISBNs() []string {
	c := classics()
	out := make([]string, len(c))
	for i, b := range c {
		out[i] = b.isbn
	}
	return out
}

// SeedISBNs returns every seeded ISBN in seed order, the article's five
// first: a realistic {isbn} list for request templates.
func SeedISBNs() []string {
	books := seedCatalogue()
	out := make([]string, len(books))
	for i, b := range books {
		out[i] = b.isbn
	}
	return out
}

// wordLists are the words generated titles and authors are made of. None of
// them contains a classic's title or author, so a search for "dune" or
// "orwell" finds only the classic.
type wordLists struct {
	adjectives, nouns, places, firstNames, lastNames []string
}

func newWordLists() wordLists {
	return wordLists{
		adjectives: []string{
			"Silent", "Crimson", "Hidden", "Broken", "Golden", "Last", "Secret", "Quiet",
			"Wandering", "Frozen", "Burning", "Lost", "Distant", "Bitter", "Gentle", "Iron",
			"Paper", "Glass", "Winter", "Summer", "Midnight", "Northern", "Shallow", "Endless",
		},
		nouns: []string{
			"Garden", "River", "Kingdom", "Letter", "Harbor", "Mirror", "Forest", "Engine",
			"Orchard", "Lantern", "Compass", "Island", "Station", "Library", "Bridge", "Voyage",
			"Cathedral", "Meadow", "Archive", "Tide", "Signal", "Atlas", "Citadel", "Ember",
		},
		places: []string{
			"the North", "Tomorrow", "the Deep", "Salt", "Ashes", "the Valley", "Stars",
			"the Old Town", "Rain", "the Coast", "Smoke", "the Empire",
		},
		firstNames: []string{
			"Ada", "Bruno", "Clara", "Dmitri", "Elif", "Farid", "Greta", "Hiro", "Ines",
			"Jonas", "Kemal", "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quentin", "Rosa",
			"Selim", "Tove", "Ugo", "Vera", "Wen", "Yara", "Zeynep",
		},
		lastNames: []string{
			"Albright", "Baptiste", "Castellano", "Demir", "Eriksen", "Fontaine", "Gallagher",
			"Hartmann", "Ivanova", "Jensen", "Kowalski", "Lindqvist", "Moreau", "Novak",
			"Okafor", "Petrov", "Quinlan", "Rossi", "Sandoval", "Takahashi", "Ueda",
			"Vasquez", "Whitfield", "Yilmaz", "Zimmermann",
		},
	}
}

// seedCatalogue returns the SeedBooks books of a fresh store: the article's
// five classics, then generated books. The same on every call, machine and
// Go version: the generator is splitmix64 of the row number, nothing else.
func seedCatalogue() []seedBook {
	books := classics()
	words := newWordLists()
	for i := 0; len(books) < SeedBooks; i++ {
		books = append(books, generatedBook(words, i))
	}
	return books
}

// generatedBook is row i of the generated catalogue. ISBNs use the 979
// prefix, so they never collide with the classics' 978.
func generatedBook(w wordLists, i int) seedBook {
	r := splitmix64(uint64(i))
	pick := func(n int) int { // consumes r a digit of base n at a time
		v := int(r % uint64(n))
		r /= uint64(n)
		return v
	}
	title := w.adjectives[pick(len(w.adjectives))] + " " + w.nouns[pick(len(w.nouns))]
	if place := pick(2 * len(w.places)); place < len(w.places) {
		title = "The " + title + " of " + w.places[place]
	}
	author := w.firstNames[pick(len(w.firstNames))] + " " + w.lastNames[pick(len(w.lastNames))]
	return seedBook{
		isbn:       withCheckDigit(fmt.Sprintf("979%09d", 100_000_000+i)),
		title:      title,
		author:     author,
		year:       1850 + pick(175),
		priceCents: (4+pick(45))*100 + 99, // 4.99 .. 48.99
		stock:      pick(200),             // 0 .. 199: some books are sold out
	}
}

// splitmix64 is Steele, Lea and Flood's 64-bit mixer: a fixed, portable
// function of its input, unlike math/rand whose streams may change.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
