package k8s

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/kneetest"
	"github.com/knee-dev/knee/rundir"
)

// netnsTargetEnv, when set, makes TestNetnsTarget a target server on that
// address (the netns rehearsal starts it inside a namespace of its own).
const netnsTargetEnv = "KNEE_NETNS_TARGET"

// TestNetnsTarget is not a test: re-executed by TestNetnsRehearsal with
// netnsTargetEnv set, it serves every request after 5 ms until killed.
func TestNetnsTarget(t *testing.T) {
	addr := os.Getenv(netnsTargetEnv)
	if addr == "" {
		t.Skip("the netns rehearsal's target server; runs only when " + netnsTargetEnv + " is set")
	}
	http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		w.Write([]byte("ok\n"))
	}))
}

// netns is the rehearsal's network: one bridge in a hub namespace, and a
// namespace per host with a veth pair to it, an address in 10.251.77.0/24
// (which exists only inside these namespaces) and its own /etc/hosts.
type netns struct {
	t     *testing.T
	tag   string
	names []string
}

func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func newNetns(t *testing.T) *netns {
	n := &netns{t: t, tag: fmt.Sprintf("knrh%d", os.Getpid()%100000)}
	t.Cleanup(func() {
		// Deleting a namespace deletes its veth end, and so its peer.
		for _, name := range n.names {
			exec.Command("ip", "netns", "del", name).Run()
			os.RemoveAll(filepath.Join("/etc/netns", name))
		}
	})
	hub := n.add("hub")
	ipCmd(t, "-n", hub, "link", "add", "br0", "type", "bridge")
	ipCmd(t, "-n", hub, "link", "set", "br0", "up")
	return n
}

// add makes namespace tag-short and returns its name.
func (n *netns) add(short string) string {
	name := n.tag + "-" + short
	ipCmd(n.t, "netns", "add", name)
	n.names = append(n.names, name)
	return name
}

