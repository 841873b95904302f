package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// k6CSVColumns are the column positions of a k6 CSV header; -1 when absent.
// Column sets and order vary between k6 versions, so only the header counts.
type k6CSVColumns struct {
	n                           int
	metric, time, value         int
	errorCode, expected, status int
	name, url, scenario         int
}

func parseK6CSVHeader(fields [][]byte) (k6CSVColumns, error) {
	c := k6CSVColumns{n: len(fields), metric: -1, time: -1, value: -1,
		errorCode: -1, expected: -1, status: -1, name: -1, url: -1, scenario: -1}
	for i, f := range fields {
		var p *int
		switch string(bytes.TrimSpace(bytes.TrimPrefix(f, []byte("\ufeff")))) {
		case "metric_name":
			p = &c.metric
		case "timestamp":
			p = &c.time
		case "metric_value":
			p = &c.value
		case "error_code":
			p = &c.errorCode
		case "expected_response":
			p = &c.expected
		case "status":
			p = &c.status
		case "name":
			p = &c.name
		case "url":
			p = &c.url
		case "scenario":
			p = &c.scenario
		}
		if p != nil && *p < 0 {
			*p = i
		}
	}
	var missing []string
	for _, m := range []struct {
		col  int
		name string
	}{{c.metric, "metric_name"}, {c.time, "timestamp"}, {c.value, "metric_value"}} {
		if m.col < 0 {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("header lacks %v", missing)
	}
	return c, nil
}

// get is field i, or nil for a column the header lacks.
func get(fields [][]byte, i int) []byte {
	if i < 0 {
		return nil
	}
	return fields[i]
}

// importK6CSV reads k6's `--out csv` output.
func importK6CSV(src source) (Result, error) {
	lr := newLineReader(src.r, src.name)
	var sp csvSplitter
	cols, err := readK6CSVHeader(lr, &sp, src.name)
	if err != nil {
		return Result{}, err
	}
	bad := &badRows{file: src.name, lenient: src.opt.Lenient}
	b := newBuilder(src, FormatK6CSV)
	m := newK6Mapper(b, bad, src.opt)
	var row k6Row
	for {
		line, err := lr.scan(src.ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, err
		}
		if len(line) == 0 {
			continue
		}
		start := lr.n
		if cols.metric == 0 && !m.wants(firstField(line)) && bytes.IndexByte(line, '"') < 0 {
			// The hot path: most of k6's rows are metrics knee does not map.
			// Count their columns all the same, so damage does not go unnoticed.
			if n := bytes.Count(line, []byte{','}) + 1; n != cols.n {
				if err := bad.bad(start, fixLenient, "%d fields where the header has %d: %s", n, cols.n, fieldsWhy(lr)); err != nil {
					return Result{}, err
				}
			}
			continue
		}
		fields, more := sp.split(line)
		if more {
			fields, err = splitSpanning(lr, &sp, line)
			if err != nil {
				return Result{}, err
			}
			if fields == nil {
				if err := bad.bad(start, fixLenient, "quoted field never closes"); err != nil {
					return Result{}, err
				}
				break
			}
		}
		if len(fields) != cols.n {
			if err := bad.bad(start, fixLenient, "%d fields where the header has %d: %s", len(fields), cols.n, fieldsWhy(lr)); err != nil {
				return Result{}, err
			}
			continue
		}
		row = k6Row{
			metric: fields[cols.metric], time: fields[cols.time], value: fields[cols.value],
			errorCode: get(fields, cols.errorCode), expected: get(fields, cols.expected),
			status: get(fields, cols.status), name: get(fields, cols.name),
			url: get(fields, cols.url), scenario: get(fields, cols.scenario),
		}
		if err := m.row(start, &row); err != nil {
			return Result{}, err
		}
	}
	return b.finish(bad, m.rows)
}

// readK6CSVHeader reads the header line and finds the columns knee maps.
func readK6CSVHeader(lr *lineReader, sp *csvSplitter, name string) (k6CSVColumns, error) {
	header, err := lr.next()
	if errors.Is(err, io.EOF) {
		return k6CSVColumns{}, fmt.Errorf("import: %s: %w: no header line", name, ErrEmpty)
	}
	if err != nil {
		return k6CSVColumns{}, fmt.Errorf("import: %w", err)
	}
	fields, more := sp.split(header)
	if more {
		return k6CSVColumns{}, &ParseError{File: name, Line: 1, Msg: "unterminated quote in the header", Fix: "is this a k6 --out csv file?"}
	}
	cols, err := parseK6CSVHeader(fields)
	if err != nil {
		return cols, &ParseError{File: name, Line: 1, Msg: err.Error(),
			Fix: "k6 --out csv writes metric_name,timestamp,metric_value,...; give --format if this is another format"}
	}
	return cols, nil
}

// splitSpanning joins the lines of a record whose quoted field holds
// newlines. fields is nil when the file ends with the quote still open.
func splitSpanning(lr *lineReader, sp *csvSplitter, first []byte) ([][]byte, error) {
	sp.joined = append(sp.joined[:0], first...)
	for len(sp.joined) <= maxLine {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		sp.joined = append(append(sp.joined, '\n'), line...)
		fields, more := sp.split(sp.joined)
		if !more {
			return fields, nil
		}
	}
	return nil, fmt.Errorf("import: %s:%d: quoted field longer than %d MiB: %w (fix: a quote is left open; is this a k6 CSV output?)", lr.name, lr.n, maxLine>>20, ErrBadRow)
}

// firstField is line up to its first comma.
func firstField(line []byte) []byte {
	if i := bytes.IndexByte(line, ','); i >= 0 {
		return line[:i]
	}
	return line
}

// fieldsWhy guesses why a row has the wrong number of fields.
func fieldsWhy(lr *lineReader) string {
	if lr.partial {
		return "truncated last line"
	}
	return "missing or extra columns"
}
