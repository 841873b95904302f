package k6script

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"
)

func TestParseCSVOut(t *testing.T) {
	for _, c := range []struct {
		spec, file, format, err string
	}{
		{spec: "out.csv", file: "out.csv"},
		{spec: "fileName=r.csv", file: "r.csv"},
		{spec: "fileName=r.csv,timeFormat=rfc3339", file: "r.csv", format: "rfc3339"},
		{spec: "timeFormat=unix_milli,fileName=r.csv", file: "r.csv", format: "unix_milli"},
		{spec: "fileName=r.csv,timeFormat=hours", err: `timeFormat "hours"`},
		{spec: "timeFormat=unix", err: "give a file name"},
		{spec: "file=r.csv", err: `unknown key "file"`},
		{spec: "", err: "give a file name"},
	} {
		file, format, err := ParseCSVOut(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseCSVOut(%q) error %v; want one saying %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil || file != c.file || format != c.format {
			t.Errorf("ParseCSVOut(%q) = %q, %q, %v; want %q, %q", c.spec, file, format, err, c.file, c.format)
		}
	}
}

// Each timeFormat writes the instant as k6 does (hand-computed for
// 2026-01-02T03:04:05.123456789Z = 1767323045 s).
func TestCSVTimeFormats(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	for name, want := range map[string]string{
		"unix": "1767323045", "unix_milli": "1767323045123", "unix_micro": "1767323045123456",
		"unix_nano": "1767323045123456789", "rfc3339": "2026-01-02T03:04:05Z", "rfc3339_nano": "2026-01-02T03:04:05.123456789Z",
	} {
		if got := csvTimeFormats[name](at); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// A CSV output's timestamps are in the timeFormat given, and without one
// in k6's default, unix: whole seconds, as k6 v1.8.1 wrote
// shared/testdata/k6/default-timeformat.csv (1796034358). By hand for
// 2026-01-02T03:04:05.123456789Z.
func TestCSVOutputTimeFormat(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	for _, tt := range []struct{ format, want string }{
		{"", "1767323045"},
		{"unix_micro", "1767323045123456"},
		{"rfc3339_nano", "2026-01-02T03:04:05.123456789Z"},
	} {
		var buf bytes.Buffer
		o := NewCSVOutput(nopCloser{&buf})
		if err := o.SetTimeFormat(tt.format); err != nil {
			t.Fatal(err)
		}
		o.sample("c", KindCounter, "default", at, 1, nil)
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil || len(rows) != 2 || rows[1][1] != tt.want {
			t.Errorf("timeFormat %q: rows %v (%v); want the timestamp %s", tt.format, rows, err, tt.want)
		}
	}
}

func FuzzParseCSVOut(f *testing.F) {
	for _, s := range []string{"out.csv", "fileName=a,timeFormat=unix", "timeFormat=x", ",,=,", "fileName="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		file, format, err := ParseCSVOut(spec)
		if err != nil {
			return
		}
		if file == "" {
			t.Fatalf("ParseCSVOut(%q) accepted an empty file name", spec)
		}
		if _, ok := csvTimeFormats[format]; format != "" && !ok {
			t.Fatalf("ParseCSVOut(%q) accepted timeFormat %q", spec, format)
		}
	})
}
