package k6script

import (
	"context"
	"strings"
	"testing"
)

// initOut loads the script written from files and returns its exported
// out, as a VU's init code (awaits included) left it.
func initOut(t *testing.T, files map[string]string) (*Script, *vu, string) {
	t.Helper()
	s, err := Load(context.Background(), writeScript(t, "s.js", files), Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	v, err := s.newVU(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	out := v.exports.Get("out")
	if out == nil {
		return s, v, ""
	}
	return s, v, out.String()
}

// tenBytes is the file the fs cases read: ten bytes, a to j.
const tenBytes = "abcdefghij"

// The File API as k6's source defines it, worked out by hand on tenBytes:
// read counts bytes and gives null only when the offset was already at
// the end; seek's End counts from the last byte (size - 1 + offset).
func TestFSFile(t *testing.T) {
	const head = "import { open, SeekMode } from 'k6/experimental/fs';\nconst f = await open('d.txt');\nconst out = [];\n" +
		"const text = (b, n) => String.fromCharCode(...b.subarray(0, n));\n"
	cases := []struct {
		name, code, want string
	}{
		{"stat", "const st = await f.stat();\nout.push(st.name, st.size, f.path.endsWith('/d.txt') && f.path.startsWith('/'));", "d.txt,10,true"},
		// 4 + 4 + 2 bytes, then null: the offset is at the end.
		{"read in 4-byte steps", "const b = new Uint8Array(4);\nfor (let i = 0; i < 4; i++) { const n = await f.read(b); out.push(n, n === null ? '-' : text(b, n)); }",
			"4,abcd,4,efgh,2,ij,,-"},
		{"seek and read", `const b = new Uint8Array(2);
out.push(await f.seek(3, SeekMode.Start)); await f.read(b); out.push(text(b, 2));
out.push(await f.seek(-1, SeekMode.Current));
out.push(await f.seek(0, SeekMode.End)); out.push(await f.read(b), text(b, 1));
out.push(await f.seek(-2, SeekMode.End));
out.push(await f.seek(10, SeekMode.Start), await f.read(b));`, "3,de,4,9,1,j,7,10,"},
		{"seek refusals", `for (const [o, w] of [[-1, SeekMode.Start], [1, SeekMode.End], [11, SeekMode.Start], [-5, SeekMode.Current], [0, 7], ['1', SeekMode.Start], [1.5, SeekMode.Start]]) {
  try { await f.seek(o, w); out.push('ok'); } catch (e) { out.push(e.name + ': ' + e.message); }
}`, strings.Join([]string{"TypeError: offset cannot be negative when using SeekModeStart",
			"TypeError: offset cannot be positive when using SeekModeEnd", "TypeError: seeking beyond end of file",
			"TypeError: seeking before start of file", "TypeError: seek() failed; reason: the whence argument must be a SeekMode",
			"TypeError: seek() failed; reason: the offset argument must be a number",
			"TypeError: seek() failed; reason: the offset argument must be a number"}, ",")},
		{"read into what is not a Uint8Array", `for (const b of [new ArrayBuffer(4), [0, 0], null]) {
  try { await f.read(b); out.push('ok'); } catch (e) { out.push(e.name + ': ' + e.message); }
}`, "TypeError: read() failed; reason: into argument must be a Uint8Array,TypeError: read() failed; reason: into argument must be a Uint8Array," +
			"TypeError: read() failed; reason: into argument cannot be null or undefined"},
		// Each File has its own offset.
		{"two Files of one path", "const g = await open('./d.txt');\nconst b = new Uint8Array(3);\nawait f.read(b); out.push(text(b, 3)); await g.read(b); out.push(text(b, 3));", "abc,abc"},
		{"open refusals", `for (const p of ['missing.txt', 'dir', '', undefined]) {
  try { await open(p); out.push('ok'); } catch (e) { out.push(e.name + ': ' + e.message.replace(/"\/.*\//, '"')); }
}`, `NotFoundError: no such file or directory "missing.txt",InvalidResourceError: cannot open "dir": opening a directory is not supported,` +
			"TypeError: open() failed; reason: path cannot be empty,TypeError: open() failed; reason: path cannot be null or undefined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, got := initOut(t, map[string]string{"s.js": head + c.code + "\nexport { out };\nexport default function () {}\n",
				"d.txt": tenBytes, "dir/x": ""})
			if got != c.want {
				t.Errorf("out = %q\nwant    %q", got, c.want)
			}
		})
	}
}

// A file is read once per script: every VU's File shares its bytes. open
// after the init code is refused with k6's ForbiddenError.
func TestFSSharedAndInitOnly(t *testing.T) {
	s, v1, _ := initOut(t, map[string]string{"s.js": `import { open } from 'k6/experimental/fs';
const f = await open('d.txt');
export default async function () {
  try { await open('d.txt'); return 'opened'; } catch (e) { return e.name + ': ' + e.message; }
}`, "d.txt": tenBytes})
	v2, err := s.newVU(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	var d1, d2 []byte
	for _, f := range v1.fsFiles {
		d1 = f.data
	}
	for _, f := range v2.fsFiles {
		d2 = f.data
	}
	if len(d1) != len(tenBytes) || len(d2) != len(tenBytes) || &d1[0] != &d2[0] {
		t.Errorf("two VUs' Files: %d and %d bytes, shared %v; want %d bytes, one copy", len(d1), len(d2), len(d1) > 0 && len(d2) > 0 && &d1[0] == &d2[0], len(tenBytes))
	}
	res, err := v1.callPlain(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "ForbiddenError: open() failed; reason: opening a file is allowed only in the Init context"; res.String() != want {
		t.Errorf("open in the default function: %q; want %q", res, want)
	}
}
