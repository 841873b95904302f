package fault

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/knee-dev/knee/cgroup"
	"github.com/knee-dev/knee/internal/kneetest"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakeV1 is a v1 hierarchy in a temporary directory, cpu and cpuacct
// mounted apart as on this machine.
func fakeV1(t *testing.T) Hierarchy {
	root := t.TempDir()
	h := Hierarchy{V1: map[string]string{}, CPUs: 2}
	for _, ctl := range []string{"cpu", "cpuacct", "freezer"} {
		h.V1[ctl] = filepath.Join(root, ctl)
		kneetest.WriteFiles(t, h.V1[ctl], map[string]string{"cgroup.procs": "", "tasks": ""})
	}
	return h
}

// fakeV2 is a cgroup2 root in a temporary directory offering controllers.
func fakeV2(t *testing.T, controllers string) Hierarchy {
	root := t.TempDir()
	kneetest.WriteFiles(t, root, map[string]string{
		"cgroup.controllers": controllers, "cgroup.subtree_control": "", "cgroup.procs": "",
	})
	return Hierarchy{V2: root, CPUs: 2}
}

func TestFakeV1Cgroup(t *testing.T) {
	h := fakeV1(t)
	cg, err := NewCgroup(h, "run1")
	if err != nil {
		t.Fatal(err)
	}
	cpu := filepath.Join(h.V1["cpu"], "knee/run1")
	acct := filepath.Join(h.V1["cpuacct"], "knee/run1")
	frz := filepath.Join(h.V1["freezer"], "knee/run1")
	if cg.Version() != 1 || cg.String() != frz || cg.Method() != "cgroup-v1-freezer" {
		t.Errorf("Version %d String %q Method %q", cg.Version(), cg.String(), cg.Method())
	}
	if err := cg.SetCPUs(0.5); err != nil {
		t.Fatal(err)
	}
	if err := cg.AddPID(4242); err != nil {
		t.Fatal(err)
	}
	if err := cg.Freeze(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		cpu + "/cpu.cfs_period_us": "100000",
		cpu + "/cpu.cfs_quota_us":  "50000",
		cpu + "/cgroup.procs":      "4242",
		acct + "/cgroup.procs":     "4242",
		frz + "/cgroup.procs":      "4242",
		frz + "/freezer.state":     "FROZEN",
	}
	for path, content := range want {
		if got := readFile(t, path); got != content {
			t.Errorf("%s = %q, want %q", path, got, content)
		}
	}
	if err := cg.Thaw(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, frz+"/freezer.state"); got != "THAWED" {
		t.Errorf("freezer.state after Thaw = %q", got)
	}

	kneetest.WriteFiles(t, cpu, map[string]string{"cpu.stat": "nr_periods 40\nnr_throttled 12\nthrottled_time 3500000000\n"})
	kneetest.WriteFiles(t, acct, map[string]string{"cpuacct.usage": "2000000000\n"})
	st, err := cg.CPUStat()
	wantSt := CPUStat{Usage: 2 * time.Second, Periods: 40, Throttled: 12, ThrottledTime: 3500 * time.Millisecond}
	if err != nil || st != wantSt {
		t.Errorf("CPUStat = %+v, %v; want %+v", st, err, wantSt)
	}
	lim, err := cg.Limits()
	wantLim := map[string]string{"cgroup": cpu, "cpu.cfs_quota_us": "50000", "cpu.cfs_period_us": "100000", "cpus": "0.50"}
	if err != nil || !reflect.DeepEqual(lim, wantLim) {
		t.Errorf("Limits = %v, %v; want %v", lim, err, wantLim)
	}
	if err := cg.ClearCPUs(); err != nil || readFile(t, cpu+"/cpu.cfs_quota_us") != "-1" {
		t.Errorf("ClearCPUs: %v, quota %q; want -1", err, readFile(t, cpu+"/cpu.cfs_quota_us"))
	}

	// Remove thaws before anything else. (Deleting the directories is
	// checked on real cgroups: a fake directory keeps its files, so rmdir fails.)
	if err := cg.Freeze(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{cpu, acct, frz} {
		kneetest.WriteFiles(t, d, map[string]string{"cgroup.procs": ""}) // as if 4242 had exited
	}
	_ = cg.Remove()
	if got := readFile(t, frz+"/freezer.state"); got != "THAWED" {
		t.Errorf("freezer.state after Remove = %q, want THAWED", got)
	}
}

func TestFakeV1CoMounted(t *testing.T) {
	root := t.TempDir()
	h := Hierarchy{V1: map[string]string{"cpu": root + "/cpu,cpuacct", "cpuacct": root + "/cpu,cpuacct"}, CPUs: 4}
	cg, err := NewCgroup(h, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := cg.uniqueDirs(); len(got) != 1 {
		t.Errorf("uniqueDirs = %v, want one directory", got)
	}
	if err := cg.AddPID(7); err != nil || readFile(t, root+"/cpu,cpuacct/knee/a/cgroup.procs") != "7" {
		t.Errorf("AddPID: %v", err)
	}
	if err := cg.Freeze(context.Background()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Freeze without freezer = %v, want ErrUnsupported", err)
	}
	if err := cg.SetCPUs(3.5); err != nil || readFile(t, root+"/cpu,cpuacct/knee/a/cpu.cfs_quota_us") != "350000" {
		t.Errorf("SetCPUs(3.5): %v", err)
	}
}

func TestFakeV2Cgroup(t *testing.T) {
	h := fakeV2(t, "cpuset cpu io memory pids")
	cg, err := NewCgroup(h, "run1")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.V2, "knee/run1")
	if cg.Version() != 2 || cg.String() != dir || cg.Method() != "cgroup-v2-freeze" {
		t.Errorf("Version %d String %q Method %q", cg.Version(), cg.String(), cg.Method())
	}
	for _, p := range []string{h.V2 + "/cgroup.subtree_control", h.V2 + "/knee/cgroup.subtree_control"} {
		if got := readFile(t, p); got != "+cpu" {
			t.Errorf("%s = %q, want +cpu", p, got)
		}
	}
	if err := cg.SetCPUs(0.5); err != nil || readFile(t, dir+"/cpu.max") != "50000 100000" {
		t.Errorf("SetCPUs(0.5): %v, cpu.max %q", err, readFile(t, dir+"/cpu.max"))
	}
	kneetest.WriteFiles(t, dir, map[string]string{"cgroup.events": "populated 1\nfrozen 1\n"})
	if err := cg.Freeze(context.Background()); err != nil || readFile(t, dir+"/cgroup.freeze") != "1" {
		t.Errorf("Freeze: %v", err)
	}
	if err := cg.Thaw(); err != nil || readFile(t, dir+"/cgroup.freeze") != "0" {
		t.Errorf("Thaw: %v", err)
	}
	kneetest.WriteFiles(t, dir, map[string]string{"cpu.stat": "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\nnr_periods 30\nnr_throttled 7\nthrottled_usec 250000\n"})
	st, err := cg.CPUStat()
	wantSt := CPUStat{Usage: 1500 * time.Millisecond, Periods: 30, Throttled: 7, ThrottledTime: 250 * time.Millisecond}
	if err != nil || st != wantSt {
		t.Errorf("CPUStat = %+v, %v; want %+v", st, err, wantSt)
	}
	lim, err := cg.Limits()
	wantLim := map[string]string{"cgroup": dir, "cpu.max": "50000 100000", "cpus": "0.50"}
	if err != nil || !reflect.DeepEqual(lim, wantLim) {
		t.Errorf("Limits = %v, %v; want %v", lim, err, wantLim)
	}
}

func TestFakeV2WithoutCPUController(t *testing.T) {
	h := fakeV2(t, "memory pids")
	cg, err := NewCgroup(h, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := cg.SetCPUs(1); !errors.Is(err, ErrUnsupported) {
		t.Errorf("SetCPUs without cpu controller = %v, want ErrUnsupported", err)
	}
	if got := readFile(t, h.V2+"/cgroup.subtree_control"); got != "" {
		t.Errorf("subtree_control = %q, want untouched", got)
	}
}

func TestFakeV2FreezeTimesOutAndThaws(t *testing.T) {
	h := fakeV2(t, "cpu")
	cg, err := NewCgroup(h, "stuck")
	if err != nil {
		t.Fatal(err)
	}
	dir := cg.Dir()
	kneetest.WriteFiles(t, dir, map[string]string{"cgroup.events": "populated 1\nfrozen 0\n"})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := cg.Freeze(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Freeze of a cgroup that never freezes = %v, want DeadlineExceeded", err)
		}
	})
	if got := readFile(t, dir+"/cgroup.freeze"); got != "0" {
		t.Errorf("cgroup.freeze after a failed Freeze = %q, want 0 (thawed)", got)
	}
}

