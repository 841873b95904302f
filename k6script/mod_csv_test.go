package k6script

import (
	"context"
	"testing"
)

// people is the CSV the cases parse: a header, a quoted field with the
// delimiter, escaped quotes, an empty field. Lines count records from 0.
const people = "name,city,note\n" + // line 0
	"ada,\"London, UK\",\"said \"\"hi\"\"\"\n" + // line 1
	"bob,Paris,\n" + // line 2
	"cyd,Oslo,x\n" // line 3

// Rows as k6's parser gives them for each option, worked out by hand from
// k6's source: fromLine is the first line read, toLine the last (0: no
// bound), skipFirstLine is ignored when fromLine is set above 0.
func TestCSVParse(t *testing.T) {
	const (
		header = `["name","city","note"]`
		ada    = `["ada","London, UK","said \"hi\""]`
		bob    = `["bob","Paris",""]`
		cyd    = `["cyd","Oslo","x"]`
	)
	cases := []struct {
		name, opts, want string
	}{
		{"defaults", "undefined", "[" + header + "," + ada + "," + bob + "," + cyd + "]"},
		{"delimiter ,", "{ delimiter: ',' }", "[" + header + "," + ada + "," + bob + "," + cyd + "]"},
		{"skipFirstLine", "{ skipFirstLine: true }", "[" + ada + "," + bob + "," + cyd + "]"},
		{"fromLine 1 toLine 2", "{ fromLine: 1, toLine: 2 }", "[" + ada + "," + bob + "]"},
		{"fromLine 2", "{ fromLine: 2 }", "[" + bob + "," + cyd + "]"},
		{"toLine 1", "{ toLine: 1 }", "[" + header + "," + ada + "]"},
		{"skipFirstLine under fromLine", "{ skipFirstLine: true, fromLine: 2 }", "[" + bob + "," + cyd + "]"},
		// The SharedArray's objects are JSON: keys in sorted order, as k6 marshals a map.
		{"asObjects", "{ asObjects: true }", `[{"city":"London, UK","name":"ada","note":"said \"hi\""},{"city":"Paris","name":"bob","note":""},{"city":"Oslo","name":"cyd","note":"x"}]`},
		{"asObjects toLine 2", "{ asObjects: true, toLine: 2 }", `[{"city":"London, UK","name":"ada","note":"said \"hi\""},{"city":"Paris","name":"bob","note":""}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, got := initOut(t, map[string]string{"s.js": `import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';
const rows = await csv.parse(await open('p.csv'), ` + c.opts + `);
export const out = JSON.stringify(rows) + (Object.isFrozen(rows) ? '' : ' (not frozen)');
export default function () {}`, "p.csv": people})
			if got != c.want {
				t.Errorf("rows = %s\nwant   %s", got, c.want)
			}
		})
	}
}

// The Parser, with ';' as the delimiter: next() gives each row, then
// {done: true, value: []} for good.
func TestCSVParser(t *testing.T) {
	cases := []struct {
		name, file, opts, want string
	}{
		{"semicolons", "a;b\n\"x;y\";2\n", "{ delimiter: ';' }", `[false,["a","b"]],[false,["x;y","2"]],[true,[]],[true,[]]`},
		{"asObjects in header order", "id;name\n1;ada\n", "{ delimiter: ';', asObjects: true }", `[false,{"id":"1","name":"ada"}],[true,[]],[true,[]]`},
		{"fromLine 1 toLine 2", "h\nr1\nr2\nr3\n", "{ fromLine: 1, toLine: 2 }", `[false,["r1"]],[false,["r2"]],[true,[]],[true,[]]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, got := initOut(t, map[string]string{"s.js": `import { open } from 'k6/experimental/fs';
import { Parser } from 'k6/experimental/csv';
const p = new Parser(await open('p.csv'), ` + c.opts + `);
const seen = [];
const take = async () => { const r = await p.next(); seen.push(JSON.stringify([r.done, r.value])); return r.done; };
while (!(await take()) && seen.length < 10) {}
await take();
export const out = seen.join(',');
export default function () {}`, "p.csv": c.file})
			if got != c.want {
				t.Errorf("next() gave %s\nwant        %s", got, c.want)
			}
		})
	}
}

// Options k6 refuses, and a row of the wrong length, with k6's messages.
func TestCSVRefusals(t *testing.T) {
	cases := []struct {
		name, file, call, want string
	}{
		{"asObjects with skipFirstLine", people, "csv.parse(f, { asObjects: true, skipFirstLine: true })",
			"GoError: failed to create a new parser; reason: the 'header' option cannot be enabled when 'skipFirstLine' is true"},
		{"asObjects with fromLine", people, "new csv.Parser(f, { asObjects: true, fromLine: 1 })",
			"GoError: failed to create a new parser; reason: the 'header' option cannot be enabled when 'fromLine' is set to a value greater than 0"},
		{"fromLine past toLine", people, "csv.parse(f, { fromLine: 3, toLine: 1 })",
			"GoError: failed to interpret the provided Parser options; reason: fromLine must be less than or equal to toLine"},
		{"delimiter of two characters", people, "new csv.Parser(f, { delimiter: '::' })",
			"GoError: encountered an error while interpreting Parser options; reason: delimiter must be a single character"},
		{"negative toLine", people, "csv.parse(f, { toLine: -1 })",
			"GoError: failed to create a new parser; reason: the 'toLine' option must be greater than or equal to 0; got -1"},
		{"ragged row", "a,b\nc\n", "csv.parse(f)", "GoError: record on line 2: wrong number of fields"},
		{"not a File", people, "csv.parse('p.csv')", "TypeError: csv.parse: the first argument must be a File from k6/experimental/fs's open()"},
		{"no file", people, "new csv.Parser()", "GoError: csv Parser constructor takes at least one non-nil source argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, got := initOut(t, map[string]string{"s.js": `import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';
const f = await open('p.csv');
let out = 'no error';
try { await ` + c.call + `; } catch (e) { out = String(e); }
export { out };
export default function () {}`, "p.csv": c.file})
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// A VU's Parser made in the init code gives one row per iteration (its
// File is its own: each VU reads every row); a Parser made in an iteration
// is refused, as in k6.
func TestCSVParserAcrossIterations(t *testing.T) {
	s, v1, _ := initOut(t, map[string]string{"s.js": `import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';
const f = await open('p.csv');
const parser = new csv.Parser(f, { skipFirstLine: true });
export default async function () {
  const { done, value } = await parser.next();
  return done ? 'done' : value[0];
}
export async function late() {
  try { new csv.Parser(f); return 'made'; } catch (e) { return String(e); }
}`, "p.csv": people})
	v2, err := s.newVU(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range []*vu{v1, v1, v2, v1, v1} {
		res, err := v.callPlain(context.Background(), "default", nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.String())
	}
	if want := []string{"ada", "bob", "ada", "cyd", "done"}; sprint(got) != sprint(want) {
		t.Errorf("rows by iteration %v; want %v", got, want)
	}
	res, err := v1.callPlain(context.Background(), "late", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "GoError: csv Parser constructor must be called in the init context"; res.String() != want {
		t.Errorf("a Parser in an iteration: %q; want %q", res, want)
	}
}
