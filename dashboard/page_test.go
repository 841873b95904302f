package dashboard

import (
	"regexp"
	"strings"
	"testing"
)

// TestPageSelfContained: the page names no resource to fetch (its only
// connection is the relative event stream) and forbids fetches by CSP.
func TestPageSelfContained(t *testing.T) {
	b, err := Page()
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(b), "'http://www.w3.org/2000/svg'", "") // a namespace name, never fetched
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|url\(|@import|https?://`).FindString(page); m != "" {
		t.Errorf("page refers to an outside resource: %q", m)
	}
	for _, want := range []string{"default-src 'none'", "connect-src 'self'", "new EventSource('/events')", "window.kneeCharts"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "</script>"); n != 2 {
		t.Errorf("%d </script>, want 2 (the charts and the live script)", n)
	}
}
