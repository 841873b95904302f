package use

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/rundir"
	"io"
	"math"
	"time"
)

// Resource names a resource of the target, in the order the USE scan visits
// them (Resources).
type Resource string

// The resources a USE table lists, in scan order.
const (
	TargetCPU  Resource = "target_cpu"
	Scheduler  Resource = "go_scheduler"
	HTTPServer Resource = "http_server"
	ConnPool   Resource = "conn_pool"
	Database   Resource = "database"
	Machine    Resource = "machine"
	Generator  Resource = "generator"
)

// Resources is the USE scan order: the target from its CPU inwards to the
// database, then what surrounds it (the machine and knee itself).
func Resources() []Resource {
	return []Resource{TargetCPU, Scheduler, HTTPServer, ConnPool, Database, Machine, Generator}
}

// Title is the resource's name for people.
func (r Resource) Title() string {
	switch r {
	case TargetCPU:
		return "target CPU"
	case Scheduler:
		return "Go scheduler"
	case HTTPServer:
		return "HTTP server"
	case ConnPool:
		return "connection pool"
	case Database:
		return "database"
	case Machine:
		return "machine"
	case Generator:
		return "generator"
	}
	return string(r)
}

// Kind says which USE question a reading answers.
type Kind string

// The kinds of reading: the three USE questions, and Info for context the
// table shows but the verdict does not judge (a pool's size, a request rate).
const (
	Utilization Kind = "utilization"
	Saturation  Kind = "saturation"
	Errors      Kind = "errors"
	Info        Kind = "info"
)

// Units of readings; the table formats values by them.
const (
	UnitFraction      = "fraction" // 0..1, shown as a percentage
	UnitCores         = "cores"    // CPUs' worth of CPU time per second
	UnitSeconds       = "s"
	UnitPerSec        = "/s"
	UnitSecondsPerSec = "s/s" // seconds of waiting per second of wall time: mean waiters
	UnitCount         = ""
)

// Reading is one value of one resource at one sample. A value that could
// not be read has NotMeasured set to why, and Value 0: a zero is only a
// measurement when NotMeasured is empty.
type Reading struct {
	Resource    Resource `json:"resource"`
	Metric      string   `json:"metric"`
	Kind        Kind     `json:"kind"`
	Value       float64  `json:"value"`
	Unit        string   `json:"unit,omitempty"`
	NotMeasured string   `json:"not_measured,omitempty"`
}

// Measured reports whether the reading holds a value.
func (r Reading) Measured() bool { return r.NotMeasured == "" }

// Sample is what one probe read at one tick: one line of resources.jsonl.
// At counts from the sampler's t0. Error is set when the probe failed as a
// whole (its readings are then absent).
type Sample struct {
	At       time.Duration `json:"-"`
	Probe    string        `json:"probe"`
	Readings []Reading     `json:"readings"`
	Error    string        `json:"error,omitempty"`
}

// sampleJSON is Sample on disk: the time as seconds, like counters.jsonl.
type sampleJSON struct {
	T float64 `json:"t_s"`
	sampleFields
}

type sampleFields struct {
	Probe    string    `json:"probe"`
	Readings []Reading `json:"readings"`
	Error    string    `json:"error,omitempty"`
}

// MarshalJSON writes the time as "t_s" seconds.
func (s Sample) MarshalJSON() ([]byte, error) {
	return json.Marshal(sampleJSON{T: s.At.Seconds(), sampleFields: sampleFields{s.Probe, s.Readings, s.Error}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Sample) UnmarshalJSON(b []byte) error {
	var j sampleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	// Durations beyond ±292 years do not fit: refuse rather than wrap.
	if math.IsNaN(j.T) || math.Abs(j.T) > float64(math.MaxInt64)/1e9 {
		return fmt.Errorf("t_s %g out of range", j.T)
	}
	*s = Sample{At: time.Duration(math.Round(j.T * 1e9)), Probe: j.Probe, Readings: j.Readings, Error: j.Error}
	return nil
}

// validate checks what a reader of resources.jsonl relies on.
func (s Sample) validate() error {
	if s.Probe == "" {
		return errors.New(`missing "probe"`)
	}
	for i, r := range s.Readings {
		switch {
		case r.Resource == "":
			return fmt.Errorf(`reading %d: missing "resource"`, i+1)
		case r.Metric == "":
			return fmt.Errorf(`reading %d: missing "metric"`, i+1)
		case r.Kind != Utilization && r.Kind != Saturation && r.Kind != Errors && r.Kind != Info:
			return fmt.Errorf("reading %d (%s): kind %q is not utilization, saturation, errors or info", i+1, r.Metric, r.Kind)
		}
	}
	return nil
}

// WriteSample writes s as one JSON line of resources.jsonl.
func WriteSample(w io.Writer, s Sample) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode %s sample: %w", s.Probe, err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write %s sample: %w", s.Probe, err)
	}
	return nil
}

// ReadSamples reads resources.jsonl. Blank lines are skipped; any other line
// that is not a valid sample is an error naming its line number, except a
// last line cut short (no newline: a full disk, a killed writer), which is
// dropped (ReadSamplesFile says so).
func ReadSamples(r io.Reader) ([]Sample, error) {
	s, _, err := ReadSamplesTorn(r)
	return s, err
}

// ReadSamplesTorn is ReadSamples that also reports a torn last line.
func ReadSamplesTorn(r io.Reader) (out []Sample, torn bool, err error) {
	sc, unterminated := rundir.NewLineScanner(r)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var s Sample
		err := json.Unmarshal(b, &s)
		if err == nil {
			err = s.validate()
		}
		if err != nil && *unterminated && !json.Valid(b) {
			return out, true, nil // cut short: not even JSON
		}
		if err != nil {
			return nil, false, fmt.Errorf("resources.jsonl:%d: %w", line, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("read resources.jsonl: %w (fix: a line is longer than %d MiB; is it a knee file?)", err, rundir.MaxLine>>20)
	}
	return out, false, nil
}

// Finite is r with NaN and ±Inf (which JSON cannot carry) turned into not measured.
func (r Reading) Finite() Reading {
	if r.Measured() && (math.IsNaN(r.Value) || math.IsInf(r.Value, 0)) {
		r.Value, r.NotMeasured = 0, fmt.Sprintf("value %g is not a finite number", r.Value)
	}
	return r
}
