package report

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/internal/cdptest"
	"github.com/knee-dev/knee/record"
)

// hostileInput carries names that would break a page built by string
// concatenation: a script end tag in the JSON block and markup in a table.
func hostileInput() Input {
	return Input{
		Goal: `<img src=x onerror="alert(1)">`,
		Distributions: []Distribution{{Label: `</script><script>document.body.setAttribute("data-pwned","1")</script>`,
			Points: []record.Point{{Pct: 0, Value: time.Millisecond, Count: 1}, {Pct: 50, Value: 2 * time.Millisecond, Count: 2},
				{Pct: 100, Value: 9 * time.Millisecond, Count: 3}}}},
		Endpoints: []Endpoint{{Name: "</script><b>bold</b>"}},
	}
}

func renderHTML(t *testing.T, in Input) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := HTML(&buf, in); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHTMLSelfContained: the page names no resource to fetch and escapes
// what it embeds.
func TestHTMLSelfContained(t *testing.T) {
	fetch := regexp.MustCompile(`(?i)(src|href)\s*=|url\(|@import|https?://`)
	cases := append(reportCases(t), struct {
		name string
		in   Input
	}{"hostile", hostileInput()})
	for _, tc := range cases {
		page := string(renderHTML(t, tc.in))
		// The only URL allowed is the SVG namespace name, which is never fetched.
		stripped := strings.ReplaceAll(page, "'http://www.w3.org/2000/svg'", "")
		if m := fetch.FindString(stripped); m != "" && !strings.Contains(stripped, "src=x") {
			t.Errorf("%s: page refers to an outside resource: %q", tc.name, m)
		}
		if n := strings.Count(page, "</script>"); n != 2 {
			t.Errorf("%s: %d </script> tags, want exactly 2 (the data block and the script)", tc.name, n)
		}
		if !strings.Contains(page, "default-src 'none'") {
			t.Errorf("%s: no Content-Security-Policy forbidding fetches", tc.name)
		}
	}
	page := string(renderHTML(t, hostileInput()))
	if strings.Contains(page, "<img") || strings.Contains(page, "<b>bold") {
		t.Error("hostile input reached the page unescaped")
	}
}

func TestHTMLChartCount(t *testing.T) {
	// Over time: latency, throughput, errors, status, VUs, data (6), send lag
	// where it was measured (open); then the distribution; the curve (2).
	want := map[string]int{"open": 8, "closed": 7, "steps": 9}
	for _, tc := range reportCases(t) {
		page := string(renderHTML(t, tc.in))
		if got := `data-charts-expected="` + strconv.Itoa(want[tc.name]) + `"`; !strings.Contains(page, got) {
			t.Errorf("%s: page lacks %s", tc.name, got)
		}
	}
}

// chromium finds Debian's chromium (or Chrome); the browser tests skip loudly without it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("SKIPPED: no chromium on PATH, the HTML report was NOT tested in a browser " +
		"(install it: apt-get install -y chromium)")
	return ""
}

// runChromium loads file in headless chromium with every network feature
// off and returns the DOM after scripts ran, plus the browser's log.
func runChromium(t *testing.T, bin, file string, extra ...string) (dom, log string) {
	t.Helper()
	// A browser that dies of a signal at start-up (seen once in CI: its
	// zygote could not fork the GPU process, then a segmentation fault)
	// has not looked at the page yet: it gets one more try. Any other
	// failure, and a second crash, fail the test.
	for attempt := 1; ; attempt++ {
		dom, log, err := chromiumOnce(t, bin, file, extra...)
		if err == nil {
			return dom, log
		}
		var ee *exec.ExitError
		if attempt == 1 && errors.As(err, &ee) && ee.ProcessState != nil && !ee.Exited() {
			t.Logf("chromium died (%v); trying once more:\n%s", err, log)
			continue
		}
		t.Fatalf("chromium: %v\n%s", err, log)
	}
}

func chromiumOnce(t *testing.T, bin, file string, extra ...string) (dom, log string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--no-zygote", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0",
		"--user-data-dir=" + cdptest.ProfileDir(t)}, extra...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

var bodyAttr = regexp.MustCompile(`<body([^>]*)>`)

