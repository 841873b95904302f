package coord

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knee-dev/knee/guard"
)

// start serves a coordinator of n runners behind a token guard.
func start(t *testing.T, o Options) (*Coordinator, *httptest.Server, string) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = time.Minute
	}
	if o.PartsTimeout == 0 {
		o.PartsTimeout = time.Minute
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	const token = "s3cret-token"
	srv := httptest.NewServer(guard.WithToken(token).Handler(c.Handler()))
	t.Cleanup(srv.Close)
	return c, srv, token
}

// runDir makes a small run directory with the given files.
func runDir(t *testing.T, files map[string]string) string {
	t.Helper()
	d := t.TempDir()
	for name, data := range files {
		p := filepath.Join(d, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func sameFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	if n != len(files) {
		t.Errorf("%s holds %d files, want %d", dir, n, len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s/%s = %q (%v), want %q", dir, name, got, err, want)
		}
	}
}

// TestBarrierWaitsForTheLastRunner: no runner is released before the last
// one reports ready, all get one release instant, and every part arrives
// byte for byte.
func TestBarrierWaitsForTheLastRunner(t *testing.T) {
	c, srv, token := start(t, Options{Runners: 3})
	ctx := context.Background()
	outc := make(chan Outcome, 1)
	go func() {
		o, err := c.Wait(ctx)
		if err != nil {
			t.Error(err)
		}
		outc <- o
	}()
	releases := make([]time.Time, 3)
	returned := make(chan int, 3)
	clients := make([]*Client, 3)
	for i := range 2 {
		clients[i] = &Client{URL: srv.URL, Token: token, Index: i, Runner: "early"}
		go func() {
			var err error
			if releases[i], err = clients[i].Ready(ctx); err != nil {
				t.Error(err)
			}
			returned <- i
		}()
	}
	// Wait until both are registered, then check neither has been released.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c.mu.Lock()
		n := len(c.ready)
		c.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the two runners never registered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case i := <-returned:
		t.Fatalf("runner %d released with 2 of 3 ready", i)
	case <-time.After(300 * time.Millisecond):
	}
	clients[2] = &Client{URL: srv.URL, Token: token, Index: 2, Runner: "late"}
	var err error
	if releases[2], err = clients[2].Ready(ctx); err != nil {
		t.Fatal(err)
	}
	<-returned
	<-returned
	if !releases[0].Equal(releases[2]) || !releases[1].Equal(releases[2]) {
		t.Errorf("release instants differ: %v", releases)
	}
	files := make([]map[string]string, 3)
	for i, cl := range clients {
		files[i] = map[string]string{"run.json": `{"part":` + string(rune('0'+i)) + `}`, "latency.hlog": strings.Repeat("x", 100000+i)}
		if err := cl.Send(ctx, runDir(t, files[i])); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
	o := <-outc
	if len(o.Parts) != 3 || len(o.Missing) != 0 {
		t.Fatalf("outcome %+v", o)
	}
	for i, d := range o.Parts {
		sameFiles(t, d, files[i])
	}
}

// TestBarrierTimesOutNamingTheAbsent: a runner that never comes fails the
// test, and the runner waiting is told why.
func TestBarrierTimesOutNamingTheAbsent(t *testing.T) {
	c, srv, token := start(t, Options{Runners: 3, ReadyTimeout: 300 * time.Millisecond})
	errc := make(chan error, 1)
	go func() {
		_, err := (&Client{URL: srv.URL, Token: token, Index: 1}).Ready(context.Background())
		errc <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c.mu.Lock()
		n := len(c.ready)
		c.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("runner 1 never registered")
		}
	}
	_, err := c.Wait(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1 of 3 runners ready") || !strings.Contains(err.Error(), "runner 0, 2") {
		t.Fatalf("Wait: %v", err)
	}
	if rerr := <-errc; rerr == nil || !strings.Contains(rerr.Error(), "runner 0, 2") || !strings.Contains(rerr.Error(), "410") {
		t.Errorf("the waiting runner was told %v", rerr)
	}
}

// TestDeadRunnerIsMissing: a runner whose connection closes before its
// part is missing at once (no timeout), named by its segment.
func TestDeadRunnerIsMissing(t *testing.T) {
	c, srv, token := start(t, Options{Runners: 2, PartsTimeout: time.Hour, Heartbeat: 20 * time.Millisecond})
	ctx := context.Background()
	cl := []*Client{{URL: srv.URL, Token: token, Index: 0}, {URL: srv.URL, Token: token, Index: 1, Runner: "pod-1"}}
	var wg sync.WaitGroup
	for _, x := range cl {
		wg.Go(func() {
			if _, err := x.Ready(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	outc := make(chan Outcome, 1)
	go func() { o, _ := c.Wait(ctx); outc <- o }()
	wg.Wait()
	files := map[string]string{"run.json": "{}"}
	if err := cl[0].Send(ctx, runDir(t, files)); err != nil {
		t.Fatal(err)
	}
	cl[1].Close() // dies without sending
	select {
	case o := <-outc:
		if len(o.Parts) != 1 || len(o.Missing) != 1 {
			t.Fatalf("outcome %+v", o)
		}
		m := o.Missing[0]
		// EvenSequence(2) is 0,1/2,1: runner 1 runs 1/2:1.
		if m.Index != 1 || m.Segment != "1/2:1" || m.Runner != "pod-1" || !strings.Contains(m.Reason, "went away") {
			t.Errorf("missing %+v", m)
		}
		if s := m.String(); s != "segment 1/2:1, runner 1 (pod-1): its runner went away (connection closed) before sending its part" {
			t.Errorf("missing reads %q", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the coordinator still waits for a runner whose connection closed")
	}
}

func put(t *testing.T, url, token, digest string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, url+PartPath+"?index=0", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(DigestHeader, digest)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestPartCheckedAgainstItsDigest: a damaged stream is refused and leaves
// nothing; the intact one is taken; sent twice, it is taken once.
func TestPartCheckedAgainstItsDigest(t *testing.T) {
	c, srv, token := start(t, Options{Runners: 1})
	var buf bytes.Buffer
	src := runDir(t, map[string]string{"run.json": "{}", "sub/x": "abc"})
	if err := Pack(&buf, src); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	good := hex.EncodeToString(sum[:])
	damaged := bytes.Clone(buf.Bytes())
	damaged[600] ^= 1
	if code := put(t, srv.URL, token, good, damaged); code != http.StatusBadRequest {
		t.Errorf("damaged stream: %d, want 400", code)
	}
	if _, err := os.Stat(filepath.Join(c.opt.Dir, "part-0")); err == nil {
		t.Error("a damaged stream was unpacked")
	}
	if code := put(t, srv.URL, "wrong", good, buf.Bytes()); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", code)
	}
	if code := put(t, srv.URL, token, good, buf.Bytes()); code != http.StatusOK {
		t.Fatalf("intact stream: %d", code)
	}
	if code := put(t, srv.URL, token, good, buf.Bytes()); code != http.StatusOK {
		t.Errorf("the same part again: %d, want 200", code)
	}
	other := strings.Repeat("0", 64)
	if code := put(t, srv.URL, token, other, buf.Bytes()); code != http.StatusConflict {
		t.Errorf("another part for index 0: %d, want 409", code)
	}
	sameFiles(t, filepath.Join(c.opt.Dir, "part-0"), map[string]string{"run.json": "{}", "sub/x": "abc"})
}

// TestSendRetries: a coordinator that fails twice is tried again.
func TestSendRetries(t *testing.T) {
	c, err := New(Options{Runners: 1, Dir: t.TempDir(), ReadyTimeout: time.Minute, PartsTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	h := c.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	var log bytes.Buffer
	cl := &Client{URL: srv.URL, Index: 0, Log: &log}
	if err := cl.Send(context.Background(), runDir(t, map[string]string{"run.json": "{}"})); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 || strings.Count(log.String(), "trying again") != 2 {
		t.Errorf("%d calls, log:\n%s", calls.Load(), log.String())
	}
}

// TestFetchResult: the published directory arrives whole with its verdict,
// and Fetched tells the coordinator it may stop.
func TestFetchResult(t *testing.T) {
	c, srv, token := start(t, Options{Runners: 1})
	out := filepath.Join(t.TempDir(), "sub", "merged")
	// Not published yet: Fetch waits; publish while it does.
	files := map[string]string{"run.json": `{"id":"m"}`, "counters.jsonl": "{}\n{}\n"}
	go func() {
		time.Sleep(100 * time.Millisecond)
		c.Publish(runDir(t, files), 99, "thresholds failed on the merge")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exit, msg, err := Fetch(ctx, srv.URL, token, out, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if exit != 99 || msg != "thresholds failed on the merge" {
		t.Errorf("exit %d, message %q", exit, msg)
	}
	sameFiles(t, out, files)
	select {
	case <-c.Fetched():
	default:
		t.Error("Fetched not closed after a whole download")
	}
	if _, _, err := Fetch(ctx, srv.URL, token, out, nil, nil); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("fetch into an existing directory: %v", err)
	}
}

func TestUnpackRefusesEscapes(t *testing.T) {
	for _, h := range []tar.Header{
		{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "/etc/evil", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		tw.WriteHeader(&h)
		tw.Close()
		if err := Unpack(&buf, filepath.Join(t.TempDir(), "x")); err == nil {
			t.Errorf("unpacked %q", h.Name)
		}
	}
}

func TestLateAndDuplicateRunnersRefused(t *testing.T) {
	c, srv, token := start(t, Options{Runners: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // Wait returns, so the held ready request ends
	go c.Wait(ctx)
	first := &Client{URL: srv.URL, Token: token, Index: 0}
	if _, err := first.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err := (&Client{URL: srv.URL, Token: token, Index: 0}).Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "after the test started") {
		t.Errorf("a runner after the release: %v", err)
	}
	_, err = (&Client{URL: srv.URL, Token: token, Index: 5}).Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "want 0 to 0") {
		t.Errorf("index out of range: %v", err)
	}
}

// TestFetchLearnsTheFailure: a test that never started is published as a
// failure, and Fetch returns its message at once instead of waiting.
func TestFetchLearnsTheFailure(t *testing.T) {
	c, srv, token := start(t, Options{Runners: 2})
	c.Publish("", 1, "the test did not start: 1 of 2 runners ready")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, err := Fetch(ctx, srv.URL, token, filepath.Join(t.TempDir(), "out"), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "410") || !strings.Contains(err.Error(), "1 of 2 runners ready") {
		t.Errorf("Fetch: %v", err)
	}
	select {
	case <-c.Fetched():
	default:
		t.Error("the failure was told but Fetched is not closed")
	}
}

// TestPartStreamsInBoundedMemory sends a 64 MiB part through the client
// and the coordinator (both in this process): what they allocate stays far
// below the part's size, so neither holds it whole. Held whole, the bytes
// alone would be 64 MiB of allocation.
func TestPartStreamsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 64 MiB; not in -short")
	}
	const size = 64 << 20
	src := t.TempDir()
	f, err := os.Create(filepath.Join(src, "latency.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil { // sparse: no memory to write it
		t.Fatal(err)
	}
	f.Close()
	c, srv, token := start(t, Options{Runners: 1})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := (&Client{URL: srv.URL, Token: token, Index: 0}).Send(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB part: %d KiB allocated", size>>20, alloc>>10)
	if alloc > size/4 {
		t.Errorf("sending a %d MiB part allocated %d MiB", size>>20, alloc>>20)
	}
	st, err := os.Stat(filepath.Join(c.opt.Dir, "part-0", "latency.hlog"))
	if err != nil || st.Size() != size {
		t.Errorf("received %v, %v; want %d bytes", st, err, size)
	}
}
