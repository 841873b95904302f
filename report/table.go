package report

import (
	"bytes"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/knee-dev/knee/internal/textwrap"
)

// Fit returns w for terminal tables that must fit width columns: every
// table this package prints to it is narrowed to width (cells wrapped,
// columns kept). width <= 0 returns w itself: tables keep their full width,
// as they must when the output is a file or a pipe.
func Fit(w io.Writer, width int) io.Writer {
	if width <= 0 {
		return w
	}
	return fitWriter{Writer: w, width: width}
}

// fitWriter is a writer that knows the width of the terminal behind it.
type fitWriter struct {
	io.Writer
	width int
}

// widthOf is the width tables written to w must fit; 0 for no limit.
func widthOf(w io.Writer) int {
	if f, ok := w.(fitWriter); ok {
		return f.width
	}
	return 0
}

// table is a terminal table: a header and rows of cells, laid out by
// text/tabwriter. Columns marked right are right-aligned (numbers).
type table struct {
	indent string
	header []string
	right  []bool
	rows   [][]string
}

// tablePadding is the space between two columns.
const tablePadding = 2

// minColumn is the narrowest a column is made to fit a terminal.
const minColumn = 6

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// fits reports whether t, laid out at full width, fits the width of w
// (widthOf): always when w has none. A table with a narrow form of its own
// asks this before it would otherwise be squeezed into broken words.
func (t *table) fits(w io.Writer) bool {
	limit := widthOf(w)
	if limit <= 0 {
		return true
	}
	n := len(t.header)
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	widths := make([]int, n)
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := utf8.RuneCountInString(t.indent) + tablePadding*max(n-1, 0)
	for _, wd := range widths {
		total += wd
	}
	return total <= limit
}

// write lays t out on w, fitted to w's width (widthOf): the widest columns
// give way first, and a cell longer than its column wraps onto
// continuation lines, at spaces where it can. Never a column is dropped.
func (t *table) write(w io.Writer) error {
	n := len(t.header)
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	widths, longestWord := make([]int, n), make([]int, n)
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
			for _, word := range strings.Fields(c) {
				longestWord[i] = max(longestWord[i], utf8.RuneCountInString(word))
			}
		}
	}
	if limit := widthOf(w); limit > 0 {
		fitWidths(widths, longestWord, limit-utf8.RuneCountInString(t.indent)-tablePadding*(n-1))
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, tablePadding, ' ', 0)
	p := &printer{w: tw}
	for ri, r := range append([][]string{t.header}, t.rows...) {
		if ri == 0 && len(r) == 0 {
			continue
		}
		lines := make([][]string, n)
		height := 1
		for i := range n {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			lines[i] = wrapCell(c, widths[i])
			height = max(height, len(lines[i]))
		}
		for l := range height {
			p.f("%s", t.indent)
			for i := range n {
				c := ""
				if l < len(lines[i]) {
					c = lines[i][l]
				}
				if i < len(t.right) && t.right[i] {
					c = strings.Repeat(" ", max(0, widths[i]-utf8.RuneCountInString(c))) + c
				}
				if i < n-1 {
					p.f("%s\t", c)
				} else {
					p.f("%s", strings.TrimRight(c, " "))
				}
			}
			p.f("\n")
		}
	}
	if p.err != nil {
		return p.err
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// tabwriter pads every cell but the last; a wrapped row's continuation
	// lines would end in spaces.
	out := &printer{w: w}
	for line := range strings.Lines(buf.String()) {
		out.f("%s\n", strings.TrimRight(line, " \n"))
	}
	return out.err
}

// fitWidths narrows columns until they add up to at most room: first the
// widest column that can still wrap between words (down to its longest
// word), then, if that is not enough, the widest one mid-word (down to
// minColumn, or its own width when that is less).
func fitWidths(widths, longestWord []int, room int) {
	total := 0
	for _, w := range widths {
		total += w
	}
	for _, floor := range []func(i int) int{
		func(i int) int { return max(longestWord[i], minColumn) },
		func(int) int { return minColumn },
	} {
		for total > room {
			widest := -1
			for i, w := range widths {
				if w > floor(i) && (widest < 0 || w > widths[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			widths[widest]--
			total--
		}
	}
}

// wrapCell cuts s into lines of at most width runes, at the last space
// that keeps a line within width, else mid-word.
func wrapCell(s string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var out []string
	r := []rune(s)
	for len(r) > width {
		cut := width
		for i := width; i > 0; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		out = append(out, strings.TrimRight(string(r[:cut]), " "))
		r = r[cut:]
		for len(r) > 0 && r[0] == ' ' {
			r = r[1:]
		}
	}
	if len(r) > 0 {
		out = append(out, string(r))
	}
	return out
}

// newPrinter is a printer of text lines for w: fitted to w's width (see
// Fit), a line longer than it wraps at spaces, its continuation indented to
// the value column of "  label      value" lines (valueColumn) or under the
// text after "WARNING: ", never cut mid-word.
func newPrinter(w io.Writer) *printer {
	if width := widthOf(w); width > 0 {
		return &printer{w: &lineWrapper{w: w, width: width}}
	}
	return &printer{w: w}
}

// Wrapped returns w for free text that must fit the width Fit gave it: each
// whole line written is wrapped at spaces (see newPrinter); w itself when it
// has no width (a file or a pipe).
func Wrapped(w io.Writer) io.Writer { return newPrinter(w).w }

// valueColumn is where the values of the summary's "  label   value" lines start.
const valueColumn = 22

// lineWrapper wraps each whole line written to it at width columns; a
// partial line waits for its newline.
type lineWrapper struct {
	w       io.Writer
	width   int
	pending []byte
}

func (l *lineWrapper) Write(b []byte) (int, error) {
	l.pending = append(l.pending, b...)
	for {
		i := bytes.IndexByte(l.pending, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(l.pending[:i])
		l.pending = l.pending[i+1:]
		if _, err := io.WriteString(l.w, wrapLine(line, l.width)+"\n"); err != nil {
			return 0, err
		}
	}
}

// wrapLine breaks line into rows of at most width columns at spaces.
func wrapLine(line string, width int) string {
	return strings.Join(textwrap.Line(line, width, continuationIndent(line)), "\n")
}

// continuationIndent is where a wrapped line's next rows start: under the
// value of a "  label   value" line, under the text of a warning, else two
// columns in from the line's own indent.
func continuationIndent(line string) int {
	trimmed := strings.TrimLeft(line, " ")
	lead := len(line) - len(trimmed)
	if k := strings.Index(trimmed, "WARNING: "); k == 0 {
		return lead + len("WARNING: ")
	}
	if r := []rune(line); len(r) > valueColumn && lead == 2 && r[valueColumn-1] == ' ' && r[valueColumn] != ' ' &&
		strings.Contains(string(r[2:valueColumn]), "  ") {
		return valueColumn
	}
	return lead + 2
}
