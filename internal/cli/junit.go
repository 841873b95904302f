package cli

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/runner"
)

// junitReport collects the thresholds of the runs of one knee run command
// (one test suite per run, one test case per threshold) and writes them as
// JUnit XML, the format GitLab, Jenkins and GitHub's test reporters read.
// A zero path collects nothing.
type junitReport struct {
	path   string
	suites []junitSuite
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
	durationS float64
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// add evaluates ts against the run res left and keeps them, with results
// judged elsewhere (a script's own thresholds), as one suite.
func (j *junitReport) add(res *runner.Result, ts []analyze.Threshold, more ...analyze.ThresholdResult) {
	if j.path == "" {
		return
	}
	s := junitSuite{Name: "knee run " + res.Dir, durationS: res.Summary.DurationS, Time: seconds(res.Summary.DurationS)}
	if res.Run != nil && !res.Run.Meta.Started.IsZero() {
		s.Timestamp = res.Run.Meta.Started.UTC().Format("2006-01-02T15:04:05")
	}
	for _, r := range append(analyze.EvaluateThresholds(res.Run, ts), more...) {
		c := junitCase{Name: r.Expr, Classname: "knee.thresholds", Time: "0"}
		msg := r.Measured()
		if r.Pass {
			c.SystemOut = msg
		} else {
			s.Failures++
			c.Failure = &junitFailure{Message: msg + "; threshold " + r.Expr, Type: "threshold", Text: "threshold " + r.Expr + " failed: " + msg}
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	j.suites = append(j.suites, s)
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// write writes the report; a run without thresholds gives a report with no
// test cases, so CI finds the file it was told to expect.
func (j *junitReport) write() error {
	if j.path == "" {
		return nil
	}
	all := junitSuites{Name: "knee", Suites: j.suites}
	var total float64
	for _, s := range j.suites {
		all.Tests += s.Tests
		all.Failures += s.Failures
		total += s.durationS
	}
	all.Time = seconds(total)
	b, err := xml.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	var out strings.Builder
	out.WriteString(xml.Header)
	out.Write(b)
	out.WriteString("\n")
	if err := rundir.WriteFileAtomic(j.path, []byte(out.String()), 0o644); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}
