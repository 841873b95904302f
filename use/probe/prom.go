package probe

import (
	"context"
	"errors"
	"fmt"
	"github.com/knee-dev/knee/use"
	"io"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Prom scrapes a Prometheus /metrics endpoint (protobuf exposition
// format first, for native histograms; text when the target offers no
// protobuf) and turns the families its Mappings name into readings: levels as they
// are, counters into rates and histograms into quantiles of what was
// observed between two scrapes.
type Prom struct {
	URL      string
	Mappings []use.Mapping // nil means DefaultMappings()
	Client   *http.Client  // nil means http.DefaultClient; the context bounds each scrape

	prev   map[string]*dto.MetricFamily
	prevAt time.Time
	// compiled label matchers, by mapping index; built on first use.
	matchers [][]labelMatcher
}

// maxScrape bounds how much of a response knee reads: a /metrics page is a
// few hundred kilobytes at most.
const maxScrape = 32 << 20

// Name is "metrics".
func (p *Prom) Name() string { return "metrics" }

// Sample scrapes URL once. An unreachable endpoint makes every mapping not
// measured, with the reason; the previous scrape is kept, so rates resume
// over the gap when it comes back.
func (p *Prom) Sample(ctx context.Context, now time.Time) ([]use.Reading, error) {
	mappings := p.mappings()
	if p.matchers == nil {
		ms, err := compileMatchers(mappings)
		if err != nil {
			return nil, err
		}
		p.matchers = ms
	}
	fams, err := p.scrape(ctx)
	if err != nil {
		out := make([]use.Reading, len(mappings))
		for i, m := range mappings {
			out[i] = notMeasured(m.Resource, m.Metric, m.Kind, m.Unit, "metrics endpoint unreachable: "+err.Error())
		}
		return out, nil
	}
	dt := 0.0
	if p.prev != nil {
		dt = now.Sub(p.prevAt).Seconds()
	}
	out := make([]use.Reading, len(mappings))
	for i, m := range mappings {
		out[i] = evaluate(m, p.matchers[i], fams, p.prev, dt)
	}
	p.prev, p.prevAt = fams, now
	return out, nil
}

func (p *Prom) mappings() []use.Mapping {
	if p.Mappings == nil {
		p.Mappings = use.DefaultMappings()
	}
	return p.Mappings
}

func (p *Prom) scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return nil, err
	}
	// Protobuf first: only it carries native histograms; text as the fallback.
	// (OpenMetrics is not asked for: it has no native histograms either.)
	req.Header.Set("Accept", acceptHeader)
	client := p.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", p.URL, resp.Status)
	}
	body := io.LimitReader(resp.Body, maxScrape)
	if expfmt.ResponseFormat(resp.Header).FormatType() == expfmt.TypeProtoDelim {
		b, err := io.ReadAll(body)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", p.URL, err)
		}
		return parseDelimited(b)
	}
	return ParseMetrics(body)
}

// acceptHeader asks for length-delimited protobuf, then the text format.
const acceptHeader = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7," +
	"text/plain;version=0.0.4;q=0.3"

// parseDelimited reads the protobuf exposition format (each MetricFamily
// after its varint length) into families by name. It reads the messages
// itself so that a length larger than what is left is an error, not an
// allocation of that size.
func parseDelimited(b []byte) (map[string]*dto.MetricFamily, error) {
	out := map[string]*dto.MetricFamily{}
	for off := 0; off < len(b); {
		n, w := protowire.ConsumeVarint(b[off:])
		if w < 0 || n > uint64(len(b)-off-w) {
			return nil, fmt.Errorf("parse metrics (protobuf): bad message length at byte %d", off)
		}
		off += w
		mf := &dto.MetricFamily{}
		if err := proto.Unmarshal(b[off:off+int(n)], mf); err != nil {
			return nil, fmt.Errorf("parse metrics (protobuf) at byte %d: %w", off, err)
		}
		off += int(n)
		if old := out[mf.GetName()]; old != nil {
			old.Metric = append(old.Metric, mf.Metric...)
			continue
		}
		out[mf.GetName()] = mf
	}
	return out, nil
}

// ParseMetrics parses the Prometheus text exposition format into metric
// families by name.
func ParseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	return fams, nil
}

// labelMatcher is one label=~regexp condition.
type labelMatcher struct {
	name string
	re   *regexp.Regexp
}

// compileMatchers validates the mappings and compiles their label matchers.
func compileMatchers(mappings []use.Mapping) ([][]labelMatcher, error) {
	out := make([][]labelMatcher, len(mappings))
	for i, m := range mappings {
		if errs := m.Validate(); len(errs) > 0 {
			return nil, fmt.Errorf("mapping %s: %w", m.Metric, errors.Join(errs...))
		}
		for _, name := range slices.Sorted(maps.Keys(m.Labels)) {
			re, err := regexp.Compile("^(?:" + m.Labels[name] + ")$")
			if err != nil {
				return nil, fmt.Errorf("mapping %s: label %s: %w", m.Metric, name, err)
			}
			out[i] = append(out[i], labelMatcher{name, re})
		}
	}
	return out, nil
}

func matches(ms []labelMatcher, m *dto.Metric) bool {
	for _, lm := range ms {
		v := ""
		for _, lp := range m.GetLabel() {
			if lp.GetName() == lm.name {
				v = lp.GetValue()
			}
		}
		if !lm.re.MatchString(v) {
			return false
		}
	}
	return true
}

