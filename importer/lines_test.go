package importer

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"
)

// csvOracle splits one record with encoding/csv; ok is false when it rejects it.
func csvOracle(line string) ([]string, bool) {
	r := csv.NewReader(strings.NewReader(line))
	r.FieldsPerRecord = -1
	rec, err := r.Read()
	if err != nil {
		return nil, false
	}
	if _, err := r.Read(); err == nil {
		return nil, false // more than one record
	}
	return rec, true
}

func splitStrings(line string) ([]string, bool) {
	var sp csvSplitter
	fields, more := sp.split([]byte(line))
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = string(f)
	}
	return out, more
}

func TestCSVSplit(t *testing.T) {
	for _, line := range []string{
		`a,b,c`,
		`a,,c,`,
		`"a,b",c`,
		`x,"a""b",c`,
		`x,"a""",""`,
		`"","",""`,
		`http_reqs,1,1.0,,,,true,,GET,"GET /s?q=a,b",HTTP/1.1,s,,200,,,"GET /s?q=a,b",,`,
		"\"two\nlines\",x",
	} {
		want, ok := csvOracle(line)
		if !ok {
			t.Fatalf("oracle rejects %q", line)
		}
		got, more := splitStrings(line)
		if strings.Contains(line, "\n") {
			// A record over two lines: the first line asks for more.
			got, more = splitStrings(line[:strings.IndexByte(line, '\n')])
			if !more {
				t.Errorf("%q: first line does not ask for the next", line)
			}
			got, more = splitStrings(line)
		}
		if more || !slices.Equal(got, want) {
			t.Errorf("%q: %q (more %v), encoding/csv %q", line, got, more, want)
		}
	}
}

// FuzzCSVSplit: wherever encoding/csv reads one record from one line, the
// splitter agrees with it.
func FuzzCSVSplit(f *testing.F) {
	for _, s := range []string{`a,b`, `"a,b",c`, `x,"a""b",`, `"",""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n") {
			return
		}
		want, ok := csvOracle(line)
		if !ok || line == "" {
			return
		}
		if got, more := splitStrings(line); more || !slices.Equal(got, want) {
			t.Errorf("%q: %q (more %v), encoding/csv %q", line, got, more, want)
		}
	})
}
