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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/knee-dev/knee/load/schedule"
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
	out  *kneetest.Buffer
	vols map[string]string // volume name → directory
}

var varRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// command is container c of spec, with the pod's fields, as a command
// run through wrap (e.g. into a network namespace; nil for none).
func (k *kubelet) command(ctx context.Context, spec corev1.PodSpec, fields map[string]string, wrap []string) *pod {
	k.t.Helper()
	c := spec.Containers[0]
	p := &pod{out: &kneetest.Buffer{}, vols: map[string]string{}}
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

// readmeSequence is the Kubernetes sequence of docs/many-runners.md, one argv per command
// (lines joined at a trailing backslash, split at &&, words split as a
// shell does for the quoting it uses: '...').
func readmeSequence(t *testing.T) [][]string {
	b, err := os.ReadFile("../docs/many-runners.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- k8s-sequence -->\n```\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/many-runners.md has no <!-- k8s-sequence --> block")
	}
	var cmds [][]string
	for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		for _, c := range strings.Split(line, "&&") {
			var words []string
			var w strings.Builder
			quoted, inWord := false, false
			for _, r := range c {
				switch {
				case r == '\'':
					quoted, inWord = !quoted, true
				case r == ' ' && !quoted:
					if inWord {
						words = append(words, w.String())
						w.Reset()
						inWord = false
					}
				default:
					w.WriteRune(r)
					inWord = true
				}
			}
			if inWord {
				words = append(words, w.String())
			}
			if len(words) > 0 {
				cmds = append(cmds, words)
			}
		}
	}
	return cmds
}

