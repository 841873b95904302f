// Package cdptest drives a headless Chromium over the Chrome DevTools
// protocol for knee's page tests: load a page, evaluate script, move and
// turn the mouse, and collect console errors, exceptions and every URL the
// page requested. It is a minimal client (a websocket and JSON messages),
// for tests only.
package cdptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/websocket"
)

// Browser is one headless Chromium with one page.
type Browser struct {
	t      testing.TB
	cmd    *exec.Cmd
	ws     *websocket.Conn
	mu     sync.Mutex
	nextID int
	wait   map[int]chan reply
	errs   []string
	urls   []string
	done   chan struct{}
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type message struct {
	ID     int             `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	reply
}

// Find returns the path of Debian's chromium (or Chrome) and skips the test
// loudly when there is none.
func Find(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("SKIPPED: no chromium on PATH, the page was NOT tested in a browser (install it: apt-get install -y chromium)")
	return ""
}

var listening = regexp.MustCompile(`DevTools listening on (ws://127\.0\.0\.1:(\d+)/\S+)`)

// Start launches chromium with every network feature off, a fresh profile
// and the debugging port on loopback, and attaches to its page. It is
// closed when the test ends.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := Find(t)
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--no-zygote", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-extensions", "--user-data-dir="+ProfileDir(t),
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--remote-allow-origins=http://127.0.0.1",
		"--window-size=1200,900", "about:blank")
	// Its own process group, so that closing it ends the renderer and
	// helper processes it started, not only the browser process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := &Browser{t: t, cmd: cmd, wait: map[int]chan reply{}, done: make(chan struct{})}
	t.Cleanup(b.close)
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				port <- m[2]
			}
		}
	}()
	var p string
	select {
	case p = <-port:
	case <-time.After(60 * time.Second):
		t.Fatal("chromium did not open its debugging port within 60 s")
	}
	wsURL, err := pageSocket(p)
	if err != nil {
		t.Fatal(err)
	}
	if b.ws, err = websocket.Dial(wsURL, "", "http://127.0.0.1"); err != nil {
		t.Fatalf("attach to chromium: %v", err)
	}
	go b.read()
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable", "Network.enable"} {
		if _, err := b.Call(m, nil); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// pageSocket finds the websocket of the browser's first page.
func pageSocket(port string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+"/json/list", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			var targets []struct{ Type, WebSocketDebuggerURL string }
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
			for _, tg := range targets {
				if tg.Type == "page" && tg.WebSocketDebuggerURL != "" {
					return tg.WebSocketDebuggerURL, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("chromium lists no page: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (b *Browser) read() {
	defer close(b.done)
	for {
		var m message
		if err := websocket.JSON.Receive(b.ws, &m); err != nil {
			return
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch := b.wait[m.ID]; ch != nil {
				ch <- m.reply
				delete(b.wait, m.ID)
			}
		}
		switch m.Method {
		case "Runtime.exceptionThrown":
			b.errs = append(b.errs, "exception: "+string(m.Params))
		case "Runtime.consoleAPICalled":
			var p struct{ Type string }
			if json.Unmarshal(m.Params, &p) == nil && (p.Type == "error" || p.Type == "assert") {
				b.errs = append(b.errs, "console: "+string(m.Params))
			}
		case "Log.entryAdded":
			var p struct{ Entry struct{ Level, Text string } }
			if json.Unmarshal(m.Params, &p) == nil && p.Entry.Level == "error" {
				b.errs = append(b.errs, "log: "+p.Entry.Text)
			}
		case "Network.requestWillBeSent":
			var p struct{ Request struct{ URL string } }
			if json.Unmarshal(m.Params, &p) == nil {
				b.urls = append(b.urls, p.Request.URL)
			}
		}
		b.mu.Unlock()
	}
}

func (b *Browser) close() {
	if b.ws != nil {
		b.ws.Close()
	}
	if b.cmd.Process != nil {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) // the group chromium leads
		b.cmd.Process.Kill()
		b.cmd.Wait()
	}
}

// ProfileDir returns a fresh, empty chromium profile directory, removed when
// the test ends. Removal retries for a few seconds and only logs when it
// gives up: chromium's helper processes can still be writing into the
// profile for a moment after the browser exited (t.TempDir's cleanup then
// fails the test with "directory not empty", which says nothing about the
// page under test).
func ProfileDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "knee-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := os.RemoveAll(dir)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Logf("chromium profile %s left behind: %v", dir, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

// Call sends one protocol command and waits (up to 30 s) for its result.
func (b *Browser) Call(method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan reply, 1)
	b.wait[id] = ch
	b.mu.Unlock()
	if params == nil {
		params = map[string]any{}
	}
	if err := websocket.JSON.Send(b.ws, map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("cdp %s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("cdp %s: %s", method, r.Error.Message)
		}
		return r.Result, nil
	case <-b.done:
		return nil, fmt.Errorf("cdp %s: browser connection closed", method)
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("cdp %s: no answer in 30 s", method)
	}
}

// Navigate loads url and waits until the document has loaded.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	if _, err := b.Call("Page.navigate", map[string]any{"url": url}); err != nil {
		b.t.Fatal(err)
	}
	if !b.WaitFor(`document.readyState === "complete"`, 30*time.Second) {
		b.t.Fatalf("%s did not finish loading in 30 s", url)
	}
}

// Eval evaluates expr in the page and decodes its value into out.
func (b *Browser) Eval(expr string, out any) error {
	res, err := b.Call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return err
	}
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct{ Text string }
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return errors.New("evaluate " + expr + ": " + r.ExceptionDetails.Text)
	}
	if out == nil || len(r.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(r.Result.Value, out)
}

// String evaluates expr to a string; the test fails on an error.
func (b *Browser) String(expr string) string {
	b.t.Helper()
	var s string
	if err := b.Eval("String("+expr+")", &s); err != nil {
		b.t.Fatal(err)
	}
	return s
}

// WaitFor polls the boolean expr until it holds or timeout passes.
func (b *Browser) WaitFor(expr string, timeout time.Duration) bool {
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		var ok bool
		if b.Eval("!!("+expr+")", &ok) == nil && ok {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// Mouse dispatches one mouse event at page coordinates (x, y): typ is
// mouseMoved, mousePressed, mouseReleased or mouseWheel (deltaY > 0 zooms out).
func (b *Browser) Mouse(typ string, x, y, deltaY float64) {
	b.t.Helper()
	p := map[string]any{"type": typ, "x": x, "y": y}
	switch typ {
	case "mousePressed", "mouseReleased":
		p["button"], p["clickCount"] = "left", 1
	case "mouseMoved":
		p["button"] = "none"
	case "mouseWheel":
		p["deltaX"], p["deltaY"] = 0, deltaY
	}
	if _, err := b.Call("Input.dispatchMouseEvent", p); err != nil {
		b.t.Fatal(err)
	}
}

// Errors is every console error, uncaught exception and error log entry so far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs...)
}

// URLs is every URL the page requested so far.
func (b *Browser) URLs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.urls...)
}

// Loopback reports whether u stays on this machine: a file, data or about
// URL, or http(s) to 127.0.0.1, [::1] or localhost.
func Loopback(u string) bool {
	for _, p := range []string{"file:", "data:", "about:", "http://127.0.0.1:", "http://[::1]:", "http://localhost:"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// Screenshot captures the whole page as PNG bytes.
func (b *Browser) Screenshot() ([]byte, error) {
	res, err := b.Call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true})
	if err != nil {
		return nil, err
	}
	var r struct{ Data []byte }
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	return r.Data, nil
}
