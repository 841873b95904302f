package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every form a shell gives a path in works: plain, ./, .., absolute, a path
// through a directory and back, and - for standard input. Before ReadPath,
// ./s.yaml and ../s.yaml failed with "invalid argument" (io/fs paths).
func TestReadPathForms(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	file := func(dir, name, url string) {
		body := "scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, requests: [{url: '" + url + "'}]}\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file(sub, "here.yaml", "http://127.0.0.1:1/here")
	file(root, "up.yaml", "http://127.0.0.1:1/up")
	t.Chdir(sub)
	stdin := "scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, requests: [{url: 'http://127.0.0.1:1/stdin'}]}\n"
	for _, tc := range []struct {
		path    string
		wantURL string
		source  string // Config.Source, what errors will name
	}{
		{"here.yaml", "/here", "here.yaml"},
		{"./here.yaml", "/here", "./here.yaml"},
		{"../up.yaml", "/up", "../up.yaml"},
		{"./../sub/here.yaml", "/here", "./../sub/here.yaml"},
		{filepath.Join(sub, "here.yaml"), "/here", filepath.Join(sub, "here.yaml")},
		{filepath.Join(root, "up.yaml"), "/up", filepath.Join(root, "up.yaml")},
		{"-", "/stdin", "<stdin>"},
	} {
		cfg, err := ReadPath(tc.path, strings.NewReader(stdin))
		if err != nil {
			t.Errorf("ReadPath(%q): %v", tc.path, err)
			continue
		}
		if got := cfg.Scenarios[0].Requests[0].URL; !strings.HasSuffix(got, tc.wantURL) {
			t.Errorf("ReadPath(%q) read url %s, want one ending %s", tc.path, got, tc.wantURL)
		}
		if cfg.Source != tc.source {
			t.Errorf("ReadPath(%q): source %q, want %q", tc.path, cfg.Source, tc.source)
		}
	}
}

// A missing file and a bad file are named as given; an error in a file read
// through ../ carries its line.
func TestReadPathErrors(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := "scenarios:\n  a:\n    executor: constant-vus\n    vus: -1\n    duration: 1s\n    requests: [{url: 'http://127.0.0.1:1/'}]\n"
	if err := os.WriteFile(filepath.Join(root, "bad.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	for _, tc := range []struct {
		path  string
		stdin *strings.Reader
		want  string
	}{
		{"./missing.yaml", nil, "./missing.yaml"},
		{"../bad.yaml", nil, "../bad.yaml:4"},
		{"-", strings.NewReader(bad), "<stdin>:4"},
		{"-", nil, "standard input"},
	} {
		var err error
		if tc.stdin == nil {
			_, err = ReadPath(tc.path, nil)
		} else {
			_, err = ReadPath(tc.path, tc.stdin)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadPath(%q): error %v, want one naming %q", tc.path, err, tc.want)
		}
	}
}
