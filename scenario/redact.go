package scenario

import (
	"github.com/knee-dev/knee/redact"
	"github.com/knee-dev/knee/request"
)

// Redactor returns the redactor of c's secrets: the query parameters of
// RedactQuery, with every secret of c's requests (URL userinfo and named
// query values, sensitive header values) remembered, so its Text also scrubs
// error messages that echo them.
func (c *Config) Redactor() *redact.Redactor {
	r := redact.New(c.RedactQuery...)
	r.Remember(c.Secrets...)
	for _, sc := range c.Scenarios {
		for _, s := range sc.Requests {
			r.URL(s.URL)
			r.URL(s.Name)
			for _, h := range s.Headers {
				r.Header(h.Key, h.Value)
			}
		}
	}
	return r
}

// Redacted returns a copy of c whose requests are named without secrets:
// a request without a name is named by its URL template with the secrets
// masked, so the name tag is stable and every output that groups by it
// (latency.hlog, run.json, reports) never sees a secret. What is sent is
// unchanged: URLs, headers and bodies keep their values.
func (c *Config) Redacted(r *redact.Redactor) *Config {
	out := *c
	out.Scenarios = make([]Scenario, len(c.Scenarios))
	for i, sc := range c.Scenarios {
		sc.Requests = append([]request.Spec(nil), sc.Requests...)
		for j := range sc.Requests {
			sc.Requests[j].Name = r.URL(sc.Requests[j].Tag())
		}
		out.Scenarios[i] = sc
	}
	return &out
}
