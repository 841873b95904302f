package report

import (
	"bytes"
	"strings"
	"testing"
)

// Request names are user input: HTML in them reaches the Markdown table as
// entities (GitHub, GitLab and CommonMark show &lt;script&gt; as <script>,
// and run nothing), a pipe as \|.
func TestMarkdownEscapesNames(t *testing.T) {
	in := Input{Endpoints: []Endpoint{{Name: "<script>alert(1)</script>"}, {Name: `<img src=x onerror="alert(1)">|x`}}}
	var buf bytes.Buffer
	if err := Markdown(&buf, in); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if strings.Contains(md, "<script") || strings.Contains(md, "<img") {
		t.Errorf("HTML from a request name reached the Markdown:\n%s", md)
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `&lt;img src=x onerror="alert(1)"&gt;\|x`} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}