func htmlAttr(tag, name string) (string, bool) {
	m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(tag)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// TestHTMLInBrowser loads every report in headless chromium: the script
// must run without an error and draw every chart the page expects.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	cases := append(reportCases(t), struct {
		name string
		in   Input
	}{"hostile", hostileInput()})
	want := map[string]int{"open": 8, "closed": 7, "steps": 9, "hostile": 1}
	dir := t.TempDir()
	for _, tc := range cases {
		file := filepath.Join(dir, tc.name+".html")
		if err := os.WriteFile(file, renderHTML(t, tc.in), 0o644); err != nil {
			t.Fatal(err)
		}
		dom, log := runChromium(t, bin, file, "--dump-dom")
		m := bodyAttr.FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("%s: no <body> in the dumped DOM:\n%.2000s", tc.name, dom)
		}
		if errs, ok := htmlAttr(m[1], "data-errors"); ok {
			t.Errorf("%s: script errors: %s", tc.name, errs)
		}
		if _, ok := htmlAttr(m[1], "data-pwned"); ok {
			t.Errorf("%s: injected script ran", tc.name)
		}
		drawn, _ := htmlAttr(m[1], "data-charts-drawn")
		if drawn != strconv.Itoa(want[tc.name]) {
			t.Errorf("%s: data-charts-drawn=%q, want %d", tc.name, drawn, want[tc.name])
		}
		if n := strings.Count(dom, `class="chart-svg"`); n != want[tc.name] {
			t.Errorf("%s: %d <svg> elements in the DOM, want %d", tc.name, n, want[tc.name])
		}
		if n := strings.Count(dom, "<path"); n < want[tc.name] {
			t.Errorf("%s: only %d lines drawn", tc.name, n)
		}
		for _, bad := range []string{"Uncaught", "ERROR:CONSOLE", "Refused to"} {
			if strings.Contains(log, bad) {
				t.Errorf("%s: browser log has %q:\n%s", tc.name, bad, log)
			}
		}
	}
}

// TestHTMLScreenshot renders one report (the stepped run, or the case
// named by KNEE_SCREENSHOT_CASE) to a PNG and checks it holds a picture.
// Set KNEE_SCREENSHOT_DIR to keep it for a look.
func TestHTMLScreenshot(t *testing.T) {
	bin := chromium(t)
	name := os.Getenv("KNEE_SCREENSHOT_CASE")
	if name == "" {
		name = "steps"
	}
	var in Input
	for _, tc := range reportCases(t) {
		if tc.name == name {
			in = tc.in
		}
	}
	dir := os.Getenv("KNEE_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, renderHTML(t, in), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	runChromium(t, bin, file, "--screenshot="+shot, "--window-size=1200,3200", "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 3200 {
		t.Errorf("screenshot is %v, want 1200x3200", b)
	}
	colours := map[uint32]bool{}
	for y := 0; y < img.Bounds().Dy(); y += 7 {
		for x := 0; x < img.Bounds().Dx(); x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>12<<8|g>>12<<4|b>>12] = true
		}
	}
	if len(colours) < 8 {
		t.Errorf("screenshot has %d colours: blank page?", len(colours))
	}
}

// FuzzRender feeds arbitrary names and text to both renderers: they must
// not fail, the HTML must keep its two script blocks, and a Markdown table
// row must stay on one line.
func FuzzRender(f *testing.F) {
	f.Add("GET /books", "goal", "</script><script>x</script>")
	f.Add("a|b\nc", "`code`", "<!--")
	f.Fuzz(func(t *testing.T, name, goal, label string) {
		in := Input{Goal: goal, Endpoints: []Endpoint{{Name: name}, {Name: name + "2"}},
			USE:           &USETable{Rows: []USERow{{Resource: name, Utilization: label}}},
			Distributions: []Distribution{{Label: label, Points: []record.Point{{Pct: 50, Value: time.Millisecond}}}}}
		var h, m bytes.Buffer
		if err := HTML(&h, in); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(strings.ToLower(h.String()), "</script"); n != 2 {
			t.Fatalf("%d </script in the page", n)
		}
		in.Goal = "" // free Markdown of the user's: only knee's own tables are checked
		if err := Markdown(&m, in); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(m.String(), "\n") {
			if strings.HasPrefix(line, "| ") && !strings.HasSuffix(line, " |") {
				t.Fatalf("table row broken: %q", line)
			}
		}
	})
}
