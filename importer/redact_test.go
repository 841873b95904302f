package importer

import (
	"strings"
	"testing"
)

// k6 names an untagged request by its URL: the URL's userinfo and the
// values of named query parameters never become a series name, and two URLs
// that differ only in a secret are one series.
func TestK6JSONNamesWithoutSecrets(t *testing.T) {
	in := point("http_req_duration", "2026-01-01T00:00:00Z", "2", `"scenario":"s","url":"http://u:PW123456@h/b?token=T0K1"`) +
		point("http_req_duration", "2026-01-01T00:00:00.1Z", "4", `"scenario":"s","url":"http://u:PW123456@h/b?token=T0K2"`) +
		point("http_req_duration", "2026-01-01T00:00:00.2Z", "8", `"scenario":"s","url":"http://h/c"`)
	_, sink, err := importString(t, "r.json", in, Options{RedactQuery: []string{"token"}})
	if err != nil {
		t.Fatal(err)
	}
	if h := sink.merged(latencyOf("s", "http://REDACTED@h/b?token=REDACTED")); h.Count() != 2 || !near(h.Max(), ms(4)) {
		t.Errorf("masked series: n %d max %v, want 2 4ms", h.Count(), h.Max())
	}
	if h := sink.merged(latencyOf("s", "http://h/c")); h.Count() != 1 {
		t.Errorf("plain series: n %d, want 1", h.Count())
	}
	for _, s := range sink.snaps {
		for k := range s.Histograms {
			for _, secret := range []string{"PW123456", "T0K1", "T0K2"} {
				if strings.Contains(k.Name, secret) {
					t.Errorf("series %q holds %s", k.Name, secret)
				}
			}
		}
	}
	if got := sink.final.Scenarios[0].Requests; len(got) != 2 {
		t.Errorf("run.json requests %q, want the masked URL and http://h/c", got)
	}
}