func TestBadInput(t *testing.T) {
	h := fakeV1(t)
	cg, err := NewCgroup(h, "ok")
	if err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	kneetest.WriteFiles(t, filepath.Dir(notDir), map[string]string{"file": "x"})
	tests := []struct {
		name string
		err  error
		want error
		msg  string // substring of the message
	}{
		{"cpus 0", cg.SetCPUs(0), ErrBadCPUs, "cpus 0 out of range"},
		{"cpus -1", cg.SetCPUs(-1), ErrBadCPUs, "at most 2"},
		{"cpus NaN", cg.SetCPUs(math.NaN()), ErrBadCPUs, "out of range"},
		{"cpus above machine", cg.SetCPUs(2.5), ErrBadCPUs, "cpus 2.5 out of range"},
		{"cpus below 1 ms quota", cg.SetCPUs(0.001), ErrBadCPUs, "at least 0.01"},
		{"add pid 0", cg.AddPID(0), ErrNoSuchPID, "pid 0 does not exist"},
		{"empty name", second(NewCgroup(h, "")), ErrBadName, "single path element"},
		{"name with slash", second(NewCgroup(h, "a/b")), ErrBadName, `"a/b"`},
		{"name dotdot", second(NewCgroup(h, "..")), ErrBadName, `".."`},
		{"not a cgroup dir", second(OpenIn(h, t.TempDir())), ErrNotCgroup, "is not a cgroup (no cgroup.controllers or tasks file)"},
		{"missing path", second(OpenIn(h, "/no/such/cgroup")), ErrNotCgroup, "/no/such/cgroup is not a cgroup"},
		{"a file", second(OpenIn(h, notDir)), ErrNotCgroup, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ve *ValidationError
			if !errors.Is(tt.err, tt.want) || !errors.As(tt.err, &ve) || !strings.Contains(tt.err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v as *ValidationError containing %q", tt.err, tt.want, tt.msg)
			}
		})
	}
	if _, err := NewCgroup(Hierarchy{}, "x"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("NewCgroup without cgroups = %v, want ErrUnsupported", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestOpenInFindsSiblingControllers(t *testing.T) {
	h := fakeV1(t)
	for _, ctl := range cgroup.V1Controllers() {
		kneetest.WriteFiles(t, filepath.Join(h.V1[ctl.Name], "docker/abc"), map[string]string{"tasks": "", ctl.Marker: "0"})
	}
	cg, err := OpenIn(h, filepath.Join(h.V1["cpu"], "docker/abc"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ctl := range cgroup.V1Controllers() {
		if got, want := cg.dirs[ctl.Name], filepath.Join(h.V1[ctl.Name], "docker/abc"); got != want {
			t.Errorf("%s dir = %q, want %q", ctl.Name, got, want)
		}
	}
	if cg.created {
		t.Error("an opened cgroup must not be marked created")
	}

	v2 := fakeV2(t, "cpu")
	kneetest.WriteFiles(t, v2.V2+"/system.slice/db.service", map[string]string{"cgroup.controllers": "cpu", "cpu.max": "max 100000"})
	cg, err = OpenIn(v2, v2.V2+"/system.slice/db.service")
	if err != nil || cg.Version() != 2 {
		t.Fatalf("OpenIn v2 = %v, %v", cg, err)
	}
	if lim, err := cg.Limits(); err != nil || lim["cpus"] != "max" {
		t.Errorf("Limits = %v, %v; want cpus max", lim, err)
	}
}