// host adds a namespace with address 10.251.77.last on the bridge and
// the given hosts file.
func (n *netns) host(short string, last int, hosts string) string {
	name := n.add(short)
	hub, veth := n.tag+"-hub", "v"+strconv.Itoa(last)
	ipCmd(n.t, "-n", hub, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", name)
	ipCmd(n.t, "-n", hub, "link", "set", veth, "master", "br0")
	ipCmd(n.t, "-n", hub, "link", "set", veth, "up")
	ipCmd(n.t, "-n", name, "addr", "add", fmt.Sprintf("10.251.77.%d/24", last), "dev", "eth0")
	ipCmd(n.t, "-n", name, "link", "set", "eth0", "up")
	ipCmd(n.t, "-n", name, "link", "set", "lo", "up")
	dir := filepath.Join("/etc/netns", name) // ip netns exec mounts dir/hosts over /etc/hosts
	if err := os.MkdirAll(dir, 0o755); err != nil {
		n.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte(hosts), 0o644); err != nil {
		n.t.Fatal(err)
	}
	return name
}

// in is the prefix that runs a command in namespace name with host name host.
func in(name, host string) []string {
	return []string{"ip", "netns", "exec", name, "unshare", "--uts", "sh", "-c", `hostname "$0" && exec "$@"`, host}
}

// TestNetnsRehearsal runs the manifests' containers on hosts that are not
// one machine's loopback: three runners, the coordinator and the target
// each in a network namespace of its own, with its own host name, reaching
// each other by name through a bridge. Runner 2 starts 5 s late; runner 1
// is killed mid-test. The barrier must hold (nobody starts before the
// late runner is up), the coordinator must report runner 1's segment
// missing and exit 1, and the merge of the other two must lose nothing.
func TestNetnsRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs knee in network namespaces for ~15 s; not in -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: the netns rehearsal needs root (ip netns add); run as root, as scripts/test.sh does in CI")
	}
	for _, tool := range []string{"ip", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED LOUDLY: %s not found (install iproute2 and util-linux; scripts/test.sh does)", tool)
		}
	}
	const runners, rate, dur, delay = 3, 150, 4 * time.Second, 5 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := kneetest.BuildKnee(t)
	tmp := t.TempDir()
	sc := writeScenario(t, tmp, "http://target:8080/", rate, dur)
	manifest := filepath.Join(tmp, "checkout-k8s.yaml")
	if code, log := knee(ctx, bin, nil, "k8s", "job", sc, "--runners", strconv.Itoa(runners), "--image", "knee:test",
		"--name", "checkout", "--out", manifest); code != 0 {
		t.Fatalf("knee k8s job: %s", log)
	}
	stream, _ := os.ReadFile(manifest)
	o := decodeStrict(t, stream)

	net := newNetns(t)
	hosts := fmt.Sprintf("127.0.0.1 localhost\n10.251.77.1 %s\n10.251.77.2 target\n", o.service.Name)
	coNS := net.host("co", 1, hosts)
	tgNS := net.host("tg", 2, hosts)
	runNS := make([]string, runners)
	for i := range runNS {
		runNS[i] = net.host("r"+strconv.Itoa(i), 10+i, hosts)
	}

	target := exec.CommandContext(ctx, "ip", "netns", "exec", tgNS, os.Args[0], "-test.run=^TestNetnsTarget$")
	target.Env = append(os.Environ(), netnsTargetEnv+"=10.251.77.2:8080")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()

	k := &kubelet{t: t, bin: bin, secret: o.secret, rewrite: func(a string) string { return a }}
	co := k.command(ctx, o.coord.Spec.Template.Spec, nil, in(coNS, "coordinator"))
	if err := co.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pods := make([]*pod, runners)
	var lateStart time.Time
	for i := range pods {
		pods[i] = k.command(ctx, o.runners.Spec.Template.Spec, runnerFields(o.runners.Name, i), in(runNS[i], fmt.Sprintf("runner-host-%d", i)))
	}
	for _, i := range []int{0, 1} {
		if err := pods[i].cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(delay)
	lateStart = time.Now()
	if err := pods[2].cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once released, let runner 1 run a while, then kill it.
	for !strings.Contains(co.out.String(), "released them") {
		if ctx.Err() != nil {
			t.Fatalf("never released:\n%s", co.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(dur / 3)
	pods[1].cmd.Process.Kill()

	merged := filepath.Join(tmp, "results", "checkout")
	fetch := append(in(tgNS, "laptop"), bin, "k8s", "fetch", manifest, "--url", fmt.Sprintf("http://%s:7070", o.service.Name), "--out", merged)
	fcmd := exec.CommandContext(ctx, fetch[0], fetch[1:]...)
	fout, _ := fcmd.CombinedOutput()
	for i, p := range pods {
		err := p.cmd.Wait()
		if (i == 1) != (err != nil) {
			t.Errorf("runner %d: %v\n%s", i, err, p.out)
		}
	}
	coErr := co.cmd.Wait()
	t.Logf("coordinator:\n%s", co.out)
	t.Logf("fetch:\n%s", fout)

	// The merge reports the missing part and exits non-zero; so does fetch.
	if code := co.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("coordinator exited %d (%v), want 1", code, coErr)
	}
	if want := "segment 1/3:2/3, runner 1 (" + o.runners.Name + "-1-x7k2p): its runner went away"; !strings.Contains(co.out.String(), want) {
		t.Errorf("the coordinator does not say %q", want)
	}
	if code := fcmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(fout), "segment 1/3:2/3") {
		t.Errorf("fetch exited %d without naming the missing segment", code)
	}
	run, err := rundir.Open(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Meta.Parts) != 2 || !strings.Contains(strings.Join(run.Meta.Summary.Warnings, "\n"), "PARTIAL: this merge covers 66.7 %") {
		t.Fatalf("merge: %d parts, warnings %q", len(run.Meta.Parts), run.Meta.Summary.Warnings)
	}
	// Nothing else lost: the merge holds every request runners 0 and 2
	// recorded in their own run directories: 150/s for 4 s in thirds, 200 each.
	var own int64
	for _, i := range []int{0, 2} {
		dirs, _ := filepath.Glob(filepath.Join(pods[i].vols["results"], "*", rundir.MetaFile))
		if len(dirs) != 1 {
			t.Fatalf("runner %d left %d run directories", i, len(dirs))
		}
		r, err := rundir.Open(filepath.Dir(dirs[0]))
		if err != nil {
			t.Fatal(err)
		}
		c := r.Counters(0, 0)
		if c.Requests+c.DroppedIterations != rate*4/3 {
			t.Errorf("runner %d: %d requests + %d dropped, want %d", i, c.Requests, c.DroppedIterations, rate*4/3)
		}
		own += c.Requests
	}
	if c := run.Counters(0, 0); c.Requests != own {
		t.Errorf("merge: %d requests, the two runners recorded %d", c.Requests, own)
	}
	// The barrier held: no part started before the late runner was even
	// launched, and they started together (well within the 5 s delay).
	var first, last time.Time
	for _, p := range run.Meta.Parts {
		t0 := p.Part.T0
		if t0.Before(lateStart) {
			t.Errorf("part %s started at %v, before the late runner was launched (%v)", p.Part.Segment, t0, lateStart)
		}
		if first.IsZero() || t0.Before(first) {
			first = t0
		}
		if t0.After(last) {
			last = t0
		}
		if !strings.HasPrefix(p.Env.Host, "runner-host-") {
			t.Errorf("part %s ran on host %q, not its namespace's", p.Part.Segment, p.Env.Host)
		}
	}
	if spread := last.Sub(first); spread > delay/2 {
		t.Errorf("parts started %v apart; the barrier should start them together", spread)
	}
	if run.Meta.Parts[0].Env.Host == run.Meta.Parts[1].Env.Host {
		t.Errorf("both parts ran on host %q", run.Meta.Parts[0].Env.Host)
	}
}
