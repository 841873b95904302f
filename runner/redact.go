package runner

import (
	"context"
	"time"

	"github.com/knee-dev/knee/redact"
	"github.com/knee-dev/knee/rundir"
	"github.com/knee-dev/knee/use"
	"github.com/knee-dev/knee/use/probe"
)

// redactMeta scrubs the free texts of meta in place (notes, fault errors,
// scenario tags): they carry error messages that may echo a URL or a DSN.
// Request names are already clean (scenario.Config.Redacted). It returns
// *meta for the writer.
func redactMeta(meta *rundir.Meta, r *redact.Redactor) rundir.Meta {
	meta.Notes = r.Texts(meta.Notes)
	meta.FirstError = r.Text(meta.FirstError)
	for i := range meta.Faults {
		meta.Faults[i].Error = r.Text(meta.Faults[i].Error)
	}
	for i := range meta.Scenarios {
		for k, v := range meta.Scenarios[i].Tags {
			meta.Scenarios[i].Tags[k] = r.Text(v)
		}
	}
	return *meta
}

// redactProbes wraps each probe so that its error and not-measured texts,
// which go to resources.jsonl and the USE table, pass through r: a probe's
// error may echo its --metrics URL or --postgres DSN.
func redactProbes(probes []probe.Probe, r *redact.Redactor) []probe.Probe {
	out := make([]probe.Probe, len(probes))
	for i, p := range probes {
		out[i] = redactedProbe{p, r}
	}
	return out
}

type redactedProbe struct {
	probe.Probe
	r *redact.Redactor
}

func (p redactedProbe) Sample(ctx context.Context, now time.Time) ([]use.Reading, error) {
	rs, err := p.Probe.Sample(ctx, now)
	for i := range rs {
		rs[i].NotMeasured = p.r.Text(rs[i].NotMeasured)
	}
	if err != nil {
		return rs, redactedError{err, p.r.Text(err.Error())}
	}
	return rs, nil
}

// Close closes the probe when it holds something (a database connection).
func (p redactedProbe) Close() error {
	if c, ok := p.Probe.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// redactedError keeps the cause for errors.Is but says only the scrubbed text.
type redactedError struct {
	err error
	msg string
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }
