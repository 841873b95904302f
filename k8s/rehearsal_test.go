package k8s

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"net"
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

// kubelet runs the containers of the manifests as the kubelet would: env
// from values, field references and the test's Secret; $(VAR) in args
// expanded from it; the pod's volumes as directories of its own (a Secret
// volume holds its items, an emptyDir starts empty); mount paths mapped to
// them. rewrite is the one liberty, applied to each argument last: where
// the cluster's DNS and Service would route, the rehearsal names an address.
type kubelet struct {
	t       *testing.T
	bin     string
	secret  corev1.Secret
	rewrite func(string) string
}

// pod is one started container: its command, output and volumes.
type pod struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	vols map[string]string // volume name → directory
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var varRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// command is container c of spec, with the pod's fields, as a command
// run through wrap (e.g. into a network namespace; nil for none).
func (k *kubelet) command(ctx context.Context, spec corev1.PodSpec, fields map[string]string, wrap []string) *pod {
	k.t.Helper()
	c := spec.Containers[0]
	p := &pod{out: &lockedBuffer{}, vols: map[string]string{}}
	for _, v := range spec.Volumes {
		dir := k.t.TempDir()
		switch {
		case v.Secret != nil:
			if v.Secret.SecretName != k.secret.Name {
				k.t.Fatalf("volume %s mounts Secret %s; the manifests hold %s", v.Name, v.Secret.SecretName, k.secret.Name)
			}
			for _, it := range v.Secret.Items {
				data, ok := k.secret.StringData[it.Key]
				if !ok {
					k.t.Fatalf("volume %s: the Secret has no key %s", v.Name, it.Key)
				}
				os.WriteFile(filepath.Join(dir, it.Path), []byte(data), 0o644)
			}
		case v.EmptyDir != nil:
		default:
			k.t.Fatalf("volume %s: a kind the rehearsal does not know", v.Name)
		}
		p.vols[v.Name] = dir
	}
	env := map[string]string{}
	var envList []string
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			var ok bool
			if v, ok = fields[e.ValueFrom.FieldRef.FieldPath]; !ok {
				k.t.Fatalf("env %s: field %s not known to the rehearsal", e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			var ok bool
			if v, ok = k.secret.StringData[ref.Key]; !ok || ref.Name != k.secret.Name {
				k.t.Fatalf("env %s: Secret %s key %s not in the manifests", e.Name, ref.Name, ref.Key)
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
				a = p.vols[vm.Name] + rest
				break // once: the directory it maps to may start with another mount's path (/tmp)
			}
		}
		args[i] = k.rewrite(a)
	}
	full := append(append(append([]string{}, wrap...), k.bin), args...)
	p.cmd = exec.CommandContext(ctx, full[0], full[1:]...)
	p.cmd.Env = append(os.Environ(), envList...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	fmt.Fprintf(p.out, "$ knee %s\n", strings.Join(args, " "))
	return p
}

// runnerFields are what the Job controller and the kubelet give pod i.
func runnerFields(job string, i int) map[string]string {
	return map[string]string{
		"metadata.annotations['batch.kubernetes.io/job-completion-index']": strconv.Itoa(i),
		"metadata.name": fmt.Sprintf("%s-%d-x7k2p", job, i),
	}
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// fakeKubectl is a kubectl whose port-forward says it forwards to port
// (where the rehearsal's coordinator listens) and records its arguments.
func fakeKubectl(t *testing.T, port int) (dir, argsFile string) {
	dir = t.TempDir()
	argsFile = filepath.Join(dir, "args")
	script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = port-forward ] || exit 3\necho \"$@\" > %s\necho 'Forwarding from 127.0.0.1:%d -> 7070'\nexec sleep 600\n", argsFile, port)
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, argsFile
}

// knee runs the knee binary with args, its exit code and output.
func knee(ctx context.Context, bin string, env []string, args ...string) (int, string) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), fmt.Sprintf("$ knee %s\n%s%v", strings.Join(args, " "), out, err)
}

func writeScenario(t *testing.T, dir, url string, rate int, dur time.Duration) string {
	sc := filepath.Join(dir, "test.yaml")
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
	return sc
}

