package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// k6JSONLine is one line of k6's `--out json` output: a "Metric"
// declaration or a "Point" sample. Only the tags knee maps are decoded.
type k6JSONLine struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Time  string          `json:"time"`
		Value json.RawMessage `json:"value"`
		Tags  struct {
			ErrorCode string `json:"error_code"`
			Expected  string `json:"expected_response"`
			Status    string `json:"status"`
			Name      string `json:"name"`
			URL       string `json:"url"`
			Scenario  string `json:"scenario"`
		} `json:"tags"`
	} `json:"data"`
}

// importK6JSON reads k6's `--out json` output (JSON lines).
func importK6JSON(src source) (Result, error) {
	lr := newLineReader(src.r, src.name)
	bad := &badRows{file: src.name, lenient: src.opt.Lenient}
	b := newBuilder(src, FormatK6JSON)
	m := newK6Mapper(b, bad, src.opt)
	sawLine := false
	for {
		line, err := lr.scan(src.ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		sawLine = true
		if err := k6JSONRow(m, bad, lr, line); err != nil {
			return Result{}, err
		}
	}
	if !sawLine {
		return Result{}, fmt.Errorf("import: %s: %w: no JSON lines", src.name, ErrEmpty)
	}
	return b.finish(bad, m.rows)
}

func k6JSONRow(m *k6Mapper, bad *badRows, lr *lineReader, line []byte) error {
	var l k6JSONLine
	if err := json.Unmarshal(line, &l); err != nil {
		why := "not a JSON object"
		if lr.partial {
			why = "truncated last line"
		}
		return bad.bad(lr.n, fixLenient, "%s: %v", why, err)
	}
	switch l.Type {
	case "Point":
	case "Metric":
		return nil
	default:
		return bad.bad(lr.n, "k6 --out json writes \"type\":\"Point\" and \"Metric\" lines; "+fixLenient,
			"unknown line type %q", l.Type)
	}
	if l.Metric == "" {
		return bad.bad(lr.n, fixLenient, "point without \"metric\"")
	}
	t := l.Data.Tags
	row := k6Row{
		metric: []byte(l.Metric), time: []byte(l.Data.Time), value: l.Data.Value,
		errorCode: []byte(t.ErrorCode), expected: []byte(t.Expected), status: []byte(t.Status),
		name: []byte(t.Name), url: []byte(t.URL), scenario: []byte(t.Scenario),
	}
	return m.row(lr.n, &row)
}
