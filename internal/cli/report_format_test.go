package cli

import "testing"

// A report's format follows --out's name unless --format is given, and a
// --format that contradicts the name is refused (a new user's report.html
// held Markdown, the default format).
func TestReportFormat(t *testing.T) {
	for _, c := range []struct {
		format string
		set    bool
		out    string
		want   string // "" : refused
	}{
		{"md", false, "report.html", "html"},
		{"md", false, "REPORT.HTM", "html"},
		{"md", false, "report.md", "md"},
		{"md", false, "", "md"},
		{"md", false, "report.txt", "md"},
		{"html", true, "", "html"},
		{"html", true, "report.html", "html"},
		{"md", true, "report.md", "md"},
		{"md", true, "report.html", ""},
		{"html", true, "notes.md", ""},
		{"pdf", true, "", ""},
	} {
		got, err := reportFormat(c.format, c.set, c.out)
		if c.want == "" {
			if err == nil {
				t.Errorf("--format %s (given %v) --out %q: %s, want a refusal", c.format, c.set, c.out, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("--format %s (given %v) --out %q: %q, %v; want %q", c.format, c.set, c.out, got, err, c.want)
		}
	}
}
