// Package gen generates the JSON Schemas of knee's JSON outputs from their
// Go types (github.com/invopop/jsonschema). It lives apart from package cli
// so the knee binary does not link the reflector.
package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/knee-dev/knee/internal/cli"
	"github.com/knee-dev/knee/use"
)

// BaseID prefixes every schema's $id.
const BaseID = "https://github.com/knee-dev/knee/schema/"

// sampleLine is a resources.jsonl line as use.Sample's MarshalJSON writes it.
type sampleLine struct {
	T        float64       `json:"t_s" jsonschema:"description=seconds since the run's start"`
	Probe    string        `json:"probe"`
	Readings []use.Reading `json:"readings"`
	Error    string        `json:"error,omitempty"`
}

// Generate returns the schema files by name (e.g. "run-summary.json").
func Generate() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, o := range cli.JSONOutputs() {
		b, err := schemaOf(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Name, err)
		}
		out[o.Name+".json"] = b
	}
	return out, nil
}

// WriteAll writes every schema into dir, and removes schemas of outputs
// that no longer exist.
func WriteAll(dir string) error {
	files, err := Generate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, p := range old {
		if _, ok := files[filepath.Base(p)]; !ok {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func schemaOf(o cli.JSONOutput) ([]byte, error) {
	r := &jsonschema.Reflector{
		BaseSchemaID:   jsonschema.ID(BaseID),
		ExpandedStruct: true,
		Namer:          typeName,
		Mapper:         mapper,
	}
	s := r.Reflect(o.Value)
	s.ID = jsonschema.ID(BaseID + o.Name + ".json")
	s.Title = o.Title
	s.Description = "Written by " + o.Writers + "."
	if o.Lines {
		s.Description += " One such JSON document per line (JSON Lines)."
	}
	if o.Versioned {
		version := &jsonschema.Schema{
			Type:        "integer",
			Const:       cli.ExportFormatVersion,
			Description: "the export format; it changes when a field is removed or changes meaning",
		}
		props := jsonschema.NewProperties()
		props.Set("format_version", version)
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			props.Set(p.Key, p.Value)
		}
		s.Properties = props
		s.Required = append([]string{"format_version"}, s.Required...)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	// Go writes nil slices, maps and pointers that have no omitempty as
	// null: the schema allows it where the Go type can be nil.
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if err := allowNull(doc, reflect.TypeOf(o.Value)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// typeName names a definition after its package and type (rundir.Summary),
// so types of one name in two packages stay apart.
func typeName(t reflect.Type) string {
	if t.Name() == "" || t.PkgPath() == "" {
		return ""
	}
	return path.Base(t.PkgPath()) + "." + t.Name()
}

// mapper gives the schema of types whose JSON is not their Go fields.
func mapper(t reflect.Type) *jsonschema.Schema {
	if t == reflect.TypeOf(use.Sample{}) {
		r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true}
		s := r.Reflect(sampleLine{})
		s.Version, s.ID = "", ""
		return s
	}
	return nil
}

// allowNull marks, in the generated schema, every property that Go may write
// as null: a slice, map, pointer or interface field without omitempty.
func allowNull(doc map[string]any, root reflect.Type) error {
	defs, _ := doc["$defs"].(map[string]any)
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, schema map[string]any)
	walk = func(t reflect.Type, schema map[string]any) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeOf(use.Sample{}) {
			return
		}
		seen[t] = true
		if schema == nil {
			schema, _ = defs[typeName(t)].(map[string]any)
		}
		if schema == nil {
			return // a type with its own schema (time.Time, ...)
		}
		props, _ := schema["properties"].(map[string]any)
		for _, f := range fields(t) {
			name, omit := jsonName(f)
			if name == "" {
				continue
			}
			k := f.Type.Kind()
			if !omit && (k == reflect.Slice || k == reflect.Map || k == reflect.Pointer || k == reflect.Interface) {
				if p, ok := props[name].(map[string]any); ok {
					props[name] = nullable(p)
				}
			}
			walk(f.Type, nil)
		}
	}
	walk(root, doc)
	return nil
}

// fields lists t's JSON fields, those of embedded structs without a tag
// promoted as encoding/json promotes them.
func fields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, fields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		out = append(out, f)
	}
	return out
}

func jsonName(f reflect.StructField) (name string, omitempty bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	parts := strings.Split(tag, ",")
	name = parts[0]
	if name == "" {
		name = f.Name
	}
	return name, slices.Contains(parts[1:], "omitempty") || slices.Contains(parts[1:], "omitzero")
}

func nullable(p map[string]any) map[string]any {
	if t, ok := p["type"].(string); ok {
		p["type"] = []any{t, "null"}
		return p
	}
	return map[string]any{"anyOf": []any{p, map[string]any{"type": "null"}}}
}