// TestRehearsal runs the README's Kubernetes sequence on this machine:
// knee k8s job; the manifests "applied" (each container run as the kubelet
// would, the Service's name mapped to the coordinator's loopback port);
// knee k8s fetch with a kubectl whose port-forward is a stand-in; knee
// report on what it fetched.
func TestRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five knee processes; not in -short")
	}
	const runners, rate, dur = 3, 300, 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := kneetest.BuildKnee(t)
	url := kneetest.DelayServer(t, 5*time.Millisecond)
	tmp := t.TempDir()
	sc := writeScenario(t, tmp, url, rate, dur)

	// Step 1: knee k8s job, twice: a test written again has names of its own.
	manifest := filepath.Join(tmp, "checkout-k8s.yaml")
	var o objects
	for i, out := range []string{filepath.Join(tmp, "first.yaml"), manifest} {
		if code, log := knee(ctx, bin, nil, "k8s", "job", sc, "--runners", strconv.Itoa(runners), "--image", "knee:test",
			"--name", "checkout", "--threshold", "p(50)<1s", "--out", out); code != 0 {
			t.Fatalf("knee k8s job: %s", log)
		}
		stream, _ := os.ReadFile(out)
		d := decodeStrict(t, stream)
		if i == 1 && (d.runners.Name == o.runners.Name || d.secret.StringData[TokenKey] == o.secret.StringData[TokenKey]) {
			t.Fatalf("two tests share the name %s or a token", d.runners.Name)
		}
		o = d
	}

	// Step 2: kubectl apply.
	port := freePort(t)
	svc := fmt.Sprintf("http://%s:%d", o.service.Name, o.service.Spec.Ports[0].Port)
	k := &kubelet{t: t, bin: bin, secret: o.secret, rewrite: func(a string) string {
		switch a {
		case ":" + strconv.Itoa(int(o.service.Spec.Ports[0].TargetPort.IntValue())):
			return "127.0.0.1:" + strconv.Itoa(port) // the pod's own address: loopback here
		case svc:
			return "http://127.0.0.1:" + strconv.Itoa(port)
		}
		return a
	}}
	co := k.command(ctx, o.coord.Spec.Template.Spec, nil, nil)
	if err := co.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pods := make([]*pod, runners)
	for i := range pods {
		pods[i] = k.command(ctx, o.runners.Spec.Template.Spec, runnerFields(o.runners.Name, i), nil)
		if err := pods[i].cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}

	// Step 3: knee k8s fetch, while the test runs.
	kubectlDir, argsFile := fakeKubectl(t, port)
	merged := filepath.Join(tmp, "results", "checkout")
	fcode, flog := knee(ctx, bin, []string{"PATH=" + kubectlDir + ":" + os.Getenv("PATH")}, "k8s", "fetch", manifest, "--out", merged)
	for i, p := range pods {
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("runner %d: %v\n%s", i, err, p.out)
		}
	}
	if err := co.cmd.Wait(); err != nil {
		t.Errorf("coordinator: %v\n%s", err, co.out)
	}
	t.Logf("coordinator pod:\n%s", co.out)
	if fcode != 0 {
		t.Fatalf("fetch exited %d:\n%s", fcode, flog)
	}
	pf, _ := os.ReadFile(argsFile)
	if want := fmt.Sprintf("port-forward --address 127.0.0.1 service/%s :7070\n", o.service.Name); string(pf) != want {
		t.Errorf("kubectl ran with %q, want %q", pf, want)
	}
	run, err := rundir.Open(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Meta.Parts) != runners {
		t.Fatalf("the merge holds %d parts, want %d", len(run.Meta.Parts), runners)
	}
	for i, p := range run.Meta.Parts {
		if want := fmt.Sprintf("%s-%d-x7k2p", o.runners.Name, i); p.Part.Runner != want {
			t.Errorf("part %d ran as %q, want %q", i, p.Part.Runner, want)
		}
	}
	// 300/s for 2 s is 600 iterations; in thirds, 200 each.
	c := run.Counters(0, 0)
	if c.Requests+c.DroppedIterations != rate*2 {
		t.Errorf("merge: %d requests + %d dropped, want %d", c.Requests, c.DroppedIterations, rate*2)
	}
	if !strings.Contains(co.out.String(), "PASS  p(50)<1s") {
		t.Errorf("the coordinator did not judge the threshold:\n%s", co.out)
	}

	// Step 4: knee report.
	html := filepath.Join(tmp, "checkout.html")
	if code, log := knee(ctx, bin, nil, "report", merged, "--format", "html", "--out", html); code != 0 {
		t.Fatalf("knee report: %s", log)
	}
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("<html")) {
		t.Errorf("knee report wrote %d bytes, no page", len(b))
	}
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
