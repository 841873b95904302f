package k6script

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/dop251/goja"
)

// csvModule is "k6/experimental/csv" as k6 defines it, over encoding/csv
// as k6 is: parse(file, options) resolves to a SharedArray of every row
// (parsed once per script and options, shared by the VUs); new
// Parser(file, options) in the init code reads the VU's File row by row,
// next() resolving to {done, value}. Rows are arrays of strings, or with
// asObjects objects keyed by the header row. Both read the File from its
// offset, moving it, as k6 does. Every Promise is settled when returned.
func csvModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	must(o.Set("parse", func(file, options goja.Value) goja.Value { return v.csvParse(file, options) }))
	must(o.Set("Parser", func(call goja.ConstructorCall) *goja.Object { return v.csvParser(call) }))
	return o
}

// csvOptions are k6's parser options, by their JavaScript names. A line
// is a record's index from 0: the header, when asObjects, is line 0.
type csvOptions struct {
	Delimiter     string `json:"delimiter"`
	SkipFirstLine bool   `json:"skipFirstLine"`
	FromLine      *int64 `json:"fromLine"` // the first line read
	ToLine        *int64 `json:"toLine"`   // the last line read; 0 is no bound
	AsObjects     bool   `json:"asObjects"`
}

// csvOptionsFrom reads the options object (undefined: the defaults) and
// checks them as k6 does, with k6's messages.
func csvOptionsFrom(rt *goja.Runtime, val goja.Value) (csvOptions, error) {
	opts := csvOptions{Delimiter: ","}
	if val == nil || goja.IsUndefined(val) || goja.IsNull(val) {
		return opts, nil
	}
	obj := val.ToObject(rt)
	get := func(name string) goja.Value {
		x := obj.Get(name)
		if x == nil || goja.IsUndefined(x) {
			return nil
		}
		return x
	}
	if x := get("delimiter"); x != nil {
		opts.Delimiter = x.String()
		if len(opts.Delimiter) != 1 {
			return opts, errors.New("delimiter must be a single character")
		}
	}
	if x := get("skipFirstLine"); x != nil {
		opts.SkipFirstLine = x.ToBoolean()
	}
	if x := get("fromLine"); x != nil {
		n := x.ToInteger()
		opts.FromLine = &n
	}
	if x := get("toLine"); x != nil {
		n := x.ToInteger()
		opts.ToLine = &n
	}
	if x := get("asObjects"); x != nil {
		opts.AsObjects = x.ToBoolean()
	}
	if opts.FromLine != nil && opts.ToLine != nil && *opts.FromLine >= *opts.ToLine {
		return opts, errors.New("fromLine must be less than or equal to toLine")
	}
	return opts, nil
}

// validate is k6's check of the options' combinations.
func (o csvOptions) validate() error {
	from := o.FromLine != nil && *o.FromLine > 0
	switch {
	case o.AsObjects && o.SkipFirstLine:
		return errors.New("the 'header' option cannot be enabled when 'skipFirstLine' is true")
	case o.AsObjects && from:
		return errors.New("the 'header' option cannot be enabled when 'fromLine' is set to a value greater than 0")
	case o.FromLine != nil && *o.FromLine < 0:
		return fmt.Errorf("the 'fromLine' option must be greater than or equal to 0; got %d", *o.FromLine)
	case o.ToLine != nil && *o.ToLine < 0:
		return fmt.Errorf("the 'toLine' option must be greater than or equal to 0; got %d", *o.ToLine)
	case o.FromLine != nil && o.ToLine != nil && *o.FromLine >= *o.ToLine:
		return fmt.Errorf("the 'fromLine' option must be less than the 'toLine' option; got 'fromLine': %d, 'toLine': %d", *o.FromLine, *o.ToLine)
	}
	return nil
}

// csvReader reads a File's records as k6's parser does: the header
// (asObjects) or the skipped first line, then the lines before fromLine,
// are read when it is made; reading ends after toLine.
type csvReader struct {
	r      *csv.Reader
	opts   csvOptions
	line   int64    // the index of the next record
	header []string // asObjects: the column names
}

func newCSVReader(src io.Reader, opts csvOptions) (*csvReader, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	r := csv.NewReader(src)
	r.Comma = rune(opts.Delimiter[0])
	c := &csvReader{r: r, opts: opts}
	if opts.AsObjects {
		h, err := r.Read()
		if err != nil {
			return nil, fmt.Errorf("failed to read the first line; reason: %w", err)
		}
		c.header = h
		c.line++
	}
	// skipFirstLine counts only when fromLine does not say where to start.
	if opts.SkipFirstLine && (opts.FromLine == nil || *opts.FromLine == 0) {
		if _, err := r.Read(); err != nil {
			return nil, fmt.Errorf("failed to skip the first line; reason: %w", err)
		}
		c.line++
	}
	if opts.FromLine != nil {
		for c.line < *opts.FromLine {
			if _, err := r.Read(); err != nil {
				return nil, fmt.Errorf("failed to skip lines until line %d; reason: %w", *opts.FromLine, err)
			}
			c.line++
		}
	}
	return c, nil
}