// flagValue is the value of --name in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// TestRehearsal runs the README's Kubernetes sequence on this machine, each
// line as written: make image and docker push are left to TestMakeImageOffline
// (no docker engine here); knee k8s job; kubectl apply as the kubelet would
// run each container (the Service's name mapped to the coordinator's
// loopback port); knee k8s fetch with a kubectl whose port-forward is a
// stand-in; knee report on what it fetched.
func TestRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a dozen knee processes; not in -short")
	}
	const rate, dur = 300, 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := kneetest.BuildKnee(t)
	url := kneetest.DelayServer(t, 5*time.Millisecond)
	tmp := t.TempDir()
	run := func(env []string, args ...string) (int, string) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir, cmd.Env = tmp, append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), fmt.Sprintf("$ knee %s\n%s%v", strings.Join(args, " "), out, err)
	}

	var o objects
	var manifest string
	var co *pod
	var pods []*pod
	port := freePort(t)
	steps := map[string]bool{}
	for _, cmd := range readmeSequence(t) {
		line := strings.Join(cmd, " ")
		switch {
		case cmd[0] == "make" || cmd[0] == "docker":
			t.Logf("%s: no docker engine here; make -n image is checked by TestMakeImageOffline", line)
			steps["image"] = true

		case cmd[0] == "knee" && cmd[1] == "k8s" && cmd[2] == "job":
			writeScenario(t, tmp, url, rate, dur)
			os.Rename(filepath.Join(tmp, "test.yaml"), filepath.Join(tmp, cmd[3]))
			if code, log := run(nil, cmd[1:]...); code != 0 {
				t.Fatalf("%s", log)
			}
			manifest = filepath.Join(tmp, flagValue(cmd, "--out"))
			stream, _ := os.ReadFile(manifest)
			o = decodeStrict(t, stream)
			// The same line again gives a test of its own: no name or token shared.
			again := slices.Clone(cmd[1:])
			again[slices.Index(again, "--out")+1] = "again.yaml"
			if code, log := run(nil, again...); code != 0 {
				t.Fatalf("%s", log)
			}
			stream, _ = os.ReadFile(filepath.Join(tmp, "again.yaml"))
			if d := decodeStrict(t, stream); d.runners.Name == o.runners.Name || d.secret.StringData[TokenKey] == o.secret.StringData[TokenKey] {
				t.Fatalf("two tests share the name %s or a token", d.runners.Name)
			}
			steps["job"] = true

		case cmd[0] == "kubectl" && cmd[1] == "apply":
			if filepath.Join(tmp, cmd[3]) != manifest {
				t.Fatalf("%s applies another file than knee k8s job wrote", line)
			}
			svc := fmt.Sprintf("http://%s:%d", o.service.Name, o.service.Spec.Ports[0].Port)
			k := &kubelet{t: t, bin: bin, secret: o.secret, rewrite: func(a string) string {
				switch a {
				case ":" + strconv.Itoa(o.service.Spec.Ports[0].TargetPort.IntValue()):
					return "127.0.0.1:" + strconv.Itoa(port) // the pod's own address: loopback here
				case svc:
					return "http://127.0.0.1:" + strconv.Itoa(port)
				}
				return a
			}}
			co = k.command(ctx, o.coord.Spec.Template.Spec, nil, nil)
			if err := co.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for i := range int(*o.runners.Spec.Completions) {
				p := k.command(ctx, o.runners.Spec.Template.Spec, runnerFields(o.runners.Name, i), nil)
				if err := p.cmd.Start(); err != nil {
					t.Fatal(err)
				}
				pods = append(pods, p)
			}
			steps["apply"] = true

		case cmd[0] == "knee" && cmd[1] == "k8s" && cmd[2] == "fetch":
			kubectlDir, argsFile := fakeKubectl(t, port)
			code, log := run([]string{"PATH=" + kubectlDir + ":" + os.Getenv("PATH")}, cmd[1:]...)
			for i, p := range pods {
				if err := p.cmd.Wait(); err != nil {
					t.Errorf("runner %d: %v\n%s", i, err, p.out)
				}
			}
			if err := co.cmd.Wait(); err != nil {
				t.Errorf("coordinator: %v\n%s", err, co.out)
			}
			t.Logf("coordinator pod:\n%s", co.out)
			if code != 0 {
				t.Fatalf("fetch exited %d:\n%s", code, log)
			}
			pf, _ := os.ReadFile(argsFile)
			if want := fmt.Sprintf("port-forward --address 127.0.0.1 service/%s :7070\n", o.service.Name); string(pf) != want {
				t.Errorf("kubectl ran with %q, want %q", pf, want)
			}
			merged, err := rundir.Open(filepath.Join(tmp, flagValue(cmd, "--out")))
			if err != nil {
				t.Fatal(err)
			}
			if len(merged.Meta.Parts) != len(pods) || len(pods) != 10 {
				t.Fatalf("the merge holds %d parts of %d runners, want 10", len(merged.Meta.Parts), len(pods))
			}
			// Pod i ran segment i of the sequence: 0:1/10, 1/10:1/5, ...
			seq, _ := schedule.EvenSequence(10)
			podOf := map[string]string{}
			for i, seg := range seq {
				podOf[seg.String()] = fmt.Sprintf("%s-%d-x7k2p", o.runners.Name, i)
			}
			// Each part records the coordinator's clock at the release (the
			// instant its log prints) and its own start against it.
			rel := regexp.MustCompile(`released at (\S+);`).FindStringSubmatch(co.out.String())
			if rel == nil {
				t.Fatalf("the coordinator did not log the release:\n%s", co.out)
			}
			release, _ := time.Parse(time.RFC3339Nano, rel[1])
			for _, p := range merged.Meta.Parts {
				if !p.Part.StartAt.Equal(release) || p.Part.StartOffset != p.Part.T0.Sub(release) {
					t.Errorf("segment %s: start_at %v, offset %v; the release was at %v, its start at %v", p.Part.Segment, p.Part.StartAt, p.Part.StartOffset, release, p.Part.T0)
				}
			}
			for _, p := range merged.Meta.Parts {
				if want := podOf[p.Part.Segment]; p.Part.Runner != want || want == "" {
					t.Errorf("segment %s ran as %q, want %q", p.Part.Segment, p.Part.Runner, want)
				}
				delete(podOf, p.Part.Segment)
			}
			// 300/s for 2 s is 600 iterations; in tenths, 60 each.
			c := merged.Counters(0, 0)
			if c.Requests+c.DroppedIterations != rate*2 {
				t.Errorf("merge: %d requests + %d dropped, want %d", c.Requests, c.DroppedIterations, rate*2)
			}
			if th := flagValue(o.coord.Spec.Template.Spec.Containers[0].Args, "--threshold"); !strings.Contains(co.out.String(), "PASS  "+th) {
				t.Errorf("the coordinator did not judge %q:\n%s", th, co.out)
			}
			steps["fetch"] = true

		case cmd[0] == "knee" && cmd[1] == "report":
			if code, log := run(nil, cmd[1:]...); code != 0 {
				t.Fatalf("%s", log)
			}
			if b, _ := os.ReadFile(filepath.Join(tmp, flagValue(cmd, "--out"))); !bytes.Contains(b, []byte("<html")) {
				t.Errorf("knee report wrote %d bytes, no page", len(b))
			}
			steps["report"] = true

		default:
			t.Fatalf("the README's sequence has a line the rehearsal does not know: %s", line)
		}
	}
	if len(steps) != 5 {
		t.Errorf("the README's sequence covered %v; want image, job, apply, fetch and report", steps)
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
