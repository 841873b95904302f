package request

import (
	"errors"
	"strings"
	"testing"
)

func mustVars(t testing.TB, lists map[string][]string) *Vars {
	t.Helper()
	v, err := NewVars(lists)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseTemplateRenders(t *testing.T) {
	vars := mustVars(t, map[string][]string{"isbn": {"9780441172719"}, "id": {"42"}})
	tests := []struct {
		name, text, want string
		static           bool
	}{
		{"plain", "http://h/api/books", "http://h/api/books", true},
		{"empty", "", "", true},
		{"variable", "http://h/api/books/{isbn}", "http://h/api/books/9780441172719", false},
		{"vu and iter", "/b?run={vu}-{iter}", "/b?run=3-7", false},
		{"json body", `{"isbn":"{isbn}","n":{id}}`, `{"isbn":"9780441172719","n":42}`, false},
		{"nested json", `{"a":{"b":[{"c":1}]}}`, `{"a":{"b":[{"c":1}]}}`, true},
		{"escaped brace", "{{isbn}", "{isbn}", true},
		{"closing brace alone", "a}b}}", "a}b}}", true},
		{"brace then space", "{ isbn}", "{ isbn}", true},
		{"adjacent", "{vu}{iter}{id}", "3742", false},
		{"unicode around", "é{id}ü", "é42ü", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := ParseTemplate(tt.text, vars)
			if err != nil {
				t.Fatal(err)
			}
			if got := tpl.Render(vars, 1, 3, 7); got != tt.want {
				t.Errorf("Render = %q, want %q", got, tt.want)
			}
			if tpl.Static() != tt.static {
				t.Errorf("Static = %v, want %v", tpl.Static(), tt.static)
			}
			if tpl.Text() != tt.text {
				t.Errorf("Text = %q, want %q", tpl.Text(), tt.text)
			}
		})
	}
}

func TestParseTemplateErrors(t *testing.T) {
	vars := mustVars(t, map[string][]string{"isbn": {"1"}})
	tests := []struct {
		name, text string
		kind       error
		col        int
		mention    string // must appear in the message
	}{
		{"unknown", "http://h/{author}", ErrUnknownPlaceholder, 10, "add --var author=v1,v2"},
		{"unknown lists known", "{x}", ErrUnknownPlaceholder, 1, "known variables: isbn"},
		{"unclosed at end", "http://h/{", ErrUnclosedBrace, 10, "write {{"},
		{"unclosed name", "http://h/{isbn", ErrUnclosedBrace, 10, "write {isbn}"},
		{"bad char", "x{is bn}", ErrBadPlaceholder, 5, `' '`},
		{"bad char dash", "{is-bn}", ErrBadPlaceholder, 4, `'-'`},
		{"column counts runes", "éé{nope}", ErrUnknownPlaceholder, 3, "{nope}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTemplate(tt.text, vars)
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want a *TemplateError", err)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("err = %v, want kind %v", err, tt.kind)
			}
			if te.Column() != tt.col {
				t.Errorf("Column = %d, want %d", te.Column(), tt.col)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.mention) || !strings.Contains(msg, "column") {
				t.Errorf("message %q should name the column and mention %q", msg, tt.mention)
			}
		})
	}
}

func TestTemplateErrorShortensLongText(t *testing.T) {
	text := strings.Repeat("a", 200) + "{nope}" + strings.Repeat("b", 200)
	_, err := ParseTemplate(text, nil)
	msg := err.Error()
	if len(msg) > 300 || !strings.Contains(msg, "column 201") || !strings.Contains(msg, "…") {
		t.Errorf("message not shortened around the problem: %q", msg)
	}
}

func TestNewVarsErrors(t *testing.T) {
	tests := []struct {
		name    string
		lists   map[string][]string
		mention string
	}{
		{"reserved vu", map[string][]string{"vu": {"1"}}, "reserved"},
		{"reserved iter", map[string][]string{"iter": {"1"}}, "reserved"},
		{"empty list", map[string][]string{"isbn": nil}, "no values"},
		{"digit first", map[string][]string{"1x": {"a"}}, "must start"},
		{"bad char", map[string][]string{"a-b": {"a"}}, "only letters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewVars(tt.lists)
			if err == nil || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("err = %v, want one mentioning %q", err, tt.mention)
			}
		})
	}
}

// The SplitMix64 reference: seeded with 0, its first output is
// 0xe220a8397b1dcdaf (Vigna's splitmix64.c), i.e. mix(0 + golden gamma).
func TestMixMatchesSplitMix64(t *testing.T) {
	if got := mix(0x9e3779b97f4a7c15); got != 0xe220a8397b1dcdaf {
		t.Errorf("mix = %#x, want 0xe220a8397b1dcdaf", got)
	}
}

func TestPickIsUniformAndSeeded(t *testing.T) {
	const n, vus, iters = 5, 100, 1000
	var counts [n]int
	same, diff := 0, 0
	for vu := uint64(0); vu < vus; vu++ {
		for it := uint64(0); it < iters; it++ {
			k := pick(1, vu, it, n)
			counts[k]++
			if pick(1, vu, it, n) == k {
				same++
			}
			if pick(2, vu, it, n) != k {
				diff++
			}
		}
	}
	// 100000 draws over 5 values: 20000 expected each, sd ~126; allow 5 sd.
	for k, c := range counts {
		if c < 20000-650 || c > 20000+650 {
			t.Errorf("value %d drawn %d times, want 20000±650", k, c)
		}
	}
	if same != vus*iters {
		t.Errorf("pick is not deterministic: %d of %d repeat", same, vus*iters)
	}
	// Another seed agrees by chance 1 time in 5: 80000 differ, sd ~126.
	if diff < 80000-650 || diff > 80000+650 {
		t.Errorf("seed 2 differs from seed 1 in %d draws, want ~80000", diff)
	}
}

func TestOneValuePerIterationAcrossFields(t *testing.T) {
	vars := mustVars(t, map[string][]string{"isbn": {"a", "b", "c", "d", "e", "f", "g"}})
	url, _ := ParseTemplate("/books/{isbn}", vars)
	body, _ := ParseTemplate("{isbn}", vars)
	for it := uint64(0); it < 50; it++ {
		u, b := url.Render(vars, 9, 4, it), body.Render(vars, 9, 4, it)
		if u != "/books/"+b {
			t.Fatalf("iter %d: url %q and body %q disagree", it, u, b)
		}
	}
}
