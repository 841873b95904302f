package scenario

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder walks a yaml.Node tree by hand, so that every problem carries the
// line and key it comes from and all of them are reported, not the first.
type decoder struct {
	cfg  *Config
	errs []error
}

// fail records a problem at node n, written under key path key.
func (d *decoder) fail(n *yaml.Node, key, format string, args ...any) {
	e := &Error{Source: d.cfg.Source, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// mark remembers where key was written, for Validate's errors.
func (d *decoder) mark(n *yaml.Node, key string) {
	d.cfg.origins[key] = origin{line: n.Line, col: n.Column}
}

// usable rejects aliases (they would let a small file expand without bound)
// and null values.
func (d *decoder) usable(n *yaml.Node, key string) bool {
	switch {
	case n.Kind == yaml.AliasNode:
		d.fail(n, key, "aliases (*%s) are not supported; write the value out", n.Value)
		return false
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		d.fail(n, key, "has no value; give one or delete the key")
		return false
	}
	return true
}

// fields walks mapping n. Keys not in known are reported with the closest
// known key; each known key is handed to set once.
func (d *decoder) fields(n *yaml.Node, key string, known []string, set func(k string, v *yaml.Node)) {
	d.fieldsHint(n, key, known, nil, set)
}

// fieldsHint is fields with hint, when not nil, explaining an unknown key
// better than a list of the known ones ("" when it cannot).
func (d *decoder) fieldsHint(n *yaml.Node, key string, known []string, hint func(string) string, set func(k string, v *yaml.Node)) {
	if !d.usable(n, key) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, key, "want a mapping of %s, got %s", strings.Join(known, ", "), kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		k := kn.Value
		path := join(key, k)
		switch {
		case kn.Kind != yaml.ScalarNode:
			d.fail(kn, key, "keys must be plain names")
		case seen[k]:
			d.fail(kn, path, "given twice; keep one")
		case !contains(known, k) && hint != nil && hint(k) != "":
			d.fail(kn, path, "%s", hint(k))
		case !contains(known, k):
			d.fail(kn, path, "unknown key%s", suggest(k, known))
		default:
			seen[k] = true
			d.mark(kn, path)
			if d.usable(vn, path) {
				set(k, vn)
			}
		}
	}
}

// entries walks a mapping with free-form keys (scenario names, tags, vars).
func (d *decoder) entries(n *yaml.Node, key, what string, each func(k string, kn, vn *yaml.Node)) {
	if !d.usable(n, key) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, key, "want a mapping of %s, got %s", what, kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		path := join(key, kn.Value)
		switch {
		case kn.Kind != yaml.ScalarNode:
			d.fail(kn, key, "keys must be plain names")
		case seen[kn.Value]:
			d.fail(kn, path, "given twice; keep one")
		default:
			seen[kn.Value] = true
			d.mark(kn, path)
			if d.usable(vn, path) {
				each(kn.Value, kn, vn)
			}
		}
	}
}

// items walks a sequence.
func (d *decoder) items(n *yaml.Node, key, what string, each func(path string, vn *yaml.Node)) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, key, "want a list of %s, got %s", what, kindName(n))
		return
	}
	for i, vn := range n.Content {
		path := fmt.Sprintf("%s[%d]", key, i)
		d.mark(vn, path)
		if d.usable(vn, path) {
			each(path, vn)
		}
	}
}

func (d *decoder) scalar(n *yaml.Node, key, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, key, "want %s, got %s", want, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) str(n *yaml.Node, key string) string {
	s, _ := d.scalar(n, key, "a string")
	return s
}

func (d *decoder) float(n *yaml.Node, key string) float64 {
	s, ok := d.scalar(n, key, "a number")
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || n.Tag == "!!str" || math.IsNaN(f) || math.IsInf(f, 0) {
		d.fail(n, key, "want a number, got %q", s)
		return 0
	}
	return f
}

func (d *decoder) int(n *yaml.Node, key string) int {
	s, ok := d.scalar(n, key, "a whole number")
	if !ok {
		return 0
	}
	i, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n.Tag == "!!str" {
		d.fail(n, key, "want a whole number, got %q", s)
		return 0
	}
	return int(i)
}

func (d *decoder) uint64(n *yaml.Node, key string) uint64 {
	s, ok := d.scalar(n, key, "a whole number")
	if !ok {
		return 0
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n.Tag == "!!str" {
		d.fail(n, key, "want a whole number from 0 to %d, got %q", uint64(math.MaxUint64), s)
		return 0
	}
	return u
}

func (d *decoder) bool(n *yaml.Node, key string) bool {
	s, ok := d.scalar(n, key, "true or false")
	if !ok {
		return false
	}
	if n.Tag != "!!bool" {
		d.fail(n, key, "want true or false, got %q", s)
		return false
	}
	return s == "true" || s == "True" || s == "TRUE"
}

// duration accepts Go's syntax ("100ms", "1m30s") and a bare 0.
func (d *decoder) duration(n *yaml.Node, key string) time.Duration {
	s, ok := d.scalar(n, key, "a duration such as 30s")
	if !ok {
		return 0
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.fail(n, key, "%q is not a duration; use a number with a unit, e.g. 100ms, 30s, 1m30s", s)
		return 0
	}
	return v
}

func (d *decoder) strMap(n *yaml.Node, key string) map[string]string {
	m := map[string]string{}
	d.entries(n, key, "names to strings", func(k string, _, vn *yaml.Node) {
		m[k] = d.str(vn, join(key, k))
	})
	return m
}

func (d *decoder) strList(n *yaml.Node, key, what string) []string {
	var out []string
	d.items(n, key, what, func(path string, vn *yaml.Node) {
		out = append(out, d.str(vn, path))
	})
	return out
}

func join(key, k string) string {
	if key == "" {
		return k
	}
	return key + "." + k
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "something else"
}

// suggest names the known key closest to k, when one is close enough to be
// a typo, else lists them all.
func suggest(k string, known []string) string {
	best, bestDist := "", 3
	for _, c := range known {
		if dist := editDistance(strings.ToLower(k), strings.ToLower(c)); dist < bestDist {
			best, bestDist = c, dist
		}
	}
	if best != "" {
		return fmt.Sprintf("; did you mean %s?", best)
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	return "; known keys here: " + strings.Join(sorted, ", ")
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
