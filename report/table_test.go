package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/knee-dev/knee/use"
)

// A table fitted to 20 columns, worked by hand: "name" and "value" need 26
// and 5 characters plus 2 between them; 18 are left for the cells, so the
// first column narrows to 13 and its long cell wraps at the spaces that keep
// each line within 13: "a very long" / "cell text" / "here". The number
// column keeps its width and stays right-aligned.
func TestTableFitsTheWidth(t *testing.T) {
	tab := table{header: []string{"name", "value"}, right: []bool{false, true}}
	tab.add("a very long cell text here", "1")
	var b bytes.Buffer
	if err := tab.write(Fit(&b, 20)); err != nil {
		t.Fatal(err)
	}
	want := "name         value\n" +
		"a very long      1\n" +
		"cell text\n" +
		"here\n"
	if b.String() != want {
		t.Errorf("fitted to 20:\n%q\nwant\n%q", b.String(), want)
	}
	// Not a terminal: full width, one line per row.
	b.Reset()
	if err := tab.write(Fit(&b, 0)); err != nil {
		t.Fatal(err)
	}
	want = "name                        value\n" +
		"a very long cell text here      1\n"
	if b.String() != want {
		t.Errorf("full width:\n%q\nwant\n%q", b.String(), want)
	}
}

// wrapCell cuts at spaces where it can and mid-word where it must.
func TestWrapCell(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"µs and ms", 5, []string{"µs", "and", "ms"}},
		{"one two three", 7, []string{"one two", "three"}},
	} {
		got := wrapCell(tc.in, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrapCell(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// A USE table's evidence runs to ~200 characters a line. Fitted to an
// 80-column terminal every line fits, every column is still there, and no
// word of a cell is lost; written to a file it keeps one line per resource.
func TestUSETableFitsATerminal(t *testing.T) {
	long := "CPU 97 % of the 0.25 CPU limit, throttled in 38 of 40 periods, run queue 3.2 per CPU while requests waited in the accept queue"
	tab := use.Table{Label: "USE table", Rows: []use.Row{
		{Resource: use.TargetCPU, Utilization: use.Cell{Text: long}, Saturation: use.Cell{Text: long}, Errors: use.Cell{Text: "none"}},
		{Resource: use.Machine, Utilization: use.Cell{Text: "12 %"}},
	}}
	var full, fitted bytes.Buffer
	if err := USE(&full, tab); err != nil {
		t.Fatal(err)
	}
	if err := USE(Fit(&fitted, 80), tab); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(full.String(), "\n"); n != 4 {
		t.Errorf("full width: %d lines, want 4 (title, header, two rows):\n%s", n, full.String())
	}
	lines := strings.Split(strings.TrimSuffix(fitted.String(), "\n"), "\n")
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line of %d > 80 characters: %q", n, l)
		}
	}
	header := strings.Fields(lines[1])
	if strings.Join(header, " ") != "resource utilization saturation errors" {
		t.Errorf("header %q: a column was lost", lines[1])
	}
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if strings.Count(words(fitted.String()), "throttled") != 2 || !strings.Contains(words(fitted.String()), "accept") {
		t.Errorf("a cell lost words:\n%s", fitted.String())
	}
}
