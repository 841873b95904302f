package cli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/knee-dev/knee/analyze"
	"github.com/knee-dev/knee/lab"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/use"
	"github.com/knee-dev/knee/use/probe"
)

//go:generate go run ./schemagen ../../schema

// ExportFormatVersion is the format of every JSON file knee's commands write
// with --summary-export; each carries it as "format_version". It changes when
// a field is removed or changes meaning (adding a field does not change it).
// The run directory's files carry rundir.FormatVersion in run.json instead.
const ExportFormatVersion = 1

// JSONOutput is one kind of JSON file knee writes: the schema file that
// describes it (schema/<Name>.json), the commands that write it, and a
// value of the Go type it is written from (for the schema generator).
type JSONOutput struct {
	Name      string
	Title     string
	Writers   string // the commands and flags that write it
	Value     any    // a zero value of the Go type written
	Versioned bool   // writeJSON adds "format_version" (the type itself has no such field)
	Lines     bool   // one JSON document per line (JSON Lines); the schema is a line's
}

// runRepeatExport is knee run --repeat's --summary-export.
type runRepeatExport struct {
	Runs        []rundir.Summary         `json:"runs"`
	Repetitions analyze.RepetitionReport `json:"repetitions"`
}

// JSONOutputs lists every JSON file knee writes, for the schema generator
// (go generate ./internal/cli) and the tests that validate real outputs.
func JSONOutputs() []JSONOutput {
	return []JSONOutput{
		{Name: "run-summary", Title: "knee run summary", Writers: "knee run --summary-export", Value: rundir.Summary{}, Versioned: true},
		{Name: "run-repeat", Title: "knee run repetitions", Writers: "knee run --repeat N --summary-export", Value: runRepeatExport{}, Versioned: true},
		{Name: "analyze", Title: "knee analyze export", Writers: "knee analyze --summary-export", Value: analysisExport{}, Versioned: true},
		{Name: "steps", Title: "stepped test export", Writers: "knee steps, knee curve, knee lab curve --summary-export", Value: analyze.StepsResult{}, Versioned: true},
		{Name: "compare", Title: "knee compare export", Writers: "knee compare --summary-export", Value: analyze.Comparison{}, Versioned: true},
		{Name: "use", Title: "knee use export", Writers: "knee use --summary-export", Value: probe.ScanResult{}, Versioned: true},
		{Name: "lab-co", Title: "knee lab co export", Writers: "knee lab co --summary-export", Value: lab.COResult{}, Versioned: true},
		{Name: "lab-co-repeat", Title: "knee lab co repetitions", Writers: "knee lab co --repeat N --summary-export", Value: lab.CORepetitions{}, Versioned: true},
		{Name: "run-json", Title: "run.json of a run directory", Writers: "every run directory (knee run, steps, import, lab)", Value: rundir.Meta{}},
		{Name: "counters-line", Title: "a line of counters.jsonl", Writers: "every run directory", Value: rundir.IntervalCounters{}, Lines: true},
		{Name: "resources-line", Title: "a line of resources.jsonl", Writers: "run directories with USE samples (knee steps, curve, lab)", Value: use.Sample{}, Lines: true},
	}
}

// marshalExport encodes v, a JSON object, indented, with "format_version"
// as its first member.
func marshalExport(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("export of %T is not a JSON object", v)
	}
	head := fmt.Sprintf(`{"format_version":%d`, ExportFormatVersion)
	if !bytes.Equal(b, []byte("{}")) {
		head += ","
	}
	var out bytes.Buffer
	if err := json.Indent(&out, append([]byte(head), b[1:]...), "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
