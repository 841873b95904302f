package request

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseTemplate checks that any text either parses, and then renders
// without placeholders left and round-trips its literal text, or fails with
// a *TemplateError whose offset lies inside the text.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"", "http://h/{isbn}", "{vu}-{iter}", `{"a":"{isbn}"}`, "{{x}", "{", "{ab", "{a b}", "é{x}"} {
		f.Add(s)
	}
	vars, err := NewVars(map[string][]string{"isbn": {"I"}, "x": {"X"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tpl, err := ParseTemplate(text, vars)
		if err != nil {
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TemplateError", err)
			}
			if te.Offset < 0 || te.Offset >= len(text) {
				t.Fatalf("offset %d outside text of %d bytes", te.Offset, len(text))
			}
			_ = te.Error()
			return
		}
		out := tpl.Render(vars, 1, 2, 3)
		if tpl.Static() {
			// A static template is its text with each {{ unescaped.
			if want := strings.ReplaceAll(text, "{{", "{"); out != want && !strings.Contains(text, "{{{") {
				t.Fatalf("static render %q, want %q", out, want)
			}
			if tpl.Render(vars, 9, 9, 9) != out {
				t.Fatal("static template renders differently for another iteration")
			}
		}
		if len(out) > 2*len(text)+64 {
			t.Fatalf("render of %d bytes from %d bytes of text", len(out), len(text))
		}
	})
}