// next is the next record ([]string, or map[string]string with
// asObjects), or io.EOF past the last line.
func (c *csvReader) next() (any, error) {
	if c.opts.ToLine != nil && *c.opts.ToLine > 0 && c.line > *c.opts.ToLine {
		return nil, io.EOF
	}
	rec, err := c.r.Read()
	if err != nil {
		return nil, err
	}
	c.line++
	if !c.opts.AsObjects {
		return rec, nil
	}
	if len(rec) != len(c.header) {
		return nil, fmt.Errorf("record length (%d) doesn't match header length (%d)", len(rec), len(c.header))
	}
	row := make(map[string]string, len(rec))
	for i, val := range rec {
		row[c.header[i]] = val
	}
	return row, nil
}

// csvFile is the fs File a csv function was given.
func (v *vu) csvFile(val goja.Value, what string) *fsFile {
	if o, ok := val.(*goja.Object); ok {
		if f := v.fsFiles[o]; f != nil {
			return f
		}
	}
	panic(v.rt.NewTypeError(what + ": the first argument must be a File from k6/experimental/fs's open()"))
}

func (v *vu) csvParse(file, options goja.Value) goja.Value {
	rt := v.rt
	f := v.csvFile(file, "csv.parse")
	opts, err := csvOptionsFrom(rt, options)
	if err != nil {
		panic(rt.NewGoError(fmt.Errorf("failed to interpret the provided Parser options; reason: %w", err)))
	}
	if err := opts.validate(); err != nil {
		panic(rt.NewGoError(fmt.Errorf("failed to create a new parser; reason: %w", err)))
	}
	// One parse per file and options, shared by every VU, as k6 names its
	// SharedArray after them.
	key, _ := json.Marshal(struct {
		Path string     `json:"path"`
		Opts csvOptions `json:"options"`
	}{f.path, opts})
	sum := sha256.Sum256(key)
	raw, err := v.s.shared("csv.parse."+hex.EncodeToString(sum[:]), func() (string, error) {
		r, err := newCSVReader(f, opts)
		if err != nil {
			return "", fmt.Errorf("failed to create a new parser; reason: %w", err)
		}
		rows := []any{}
		for {
			row, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return "", err
			}
			rows = append(rows, row)
		}
		b, err := json.Marshal(rows)
		return string(b), err
	})
	if err != nil {
		return v.settledPromise(nil, rt.NewGoError(err))
	}
	arr, err := v.frozenJSON(raw)
	if err != nil {
		return v.settledPromise(nil, rt.NewGoError(err))
	}
	return v.settledPromise(arr, nil)
}

// frozenJSON is raw parsed in this runtime and frozen: a SharedArray as
// each VU sees it.
func (v *vu) frozenJSON(raw string) (*goja.Object, error) {
	rt := v.rt
	parse, _ := goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
	arr, err := parse(goja.Undefined(), rt.ToValue(raw))
	if err != nil {
		return nil, err
	}
	freeze, _ := goja.AssertFunction(rt.Get("Object").ToObject(rt).Get("freeze"))
	if _, err := freeze(goja.Undefined(), arr); err != nil {
		return nil, err
	}
	return arr.ToObject(rt), nil
}

func (v *vu) csvParser(call goja.ConstructorCall) *goja.Object {
	rt := v.rt
	if !v.init {
		panic(rt.NewGoError(errors.New("csv Parser constructor must be called in the init context")))
	}
	if arg := call.Argument(0); goja.IsUndefined(arg) || goja.IsNull(arg) {
		panic(rt.NewGoError(errors.New("csv Parser constructor takes at least one non-nil source argument")))
	}
	f := v.csvFile(call.Argument(0), "new csv.Parser")
	opts, err := csvOptionsFrom(rt, call.Argument(1))
	if err != nil {
		panic(rt.NewGoError(fmt.Errorf("encountered an error while interpreting Parser options; reason: %w", err)))
	}
	r, err := newCSVReader(f, opts)
	if err != nil {
		panic(rt.NewGoError(fmt.Errorf("failed to create a new parser; reason: %w", err)))
	}
	o := rt.NewObject()
	must(o.Set("next", func() goja.Value {
		res := rt.NewObject()
		row, err := r.next()
		switch {
		case errors.Is(err, io.EOF):
			must(res.Set("done", true))
			must(res.Set("value", rt.NewArray()))
		case err != nil:
			return v.settledPromise(nil, rt.NewGoError(err))
		default:
			must(res.Set("done", false))
			must(res.Set("value", v.csvRow(row, r.header)))
		}
		return v.settledPromise(res, nil)
	}))
	return o
}

// csvRow is a record as JavaScript: an array, or an object whose keys are
// in the header's order.
func (v *vu) csvRow(row any, header []string) goja.Value {
	rt := v.rt
	if m, ok := row.(map[string]string); ok {
		o := rt.NewObject()
		for _, k := range header {
			must(o.Set(k, m[k]))
		}
		return o
	}
	rec := row.([]string)
	vals := make([]any, len(rec))
	for i, s := range rec {
		vals[i] = s
	}
	return rt.NewArray(vals...)
}
