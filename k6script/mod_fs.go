package k6script

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/dop251/goja"

	"github.com/knee-dev/knee/internal/limits"
)

// fsModule is "k6/experimental/fs" as k6 defines it: open(path) in the
// init code resolves to a File (path, stat, read, seek). A file is read
// once per script and its bytes shared read-only by every VU (the cache
// open() uses); each File has its own offset. Every Promise is settled
// before the call returns (the work is a copy in memory), so it suits
// knee's rule that a call leaves nothing pending (vu.go settled).
//
// Errors are k6's: a rejection's reason is an Error whose name is the
// kind (NotFoundError, InvalidResourceError, ForbiddenError, TypeError)
// and whose message is k6's, for scripts that test err.name.
func fsModule(v *vu) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	must(o.Set("open", func(path goja.Value) goja.Value { return v.fsOpen(path) }))
	seek := rt.NewObject()
	for name, mode := range map[string]int64{"Start": seekStart, "Current": seekCurrent, "End": seekEnd} {
		must(seek.Set(name, mode))
	}
	must(o.Set("SeekMode", seek))
	return o
}

// k6's SeekMode values.
const (
	seekStart   = 0
	seekCurrent = 1
	seekEnd     = 2
)

// fsFile is one File object's state: the shared bytes and its own offset.
// Only its VU's goroutine touches it.
type fsFile struct {
	path   string // absolute, as k6's File.path
	data   []byte // shared by every VU: never written
	offset int64
}

// fsError is k6's FSError: an Error with the kind as its name.
func (v *vu) fsError(kind, msg string) goja.Value {
	e, err := v.rt.New(v.rt.Get("Error"), v.rt.ToValue(msg))
	if err != nil {
		return v.rt.ToValue(kind + ": " + msg)
	}
	must(e.Set("name", kind))
	return e
}

// settledPromise is a Promise already resolved with val, or rejected with
// reason when it is not nil.
func (v *vu) settledPromise(val, reason goja.Value) goja.Value {
	p, resolve, reject := v.rt.NewPromise()
	if reason != nil {
		_ = reject(reason)
	} else {
		_ = resolve(val)
	}
	return v.rt.ToValue(p)
}

func (v *vu) fsOpen(path goja.Value) goja.Value {
	fail := func(kind, msg string) goja.Value { return v.settledPromise(nil, v.fsError(kind, msg)) }
	switch {
	case !v.init:
		return fail("ForbiddenError", "open() failed; reason: opening a file is allowed only in the Init context")
	case path == nil || goja.IsUndefined(path) || goja.IsNull(path):
		return fail("TypeError", "open() failed; reason: path cannot be null or undefined")
	case path.String() == "":
		return fail("TypeError", "open() failed; reason: path cannot be empty")
	}
	// k6 takes a file:// URL's path, and resolves a relative path against
	// the entry script's directory.
	name := strings.TrimPrefix(path.String(), "file://")
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(v.s.dir, p)
	}
	abs := mustAbs(p)
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fail("NotFoundError", fmt.Sprintf("no such file or directory %q", abs))
	case err != nil:
		return v.settledPromise(nil, v.rt.NewGoError(fmt.Errorf("open() failed, unable to verify if %q exists; reason: %w", abs, unwrapPath(err))))
	case st.IsDir():
		return fail("InvalidResourceError", fmt.Sprintf("cannot open %q: opening a directory is not supported", abs))
	}
	data, err := v.s.readShared(p)
	if err != nil {
		return v.settledPromise(nil, v.rt.NewGoError(fmt.Errorf("open(%q): %w", name, unwrapPath(err))))
	}
	return v.settledPromise(v.fileObject(&fsFile{path: abs, data: data}), nil)
}

// readShared reads a file the script opens once per script (open() and
// k6/experimental/fs share the cache): every VU gets the same bytes.
func (s *Script) readShared(p string) ([]byte, error) {
	if c, ok := s.files.Load(p); ok {
		return c.([]byte), nil
	}
	b, err := limits.ReadFile(p, limits.ScriptOpen, "file a script opens", "split the data into smaller files, or read only what the test needs")
	if err != nil {
		return nil, err
	}
	c, _ := s.files.LoadOrStore(p, b)
	return c.([]byte), nil
}

