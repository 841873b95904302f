package cli

import (
	"encoding/json"
	"github.com/knee-dev/knee/internal/kneetest"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/lab"
)

// knee lab serve is behind guard: on loopback it answers loopback Host
// names only (a DNS-rebinding name gets 421) and refuses another site's
// page posting text/plain to /api/orders (it got 201); a client that is not
// a browser still orders (201), so the lab's load is unchanged.
func TestLabServeGuarded(t *testing.T) {
	sig := make(chan os.Signal, 1)
	var out, errb kneetest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(Env{Args: []string{"lab", "serve", "--addr", "127.0.0.1:0"}, Stdout: &out, Stderr: &errb,
			Getenv: func(string) string { return "" }, Signals: sig})
	}()
	var base string
	for deadline := time.Now().Add(time.Minute); base == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, l := range strings.Split(out.String(), "\n") {
			if a, ok := strings.CutPrefix(l, lab.ListeningPrefix); ok {
				base = "http://" + strings.TrimSpace(a)
			}
		}
	}
	if base == "" {
		t.Fatalf("knee lab serve never listened:\n%s\n%s", out.String(), errb.String())
	}
	defer func() {
		sig <- os.Interrupt
		<-done
	}()
	resp, err := http.Get(base + "/api/books")
	if err != nil {
		t.Fatal(err)
	}
	var page struct{ Books []struct{ ISBN string } }
	json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if len(page.Books) == 0 {
		t.Fatalf("no book to order from %s/api/books", base)
	}
	order := `{"isbn":"` + page.Books[0].ISBN + `","quantity":1}`
	for _, tc := range []struct {
		name, method, path, host string
		header                   map[string]string
		want                     int
	}{
		{"loopback read", http.MethodGet, "/healthz", "", nil, http.StatusOK},
		{"DNS rebinding", http.MethodGet, "/healthz", "rebind.attacker.test", nil, http.StatusMisdirectedRequest},
		{"cross-site POST", http.MethodPost, "/api/orders", "", map[string]string{"Content-Type": "text/plain", "Origin": "http://attacker.test", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"client order", http.MethodPost, "/api/orders", "", map[string]string{"Content-Type": "application/json"}, http.StatusCreated},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(order))
		if tc.host != "" {
			req.Host = tc.host
		}
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	if !strings.Contains(out.String(), "bookstore: "+base+"/ (loopback only)") {
		t.Errorf("lab serve does not say it answers loopback only:\n%s", out.String())
	}
}
