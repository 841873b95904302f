package cli

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// junitDoc reads JUnit XML independently of the writer's types.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Class   string `xml:"classname,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("%s: no XML declaration:\n%.100s", path, b)
	}
	var d junitDoc
	if err := xml.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return d
}

// --junit writes one test case per threshold, the measured value in the
// message; a failed threshold is a failure and knee exits 99. At 20
// iterations per second for 1 s the open model sends exactly 20 requests.
func TestJUnitThresholds(t *testing.T) {
	url := loopbackServer(t) + "/"
	dir := t.TempDir()
	path := filepath.Join(dir, "junit.xml")
	code, _, stderr := runKnee(t, "run", "--rate", "20", "--duration", "1s", "--url", url, "--quiet", "--out", dir,
		"--threshold", "p(95)<30s", "--threshold", "requests>1000", "--threshold", "errors<1%", "--junit", path)
	if code != ExitThresholds {
		t.Fatalf("exit %d, want %d: %s", code, ExitThresholds, stderr)
	}
	d := readJUnit(t, path)
	if d.Tests != 3 || d.Failures != 1 || len(d.Suites) != 1 {
		t.Fatalf("tests %d failures %d suites %d; want 3, 1, 1", d.Tests, d.Failures, len(d.Suites))
	}
	s := d.Suites[0]
	if s.Tests != 3 || s.Failures != 1 || len(s.Cases) != 3 || !strings.HasPrefix(s.Name, "knee run ") {
		t.Fatalf("suite %q: tests %d failures %d cases %d", s.Name, s.Tests, s.Failures, len(s.Cases))
	}
	want := []struct {
		name, msg string
		fail      bool
	}{
		{"p(95)<30s", "measured ", false},
		{"requests>1000", "measured 20 requests", true},
		{"errors<1%", "measured 0.00 %", false},
	}
	for i, w := range want {
		c := s.Cases[i]
		if c.Name != w.name || c.Class != "knee.thresholds" {
			t.Errorf("case %d: %q (%s), want %q", i, c.Name, c.Class, w.name)
		}
		msg := c.SystemOut
		if w.fail {
			if c.Failure == nil {
				t.Errorf("%s: no failure", w.name)
				continue
			}
			msg = c.Failure.Message
		} else if c.Failure != nil {
			t.Errorf("%s: failure %q", w.name, c.Failure.Message)
		}
		if !strings.HasPrefix(msg, w.msg) {
			t.Errorf("%s: message %q, want it to start with %q", w.name, msg, w.msg)
		}
	}
}

// --repeat gives one suite per repetition; no thresholds still gives a file.
func TestJUnitRepeatAndEmpty(t *testing.T) {
	url := loopbackServer(t) + "/"
	dir := t.TempDir()
	path := filepath.Join(dir, "junit.xml")
	code, _, stderr := runKnee(t, "run", "--rate", "20", "--duration", "1s", "--url", url, "--quiet", "--out", dir,
		"--repeat", "2", "--repeat-pause", "0s", "--threshold", "requests==20", "--junit", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	d := readJUnit(t, path)
	if len(d.Suites) != 2 || d.Tests != 2 || d.Failures != 0 {
		t.Errorf("suites %d tests %d failures %d; want 2, 2, 0", len(d.Suites), d.Tests, d.Failures)
	}
	for _, s := range d.Suites {
		if len(s.Cases) != 1 || s.Cases[0].SystemOut != "measured 20 requests" {
			t.Errorf("suite %s: %+v", s.Name, s.Cases)
		}
	}
	empty := filepath.Join(dir, "empty.xml")
	if code, _, stderr := runKnee(t, "run", "--rate", "20", "--duration", "1s", "--url", url, "--quiet", "--out", dir, "--junit", empty); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := readJUnit(t, empty); d.Tests != 0 || len(d.Suites) != 1 {
		t.Errorf("no thresholds: tests %d suites %d; want 0, 1", d.Tests, len(d.Suites))
	}
	if code, _, _ := runKnee(t, "run", "--rate", "20", "--duration", "1s", "--url", url, "--quiet", "--out", dir, "--junit", filepath.Join(dir, "no", "such", "dir.xml")); code != ExitFailure {
		t.Errorf("unwritable --junit: exit %d, want %d", code, ExitFailure)
	}
}
