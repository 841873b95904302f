package request

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Sentinel problems a TemplateError wraps; test with errors.Is.
var (
	ErrUnknownPlaceholder = errors.New("unknown placeholder")
	ErrUnclosedBrace      = errors.New("unclosed brace")
	ErrBadPlaceholder     = errors.New("malformed placeholder")
)

// Reserved placeholder names: they are filled from the iteration, not from Vars.
const (
	PlaceholderVU   = "vu"
	PlaceholderIter = "iter"
)

// TemplateError is a template that does not parse. It says where and how to fix it.
type TemplateError struct {
	Text   string // the template
	Offset int    // byte offset of the problem in Text
	Kind   error  // ErrUnknownPlaceholder, ErrUnclosedBrace or ErrBadPlaceholder
	Detail string // what exactly is wrong
	Fix    string // how to fix it
}

// Column is the 1-based column (in runes) of the problem.
func (e *TemplateError) Column() int {
	return utf8.RuneCountInString(e.Text[:min(e.Offset, len(e.Text))]) + 1
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("%s at column %d of %s: %s; %s", e.Kind, e.Column(), excerpt(e.Text, e.Offset), e.Detail, e.Fix)
}

// Unwrap returns Kind.
func (e *TemplateError) Unwrap() error { return e.Kind }

// excerpt quotes text, shortened around off when it is long (bodies can be).
func excerpt(text string, off int) string {
	const span = 30
	if len(text) <= 2*span+10 {
		return strconv.Quote(text)
	}
	from, to := max(off-span, 0), min(off+span, len(text))
	for from > 0 && !utf8.RuneStart(text[from]) {
		from--
	}
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to++
	}
	s := strconv.Quote(text[from:to])
	if from > 0 {
		s = "…" + s
	}
	if to < len(text) {
		s += "…"
	}
	return s
}

// Vars are the value lists that {name} placeholders draw from.
// Build them with NewVars; a nil *Vars has no variables.
type Vars struct {
	names  []string // sorted
	index  map[string]int
	values [][]string
	salts  []uint64 // per variable, from its name, so adding a variable never changes another's picks
}

