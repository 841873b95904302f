package k8s

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/knee-dev/knee/rundir"
)

// TestRehearsal runs what the manifests describe, on this machine: one knee
// process per completion index with exactly the container's arguments and
// environment (JOB_COMPLETION_INDEX and POD_NAME resolved as the Job
// controller and the kubelet would, $(VAR) expanded as the kubelet does),
// then the merge Job's container, started beside them as on a cluster. The
// one liberty: the volumes' mount paths are mapped to temporary directories.
func TestRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four knee processes; not in -short")
	}
	const runners, rate, dur = 3, 300, 2 * time.Second
	bin := kneetest.BuildKnee(t)
	url := kneetest.DelayServer(t, 5*time.Millisecond)
	tmp := t.TempDir()
	sc := filepath.Join(tmp, "test.yaml")
	os.WriteFile(sc, fmt.Appendf(nil, `scenarios:
  open:
    executor: constant-arrival-rate
    rate: %d
    duration: %s
    preAllocatedVUs: 20
    maxVUs: 100
    gracefulStop: 5s
    requests:
      - url: %s
`, rate, dur, url), 0o644)
	manifest := filepath.Join(tmp, "test-k8s.yaml")
	if out, err := exec.Command(bin, "k8s", "job", sc, "--runners", strconv.Itoa(runners), "--image", "knee:test",
		"--name", "rehearsal", "--start-delay", "3s", "--threshold", "p(50)<1s", "--out", manifest).CombinedOutput(); err != nil {
		t.Fatalf("knee k8s job: %v\n%s", err, out)
	}
	stream, _ := os.ReadFile(manifest)
	o := decodeStrict(t, stream)

	// The volumes, as directories: the Secret's items as files, the claim empty.
	mounts := map[string]string{}
	for _, v := range o.runners.Spec.Template.Spec.Volumes {
		dir := filepath.Join(tmp, "vol-"+v.Name)
		os.MkdirAll(dir, 0o755)
		if v.Secret != nil {
			if v.Secret.SecretName != o.secret.Name {
				t.Fatalf("volume %s mounts Secret %s; the manifests hold %s", v.Name, v.Secret.SecretName, o.secret.Name)
			}
			for _, it := range v.Secret.Items {
				os.WriteFile(filepath.Join(dir, it.Path), []byte(o.secret.StringData[it.Key]), 0o644)
			}
		}
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != o.claim.Name {
			t.Fatalf("volume %s claims %s; the manifests hold %s", v.Name, v.PersistentVolumeClaim.ClaimName, o.claim.Name)
		}
		mounts[v.Name] = dir
	}
	var wg sync.WaitGroup
	outs := make([]string, runners+1)
	errs := make([]error, runners+1)
	mergeC := o.merge.Spec.Template.Spec.Containers[0]
	wg.Go(func() { outs[runners], errs[runners] = runContainer(bin, mergeC, mounts, nil, o.secret) })
	for i := range int(*o.runners.Spec.Completions) {
		pod := map[string]string{
			"metadata.annotations['batch.kubernetes.io/job-completion-index']": strconv.Itoa(i),
			"metadata.name": fmt.Sprintf("%s-%d-x7k2p", o.runners.Name, i),
		}
		c := o.runners.Spec.Template.Spec.Containers[0]
		wg.Go(func() { outs[i], errs[i] = runContainer(bin, c, mounts, pod, o.secret) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("container %d: %v\n%s", i, err, outs[i])
		}
	}
	t.Logf("merge pod:\n%s", outs[runners])

	merged, err := rundir.Open(filepath.Join(mounts["results"], "merged"))
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Meta.Parts) != runners {
		t.Fatalf("the merge holds %d parts, want %d", len(merged.Meta.Parts), runners)
	}
	for i, p := range merged.Meta.Parts {
		want := fmt.Sprintf("rehearsal-runners-%d-x7k2p", i)
		if p.Part.Runner != want {
			t.Errorf("part %d ran as %q, want %q", i, p.Part.Runner, want)
		}
	}
	// 300/s for 2 s is 600 iterations; in thirds, 200 each.
	c := merged.Counters(0, 0)
	if c.Requests+c.DroppedIterations != rate*2 {
		t.Errorf("merge: %d requests + %d dropped, want %d", c.Requests, c.DroppedIterations, rate*2)
	}
	if !strings.Contains(outs[runners], "PASS") {
		t.Errorf("the merge pod did not evaluate its threshold:\n%s", outs[runners])
	}
}

var varRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// runContainer runs knee as the kubelet would run container c: env from
// values, field references (fields) and secret keys (from secret), $(VAR)
// in args expanded from it, mount paths mapped to local directories.
func runContainer(bin string, c corev1.Container, mounts map[string]string, fields map[string]string, secret corev1.Secret) (string, error) {
	env := map[string]string{}
	var envList []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			var ok bool
			if v, ok = fields[e.ValueFrom.FieldRef.FieldPath]; !ok {
				return "", fmt.Errorf("env %s: field %s not known to the rehearsal", e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
		}
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref := e.ValueFrom.SecretKeyRef
			var ok bool
			if v, ok = secret.StringData[ref.Key]; !ok || ref.Name != secret.Name {
				return "", fmt.Errorf("env %s: secret %s key %s not in the manifests", e.Name, ref.Name, ref.Key)
			}
		}
		env[e.Name] = v
		envList = append(envList, e.Name+"="+v)
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		a = varRef.ReplaceAllStringFunc(a, func(m string) string {
			if m == "$$" {
				return "$"
			}
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
		for _, vm := range c.VolumeMounts {
			if rest, ok := strings.CutPrefix(a, vm.MountPath); ok && (rest == "" || rest[0] == '/') {
				a = mounts[vm.Name] + rest
			}
		}
		args[i] = a
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), envList...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return fmt.Sprintf("$ knee %s\n%s", strings.Join(args, " "), out.String()), err
}

// TestStaticBuild builds knee as the Dockerfile does and checks the binary
// asks for no dynamic loader, so it runs in an image with no libc.
func TestStaticBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds knee; not in -short")
	}
	bin := filepath.Join(t.TempDir(), "knee")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/knee-dev/knee/cmd/knee")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary needs a dynamic loader; the scratch image has none")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary links %v", libs)
	}
}
