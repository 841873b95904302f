package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCoordinatorFlagsBadInput: --coordinator without an index, beside
// --start-at, with --repeat or as no URL is bad input, before any load.
func TestCoordinatorFlagsBadInput(t *testing.T) {
	base := []string{"run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/", "--out", t.TempDir(),
		"--execution-segment-sequence", "0,1/2,1"}
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--execution-segment", "0:1/2", "--coordinator", "http://127.0.0.1:1"}, "give --execution-segment-index too"},
		{[]string{"--execution-segment-index", "0", "--coordinator", "http://127.0.0.1:1", "--start-at", "2026-12-01T03:00:00Z"}, "not both"},
		{[]string{"--execution-segment-index", "0", "--coordinator", "http://127.0.0.1:1", "--repeat", "2"}, "not with --repeat 2"},
		{[]string{"--execution-segment-index", "0", "--coordinator", "coord:7070"}, "want a URL"},
	} {
		code, _, stderr := runKnee(t, append(append([]string{}, base...), tc.extra...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.extra, code, stderr, tc.want)
		}
	}
}

// TestCoordinateBarrierFails: no runner ever comes; the coordinator says
// which runners never reported ready and exits 1.
func TestCoordinateBarrierFails(t *testing.T) {
	code, _, stderr := runKnee(t, "coordinate", "--runners", "2", "--dir", t.TempDir(), "--listen", "127.0.0.1:0", "--ready-timeout", "200ms", "--linger", "10ms")
	if code != ExitFailure || !strings.Contains(stderr, "0 of 2 runners ready after 200ms; never ready: runner 0, 1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestK8sJobBadInput(t *testing.T) {
	sc := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(sc, []byte("scenarios:\n  a:\n    executor: constant-arrival-rate\n    rate: 5\n    duration: 10s\n    preAllocatedVUs: 2\n    requests: [{url: 'http://127.0.0.1:1/'}]\n"), 0o644)
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--toleration", "dedicated"}, "--toleration"},
		{[]string{"--node-selector", "pool"}, "want key=value"},
		{[]string{"--cpu", "lots"}, "--cpu \"lots\""},
		{[]string{"--spread", "far"}, "--spread \"far\""},
		{[]string{"--name", "Checkout"}, "--name"},
	} {
		args := append([]string{"k8s", "job", sc, "--runners", "2", "--image", "knee:test"}, tc.extra...)
		code, _, stderr := runKnee(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.extra, code, stderr, tc.want)
		}
	}
}

func TestK8sFetchBadInput(t *testing.T) {
	dir := t.TempDir()
	notManifests := filepath.Join(dir, "x.yaml")
	os.WriteFile(notManifests, []byte("apiVersion: v1\nkind: ConfigMap\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"k8s", "fetch", notManifests}, "--out"},
		{[]string{"k8s", "fetch", notManifests, "--out", dir}, "exists"},
		{[]string{"k8s", "fetch", notManifests, "--out", filepath.Join(dir, "new")}, "no coordinator Service and token"},
	} {
		code, _, stderr := runKnee(t, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestRunnerNotReleased: a runner whose coordinator fails the barrier
// exits 1 (the test failed), with the coordinator's reason, not 2.
func TestRunnerNotReleased(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	done := make(chan int, 1)
	go func() {
		code, _, _ := runKnee(t, "coordinate", "--runners", "2", "--dir", t.TempDir(), "--listen", addr, "--ready-timeout", "1s", "--linger", "10ms")
		done <- code
	}()
	code, _, stderr := runKnee(t, "run", "--rate", "10", "--duration", "1s", "--url", "http://127.0.0.1:1/", "--out", t.TempDir(),
		"--execution-segment-sequence", "0,1/2,1", "--execution-segment-index", "0", "--coordinator", "http://"+addr)
	if code != ExitFailure || !strings.Contains(stderr, "not started by the coordinator") || !strings.Contains(stderr, "never ready: runner 1") {
		t.Errorf("runner: exit %d, stderr %q", code, stderr)
	}
	if c := <-done; c != ExitFailure {
		t.Errorf("coordinator exited %d, want 1", c)
	}
}

// TestK8sFetchWithoutKubectl: no kubectl is a failure said at once, not
// a retry until --timeout.
func TestK8sFetchWithoutKubectl(t *testing.T) {
	dir := t.TempDir()
	manifests := filepath.Join(dir, "t.yaml")
	os.WriteFile(manifests, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: t-scenario, labels: {knee/role: scenario}}\nstringData: {token: x}\n---\n"+
		"apiVersion: v1\nkind: Service\nmetadata: {name: t-coord, labels: {knee/role: coordinator}}\nspec: {ports: [{port: 7070}]}\n"), 0o644)
	code, _, stderr := runKnee(t, "k8s", "fetch", manifests, "--out", filepath.Join(dir, "out"), "--kubectl", filepath.Join(dir, "no-kubectl"))
	if code != ExitFailure || !strings.Contains(stderr, "install kubectl") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
