package k8s

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeImageBuilds runs the README's make image for real, with podman
// standing in for docker (DOCKER may be podman, the Makefile says) and its
// storage in a temporary folder, then reads the image back: knee as the
// entrypoint, the manifests' user 65532 and /results, and the /knee inside
// byte for byte the binary make build wrote. No registry is reached: the
// build runs with --network=none from FROM scratch.
func TestMakeImageBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds knee and an image, about 2 minutes")
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: podman not installed (scripts/test.sh installs it as root); make image is only dry-run by TestMakeImageOffline")
	}
	store := t.TempDir()
	pm := podman + " --storage-driver=vfs --root " + filepath.Join(store, "root") + " --runroot " + filepath.Join(store, "run")
	// Whether podman can build here at all: a one-file image from scratch,
	// the same kind of build. Without that capability (no mounts, no user
	// namespaces in a container) the test skips; with it, make image must
	// work.
	probe := t.TempDir()
	if err := os.WriteFile(filepath.Join(probe, "Dockerfile"), []byte("FROM scratch\nCOPY f /f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(probe, "f"), []byte("probe"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(strings.Fields(pm)[1:], "build", "--network=none", "-t", "localhost/knee-test:probe", probe)
	if out, err := exec.Command(podman, args...).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED LOUDLY: podman cannot build an image on this machine (%v):\n%s", err, out)
	}
	const image = "localhost/knee-test:image"
	make := exec.Command("make", "-C", "..", "image", "IMAGE="+image, "DOCKER="+pm)
	if out, err := make.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Join("..", ".image")) })
	run := func(args ...string) []byte {
		t.Helper()
		full := append(strings.Fields(pm)[1:], args...)
		out, err := exec.Command(podman, full...).Output()
		if err != nil {
			t.Fatalf("podman %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	var cfg []struct {
		Config struct {
			User       string
			WorkingDir string
			Entrypoint []string
		}
	}
	if err := json.Unmarshal(run("image", "inspect", image), &cfg); err != nil || len(cfg) != 1 {
		t.Fatalf("podman image inspect: %v (%d images)", err, len(cfg))
	}
	if c := cfg[0].Config; c.User != "65532:65532" || c.WorkingDir != "/results" || strings.Join(c.Entrypoint, " ") != "/knee" {
		t.Errorf("image config %+v, want user 65532:65532, workdir /results, entrypoint /knee", c)
	}
	archive := filepath.Join(store, "image.tar")
	run("save", "--format", "docker-archive", "-o", archive, image)
	got := binaryInImage(t, archive)
	want, err := os.ReadFile(filepath.Join("..", "knee"))
	if err != nil {
		t.Fatal(err)
	}
	if got != sha256.Sum256(want) {
		t.Errorf("/knee in the image is not the binary make build wrote")
	}
}

// binaryInImage finds /knee in a docker-archive's layers and hashes it.
func binaryInImage(t *testing.T, archive string) [32]byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	outer := tar.NewReader(f)
	for {
		h, err := outer.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(h.Name, ".tar") {
			continue
		}
		layer, err := io.ReadAll(outer)
		if err != nil {
			t.Fatal(err)
		}
		inner := tar.NewReader(bytes.NewReader(layer))
		for {
			ih, err := inner.Next()
			if err != nil {
				break
			}
			if strings.TrimPrefix(ih.Name, "./") == "knee" {
				b, err := io.ReadAll(inner)
				if err != nil {
					t.Fatal(err)
				}
				return sha256.Sum256(b)
			}
		}
	}
	t.Fatal("no /knee in any layer of the image")
	return [32]byte{}
}
