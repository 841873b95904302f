package limits

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	big := filepath.Join(dir, "big")
	os.WriteFile(small, []byte("0123456789"), 0o644)
	os.WriteFile(big, []byte("0123456789A"), 0o644)
	for _, tc := range []struct {
		name, path string
		ok         bool
	}{
		{"at the limit", small, true},
		{"one byte over", big, false},
		{"a device that never ends", "/dev/zero", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadFile(tc.path, 10, "test file", "make it smaller")
			if tc.ok {
				if err != nil || string(b) != "0123456789" {
					t.Errorf("%q, %v; want the 10 bytes", b, err)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.path+": too large: a test file is read up to 10 bytes (fix: make it smaller)") {
				t.Errorf("error %v, want one naming the file, the limit and the fix", err)
			}
		})
	}
	if err := CheckFile("/dev/zero", 10, "script", "x"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("CheckFile(/dev/zero): %v, want not a regular file", err)
	}
	if err := CheckFile(big, 10, "script", "x"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("CheckFile(11 bytes, limit 10): %v, want too large", err)
	}
	if got := MiB(16 << 20); got != "16 MiB" {
		t.Errorf("MiB(16 MiB) = %q", got)
	}
}
