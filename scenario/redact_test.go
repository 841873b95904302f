package scenario

import (
	"strings"
	"testing"
)

// redactQuery: in a file and --redact-query both name the secret query
// parameters; Redacted names each request by its masked URL and leaves what
// is sent alone.
func TestRedactedNames(t *testing.T) {
	src := `redactQuery: [sig]
scenarios:
  a:
    executor: constant-vus
    vus: 1
    duration: 1s
    requests:
      - url: "http://u:pw0123456@127.0.0.1:1/x?sig=S1G0123456&n=1"
        headers: {X-Api-Key: K3Y0123456}
      - url: "http://127.0.0.1:1/plain"
      - url: "http://127.0.0.1:1/named?sig=S1G0123456"
        name: mine
`
	cfg, err := Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Redactor()
	red := cfg.Redacted(r)
	var got []string
	for _, s := range red.Scenarios[0].Requests {
		got = append(got, s.Name)
	}
	want := []string{"http://REDACTED@127.0.0.1:1/x?sig=REDACTED&n=1", "http://127.0.0.1:1/plain", "mine"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("names %q, want %q", got, want)
	}
	if u := red.Scenarios[0].Requests[0].URL; u != "http://u:pw0123456@127.0.0.1:1/x?sig=S1G0123456&n=1" {
		t.Errorf("the URL sent changed: %q", u)
	}
	if cfg.Scenarios[0].Requests[0].Name != "" {
		t.Errorf("Redacted changed its receiver")
	}
	if s := r.Text("echo pw0123456 S1G0123456 K3Y0123456"); s != "echo REDACTED REDACTED REDACTED" {
		t.Errorf("Text = %q", s)
	}

	flags, err := FromFlags(Flags{Rate: 1, Duration: 1, URL: "http://127.0.0.1:1/?token=T0K3N01234", RedactQuery: []string{"token"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := flags.Redacted(flags.Redactor()).Scenarios[0].Requests[0].Name; n != "http://127.0.0.1:1/?token=REDACTED" {
		t.Errorf("--redact-query: name %q", n)
	}
}
