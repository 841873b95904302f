// Package textwrap breaks a line of text into rows that fit a terminal's
// width, at spaces. It is the one word-wrap of what knee prints to a
// terminal: package report's text and tables, and the runner's messages
// between its progress redraws. Which width applies is the caller's: the
// terminal's columns come in through internal/cli's Env.
package textwrap

import (
	"strings"
	"unicode/utf8"
)

// Line breaks line into rows of at most width columns (runes) at spaces;
// every row after the first starts with indent spaces. A word longer than a
// row is cut rather than let overflow. width <= 0, or a line that fits,
// gives the line itself.
func Line(line string, width, indent int) []string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return []string{line}
	}
	indent = min(max(indent, 0), width-1)
	var rows []string
	rest := line
	for utf8.RuneCountInString(rest) > width {
		r := []rune(rest)
		cut := -1
		for i := width; i > indent; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		if cut < 0 { // one word longer than the row: break it rather than overflow
			cut = width
		}
		rows = append(rows, strings.TrimRight(string(r[:cut]), " "))
		rest = strings.Repeat(" ", indent) + strings.TrimLeft(string(r[cut:]), " ")
	}
	return append(rows, rest)
}