// series returns the family's metrics that pass the matchers, or why none.
func series(fams map[string]*dto.MetricFamily, name string, ms []labelMatcher) ([]*dto.Metric, string) {
	f := fams[name]
	if f == nil {
		return nil, fmt.Sprintf("metric %s not exported by the target", name)
	}
	var out []*dto.Metric
	for _, m := range f.GetMetric() {
		if matches(ms, m) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("metric %s has no series matching the mapping's labels", name)
	}
	return out, ""
}

// sumValue adds up the series' values: a histogram or summary counts its
// observations.
func sumValue(ms []*dto.Metric) float64 {
	s := 0.0
	for _, m := range ms {
		switch {
		case m.Counter != nil:
			s += m.Counter.GetValue()
		case m.Gauge != nil:
			s += m.Gauge.GetValue()
		case m.Untyped != nil:
			s += m.Untyped.GetValue()
		case m.Histogram != nil:
			s += histCount(m.Histogram)
		case m.Summary != nil:
			s += float64(m.Summary.GetSampleCount())
		}
	}
	return s
}

func histCount(h *dto.Histogram) float64 {
	n := float64(h.GetSampleCount()) + h.GetSampleCountFloat()
	for _, b := range h.GetBucket() {
		if math.IsInf(b.GetUpperBound(), 1) {
			n = max(n, float64(b.GetCumulativeCount())+b.GetCumulativeCountFloat())
		}
	}
	return n
}

// evaluate computes one mapping from this scrape and the previous one (nil
// on the first), dt seconds apart.
func evaluate(m use.Mapping, ms []labelMatcher, cur, prev map[string]*dto.MetricFamily, dt float64) use.Reading {
	nm := func(why string) use.Reading { return notMeasured(m.Resource, m.Metric, m.Kind, m.Unit, why) }
	now, why := series(cur, m.Source, ms)
	// A family the target exports with no series matching the labels yet
	// (no 5xx so far, say) counts zero for a gauge or a rate; a quantile or
	// a ratio of nothing stays unmeasured.
	zeroOK := cur[m.Source] != nil && (m.Op == use.OpGauge || m.Op == use.OpRate)
	if why != "" && !zeroOK {
		return nm(why)
	}
	switch m.Op {
	case use.OpGauge:
		return measured(m.Resource, m.Metric, m.Kind, sumValue(now), m.Unit)
	case use.OpRatio:
		per, why := series(cur, m.Per, ms)
		if why != "" {
			return nm(why)
		}
		d := sumValue(per)
		if d == 0 {
			return nm(fmt.Sprintf("%s is 0", m.Per))
		}
		return measured(m.Resource, m.Metric, m.Kind, sumValue(now)/d, m.Unit)
	}
	if prev == nil {
		return nm(whyFirstSample)
	}
	if dt <= 0 {
		return nm("no time passed since the previous scrape")
	}
	before, _ := series(prev, m.Source, ms)
	switch m.Op {
	case use.OpRate:
		d := sumValue(now) - sumValue(before)
		if d < 0 {
			// The target restarted and its counters began again from zero.
			d = sumValue(now)
		}
		return measured(m.Resource, m.Metric, m.Kind, d/dt, m.Unit)
	case use.OpQuantile:
		q, why := quantileDelta(now, before, m.Quantile())
		if why != "" {
			return nm(fmt.Sprintf("%s: %s", m.Source, why))
		}
		return measured(m.Resource, m.Metric, m.Kind, q, m.Unit)
	}
	return nm(fmt.Sprintf("unknown op %q", m.Op))
}

// bucketCounts sums the cumulative bucket counts of histograms by upper
// bound; +Inf holds the total.
func bucketCounts(ms []*dto.Metric) map[float64]float64 {
	out := map[float64]float64{}
	for _, m := range ms {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		for _, b := range h.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				out[b.GetUpperBound()] += float64(b.GetCumulativeCount()) + b.GetCumulativeCountFloat()
			}
		}
		out[math.Inf(1)] += histCount(h)
	}
	return out
}

// quantileDelta is the q-quantile of the observations made between two
// scrapes of a histogram, interpolated linearly inside the bucket that
// holds it, the way Prometheus's histogram_quantile does:
//
//	rank  = q * total
//	b     = the first bucket whose cumulative count >= rank
//	value = lower(b) + (upper(b) - lower(b)) * (rank - cum(b-1)) / count(b)
//
// The first bucket's lower bound is 0; a rank in the +Inf bucket answers
// the largest finite bound, as a histogram cannot say more.
func quantileDelta(now, before []*dto.Metric, q float64) (float64, string) {
	if isNative(now) {
		return nativeQuantileDelta(now, before, q)
	}
	cur, old := bucketCounts(now), bucketCounts(before)
	if len(cur) <= 1 {
		// Nothing but a count: not a histogram, or a native histogram read
		// over the text format (which cannot carry its buckets).
		return 0, "not a histogram: no finite buckets (a native histogram needs the protobuf format)"
	}
	bounds := slices.Sorted(maps.Keys(cur))
	deltas := make([]float64, len(bounds))
	for i, b := range bounds {
		deltas[i] = cur[b] - old[b]
		if deltas[i] < 0 { // the target restarted
			return 0, "histogram went backwards (target restarted?)"
		}
	}
	total := deltas[len(deltas)-1]
	if total == 0 {
		return 0, "no observations since the previous scrape"
	}
	rank := q * total
	lower, cumBelow := 0.0, 0.0
	for i, b := range bounds {
		if deltas[i] >= rank {
			if math.IsInf(b, 1) {
				return lower, ""
			}
			inBucket := deltas[i] - cumBelow
			if inBucket <= 0 {
				return b, ""
			}
			return lower + (b-lower)*(rank-cumBelow)/inBucket, ""
		}
		lower, cumBelow = b, deltas[i]
	}
	return lower, ""
}
