package coord

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Pack writes dir's files as a tar stream: regular files and directories
// only, in WalkDir's (lexical) order, with fixed modes and times, so packing
// the same files twice gives the same bytes (Digest, then the stream).
func Pack(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o755, ModTime: time.Unix(0, 0)})
		}
		if !d.Type().IsRegular() {
			return nil // a run directory holds no links or devices
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: st.Size(), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		// Exactly the size in the header, even if the file grew since.
		_, err = io.Copy(tw, io.LimitReader(f, st.Size()))
		return err
	})
	if err != nil {
		return fmt.Errorf("packing %s: %w", dir, err)
	}
	return tw.Close()
}

// Digest is the hex SHA-256 of Pack(dir).
func Digest(dir string) (string, error) {
	h := sha256.New()
	if err := Pack(h, dir); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// receive spools the tar stream r into a file under tmpDir while hashing
// it, checks the hash against want, and unpacks it into dir (which must not
// exist yet). Nothing is unpacked from a stream whose hash is wrong.
func receive(r io.Reader, want, dir, tmpDir string) error {
	f, err := os.CreateTemp(tmpDir, ".upload-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), r); err != nil {
		return fmt.Errorf("receiving: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("the stream's SHA-256 is %s, the sender announced %s: damaged in transit, send it again", got, want)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	os.RemoveAll(dir) // a failed unpack of an earlier attempt
	return Unpack(f, dir)
}

// Unpack writes the tar stream r (as Pack writes it) into dir, which it
// makes. Only plain files and directories with local names are taken.
func Unpack(r io.Reader, dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpacking: %w", err)
		}
		if !filepath.IsLocal(h.Name) {
			return fmt.Errorf("unpacking: %q is not a name inside the run directory", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("unpacking %s: %w", h.Name, err)
			}
		default:
			return fmt.Errorf("unpacking: %q is neither a file nor a directory", h.Name)
		}
	}
}
