package record

import (
	"fmt"
	"sync"
)

// DefaultMaxSeries is how many names a run or an import keeps apart (request
// names per scenario, and Trend names); the names past it are folded into
// OtherName. One series costs a few histograms, so a script that names each
// request by its unique URL would otherwise grow without bound.
const DefaultMaxSeries = 200

// OtherName is the name folded series are recorded under.
const OtherName = "(other)"

// SeriesCap is the one rule by which live runs and imports fold names: the
// first max distinct names are kept, each later new name becomes OtherName.
// Safe for concurrent use.
type SeriesCap struct {
	mu     sync.Mutex
	max    int // <= 0: no cap
	names  map[Key]struct{}
	folded int64  // values recorded under OtherName in place of their own name
	first  string // the first name folded
}

// NewSeriesCap keeps max names apart (<= 0: every name).
func NewSeriesCap(max int) *SeriesCap {
	return &SeriesCap{max: max, names: map[Key]struct{}{}}
}

// Name is name, or OtherName when name is new and max names are known. A
// request name and a Trend name of the same text are two names (k.Metric:
// "" for requests, Trend for Trends).
func (c *SeriesCap) Name(k Key) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.names[k]; ok || k.Name == OtherName {
		return k.Name
	}
	if c.max > 0 && len(c.names) >= c.max {
		c.folded++
		if c.first == "" {
			c.first = k.Name
		}
		return OtherName
	}
	c.names[k] = struct{}{}
	return k.Name
}

// Folded is how many values were folded into OtherName, and the first name folded.
func (c *SeriesCap) Folded() (n int64, first string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.folded, c.first
}

// Note is the warning for a run or an import that folded names ("" if none).
func (c *SeriesCap) Note() string {
	n, first := c.Folded()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("more than %d distinct request or metric names: %d values from %q on were recorded as %q; "+
		"a k6 script that puts ids in URLs should name such requests with a tag, e.g. "+
		"http.get(url, {tags: {name: 'GET /item/{id}'}})", c.max, n, first, OtherName)
}