// fileObject is f as k6's File; k6/experimental/csv finds f from it.
func (v *vu) fileObject(f *fsFile) *goja.Object {
	rt := v.rt
	o := rt.NewObject()
	must(o.Set("path", f.path))
	must(o.Set("stat", func() goja.Value {
		info := rt.NewObject()
		must(info.Set("name", filepath.Base(f.path)))
		must(info.Set("size", int64(len(f.data))))
		return v.settledPromise(info, nil)
	}))
	must(o.Set("read", func(into goja.Value) goja.Value {
		n, err := f.readInto(rt, into)
		if err != nil {
			return v.settledPromise(nil, v.fsError("TypeError", err.Error()))
		}
		if n < 0 {
			return v.settledPromise(goja.Null(), nil) // EOF
		}
		return v.settledPromise(rt.ToValue(n), nil)
	}))
	must(o.Set("seek", func(offset, whence goja.Value) goja.Value {
		pos, err := f.seek(offset, whence)
		if err != nil {
			return v.settledPromise(nil, v.fsError("TypeError", err.Error()))
		}
		return v.settledPromise(rt.ToValue(pos), nil)
	}))
	if v.fsFiles == nil {
		v.fsFiles = map[*goja.Object]*fsFile{}
	}
	v.fsFiles[o] = f
	return o
}

// readInto copies the file's next bytes into the Uint8Array into: how
// many, as k6 counts them, or -1 at the end of the file (k6's null: the
// offset was already at the end).
func (f *fsFile) readInto(rt *goja.Runtime, into goja.Value) (int, error) {
	if into == nil || goja.IsUndefined(into) || goja.IsNull(into) {
		return 0, errors.New("read() failed; reason: into argument cannot be null or undefined")
	}
	o := into.ToObject(rt)
	var ab goja.ArrayBuffer
	ok := false
	if c, b := o.Get("constructor"), o.Get("buffer"); c != nil && b != nil && c.SameAs(rt.Get("Uint8Array")) {
		ab, ok = b.Export().(goja.ArrayBuffer)
	}
	if !ok {
		return 0, errors.New("read() failed; reason: into argument must be a Uint8Array")
	}
	// The view's own bytes (k6 writes from the buffer's start; the same
	// for a Uint8Array of its own buffer, the usual case).
	start, size := o.Get("byteOffset").ToInteger(), o.Get("byteLength").ToInteger()
	buf := ab.Bytes()[start : start+size]
	if f.offset >= int64(len(f.data)) {
		return -1, nil
	}
	n := copy(buf, f.data[f.offset:])
	f.offset += int64(n)
	return n, nil
}

// Read makes a File an io.Reader from its offset (k6/experimental/csv
// reads through it, moving the offset as k6's parser does).
func (f *fsFile) Read(p []byte) (int, error) {
	if f.offset >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[f.offset:])
	f.offset += int64(n)
	return n, nil
}

// seek moves the offset as k6's File.seek does, SeekMode.End included:
// k6 counts it from the last byte (size - 1 + offset), not from the end.
func (f *fsFile) seek(offset, whence goja.Value) (int64, error) {
	off, err := seekInt(offset)
	if err != nil {
		return 0, fmt.Errorf("seek() failed; reason: the offset argument %w", err)
	}
	mode, err := seekInt(whence)
	if err != nil {
		return 0, fmt.Errorf("seek() failed; reason: the whence argument %w", err)
	}
	size := int64(len(f.data))
	pos := f.offset
	switch mode {
	case seekStart:
		if off < 0 {
			return 0, errors.New("offset cannot be negative when using SeekModeStart")
		}
		pos = off
	case seekCurrent:
		pos += off
	case seekEnd:
		if off > 0 {
			return 0, errors.New("offset cannot be positive when using SeekModeEnd")
		}
		pos = size - 1 + off
	default:
		return 0, errors.New("seek() failed; reason: the whence argument must be a SeekMode")
	}
	if pos < 0 {
		return 0, errors.New("seeking before start of file")
	}
	if pos > size {
		return 0, errors.New("seeking beyond end of file")
	}
	f.offset = pos
	return pos, nil
}

// seekInt is an integral number argument, as k6 requires (a string or
// a fraction is refused).
func seekInt(val goja.Value) (int64, error) {
	if val == nil || goja.IsUndefined(val) || goja.IsNull(val) {
		return 0, errors.New("cannot be null or undefined")
	}
	x, ok := val.Export().(int64)
	if !ok {
		fl, isFloat := val.Export().(float64)
		if !isFloat || fl != math.Trunc(fl) || math.IsInf(fl, 0) {
			return 0, errors.New("must be a number")
		}
		x = int64(fl)
	}
	return x, nil
}