// NewVars checks and compiles value lists: every name is a valid placeholder
// name other than vu and iter, and every list has at least one value.
func NewVars(lists map[string][]string) (*Vars, error) {
	v := &Vars{index: make(map[string]int, len(lists))}
	for name := range lists {
		v.names = append(v.names, name)
	}
	sort.Strings(v.names)
	var errs []error
	for i, name := range v.names {
		if err := checkVarName(name); err != nil {
			errs = append(errs, err)
		}
		if len(lists[name]) == 0 {
			errs = append(errs, fmt.Errorf("variable %q has no values; give at least one, e.g. --var %s=a,b", name, name))
		}
		v.index[name] = i
		v.values = append(v.values, lists[name])
		h := fnv.New64a()
		h.Write([]byte(name))
		v.salts = append(v.salts, h.Sum64())
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return v, nil
}

// Names are the variable names, sorted.
func (v *Vars) Names() []string {
	if v == nil {
		return nil
	}
	return append([]string(nil), v.names...)
}

func checkVarName(name string) error {
	switch {
	case name == PlaceholderVU || name == PlaceholderIter:
		return fmt.Errorf("variable name %q is reserved for the %s number; rename the variable", name, name)
	case name == "" || !isNameStart(name[0]):
		return fmt.Errorf("variable name %q must start with a letter or _", name)
	}
	for i := 1; i < len(name); i++ {
		if !isNameChar(name[i]) {
			return fmt.Errorf("variable name %q may hold only letters, digits and _", name)
		}
	}
	return nil
}

func isNameStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isNameChar(c byte) bool { return isNameStart(c) || '0' <= c && c <= '9' }

type segKind uint8

const (
	segLiteral segKind = iota
	segVU
	segIter
	segVar
)

type segment struct {
	kind segKind
	lit  string // segLiteral
	v    int    // segVar: index into Vars
}

// Template is a parsed template: literal text and placeholders. The zero
// value renders as the empty string.
type Template struct {
	text string
	segs []segment
}

// ParseTemplate parses text once, up front. Every {name} must be vu, iter or
// a variable of vars (which may be nil).
func ParseTemplate(text string, vars *Vars) (Template, error) {
	t := Template{text: text}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.segs = append(t.segs, segment{kind: segLiteral, lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c != '{' {
			j := i + 1
			for j < len(text) && text[j] != '{' {
				j++
			}
			lit.WriteString(text[i:j])
			i = j
			continue
		}
		switch {
		case i+1 == len(text):
			return Template{}, &TemplateError{Text: text, Offset: i, Kind: ErrUnclosedBrace,
				Detail: "the template ends with '{'", Fix: "write {{ for a literal '{' or close the placeholder with }"}
		case text[i+1] == '{':
			lit.WriteByte('{')
			i += 2
			continue
		case !isNameStart(text[i+1]):
			lit.WriteByte('{') // JSON and the like: '{' not followed by a name is literal
			i++
			continue
		}
		seg, next, err := parsePlaceholder(text, i, vars)
		if err != nil {
			return Template{}, err
		}
		flush()
		t.segs = append(t.segs, seg)
		i = next
	}
	flush()
	return t, nil
}

// parsePlaceholder parses the placeholder whose '{' is at text[open].
func parsePlaceholder(text string, open int, vars *Vars) (segment, int, error) {
	j := open + 1
	for j < len(text) && isNameChar(text[j]) {
		j++
	}
	name := text[open+1 : j]
	if j == len(text) {
		return segment{}, 0, &TemplateError{Text: text, Offset: open, Kind: ErrUnclosedBrace,
			Detail: fmt.Sprintf("{%s is never closed", name), Fix: fmt.Sprintf("write {%s} or {{ for a literal '{'", name)}
	}
	if text[j] != '}' {
		r, _ := utf8.DecodeRuneInString(text[j:])
		return segment{}, 0, &TemplateError{Text: text, Offset: j, Kind: ErrBadPlaceholder,
			Detail: fmt.Sprintf("%q cannot appear in placeholder {%s", r, name),
			Fix:    "names hold only letters, digits and _; write {{ for a literal '{'"}
	}
	switch name {
	case PlaceholderVU:
		return segment{kind: segVU}, j + 1, nil
	case PlaceholderIter:
		return segment{kind: segIter}, j + 1, nil
	}
	if vars != nil {
		if v, ok := vars.index[name]; ok {
			return segment{kind: segVar, v: v}, j + 1, nil
		}
	}
	fix := fmt.Sprintf("add --var %s=v1,v2 (or vars: {%s: [v1, v2]} in the scenario file)", name, name)
	if names := vars.Names(); len(names) > 0 {
		fix += "; known variables: " + strings.Join(names, ", ")
	}
	return segment{}, 0, &TemplateError{Text: text, Offset: open, Kind: ErrUnknownPlaceholder,
		Detail: fmt.Sprintf("{%s} is neither {vu}, {iter} nor a variable", name), Fix: fix}
}

// Text is the template as written.
func (t Template) Text() string { return t.text }

// Static reports whether t has no placeholders, so it renders the same every time.
func (t Template) Static() bool {
	for _, s := range t.segs {
		if s.kind != segLiteral {
			return false
		}
	}
	return true
}

// Append renders t for iteration iter of VU vu and appends it to dst.
// vars must be the Vars t was parsed with.
func (t Template) Append(dst []byte, vars *Vars, seed, vu, iter uint64) []byte {
	for _, s := range t.segs {
		switch s.kind {
		case segLiteral:
			dst = append(dst, s.lit...)
		case segVU:
			dst = strconv.AppendUint(dst, vu, 10)
		case segIter:
			dst = strconv.AppendUint(dst, iter, 10)
		case segVar:
			dst = append(dst, vars.value(s.v, seed, vu, iter)...)
		}
	}
	return dst
}

// Render is Append into a new string.
func (t Template) Render(vars *Vars, seed, vu, iter uint64) string {
	return string(t.Append(nil, vars, seed, vu, iter))
}

// value is variable v's value for (seed, vu, iter).
func (v *Vars) value(i int, seed, vu, iter uint64) string {
	vals := v.values[i]
	return vals[pick(seed^v.salts[i], vu, iter, len(vals))]
}
