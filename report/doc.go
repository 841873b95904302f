// Package report presents what analyze computed: terminal tables, Markdown in
// the article's report template, a self-contained HTML page and plots. It
// computes no statistics of its own.
package report
