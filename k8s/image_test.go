package k8s

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// dockerfile reads a Dockerfile's instructions (continuations joined,
// comments dropped) and its ARG defaults.
func dockerfile(t *testing.T, path string) (lines []string, args map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args = map[string]string{}
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(l)
		line := cur.String()
		cur.Reset()
		if a, ok := strings.CutPrefix(line, "ARG "); ok {
			k, v, _ := strings.Cut(a, "=")
			args[k] = v
		}
		lines = append(lines, line)
	}
	return lines, args
}

var pinned = regexp.MustCompile(`^golang:(1\.[0-9]+\.[0-9]+)@sha256:[0-9a-f]{64}$`)

// version turns "1.26.8" into comparable numbers.
func version(t *testing.T, s string) [3]int {
	var v [3]int
	for i, p := range strings.SplitN(s, ".", 3) {
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("version %q", s)
		}
		v[i] = n
	}
	return v
}

// TestDockerfilePinned: the build image is pinned by digest, its Go is at
// least go.mod's (the official image refuses a newer go line, with
// GOTOOLCHAIN=local), and the final image is scratch. No docker engine
// here: the file is read, not built.
func TestDockerfilePinned(t *testing.T) {
	lines, args := dockerfile(t, "../Dockerfile")
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	need := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(gomod)
	if need == nil {
		t.Fatal("go.mod has no go line")
	}
	var froms []string
	for _, l := range lines {
		if f, ok := strings.CutPrefix(l, "FROM "); ok {
			img := strings.Fields(f)[0]
			if a, ok := strings.CutPrefix(img, "${"); ok {
				img = args[strings.TrimSuffix(a, "}")]
			}
			froms = append(froms, img)
		}
	}
	if len(froms) != 2 || froms[1] != "scratch" {
		t.Fatalf("FROM %v: want the pinned build image, then scratch", froms)
	}
	m := pinned.FindStringSubmatch(froms[0])
	if m == nil {
		t.Fatalf("build image %q is not golang:X.Y.Z@sha256:DIGEST", froms[0])
	}
	if have, want := version(t, m[1]), version(t, string(need[1])); have[0] < want[0] || have[0] == want[0] && (have[1] < want[1] || have[1] == want[1] && have[2] < want[2]) {
		t.Errorf("the build image has Go %s; go.mod needs %s", m[1], need[1])
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"vendor) export GOFLAGS=-mod=vendor GOPROXY=off", "modcache) export GOFLAGS=-mod=mod GOPROXY=off GOMODCACHE=/src/.modcache", "CGO_ENABLED=0 go build"} {
		if !strings.Contains(all, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
}

// TestMakeImageOffline: make image builds from the binary of make build,
// with the network off, and the static Dockerfile copies only what make
// image put in its context.
func TestMakeImageOffline(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("SKIPPED LOUDLY: make not installed")
	}
	// The README's line, dry-run.
	var line []string
	for _, c := range readmeSequence(t) {
		if c[0] == "make" {
			line = c
		}
	}
	if len(line) < 3 || line[1] != "image" || !strings.HasPrefix(line[2], "IMAGE=") {
		t.Fatalf("the README's sequence has no make image IMAGE=... line: %q", line)
	}
	out, err := exec.Command("make", append([]string{"-C", "..", "-n"}, line[1:]...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("make -n image: %v\n%s", err, out)
	}
	recipe := string(out)
	for _, want := range []string{"CGO_ENABLED=0 go build", "cp knee Dockerfile.static .image/",
		"build --network=none -f .image/Dockerfile.static -t " + strings.TrimPrefix(line[2], "IMAGE=") + " .image"} {
		if !strings.Contains(recipe, want) {
			t.Errorf("make image does not run %q:\n%s", want, recipe)
		}
	}
	lines, _ := dockerfile(t, "../Dockerfile.static")
	context := map[string]bool{"knee": true, "ca-certificates.crt": true, "tmp": true}
	for _, l := range lines {
		switch f := strings.Fields(l); f[0] {
		case "FROM":
			if f[1] != "scratch" {
				t.Errorf("Dockerfile.static: FROM %s would pull", f[1])
			}
		case "COPY":
			if !context[f[1]] {
				t.Errorf("Dockerfile.static copies %s, which make image does not provide", f[1])
			}
		case "RUN":
			t.Errorf("Dockerfile.static: %s needs a shell the scratch image has not", l)
		}
	}
}

// TestOfflineModcacheBuild builds knee as the Dockerfile's OFFLINE=modcache
// path does: no module proxy, modules from the cache only.
func TestOfflineModcacheBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds knee; not in -short")
	}
	bin := filepath.Join(t.TempDir(), "knee")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/knee-dev/knee/cmd/knee")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOPROXY=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOPROXY=off GOFLAGS=-mod=mod go build: %v\n%s", err, out)
	}
}
