package k6script

import (
	"encoding/json"
	"fmt"

	"github.com/dop251/goja"
)

// legacyExport turns handleSummary's data into k6's --summary-export
// document, as k6 v1.8.1's summary wrapper does (internal/js
// summary-wrapper.js, its "old JSON summary"): options and state left out;
// each metric replaced by its values, with its thresholds as {expression:
// failed} and a Rate's rate under value; root_group's groups and checks
// made objects keyed by their names, all the way down; indented by four
// spaces. extra, when not null, is added under "knee".
const legacyExport = `(function (data, extra) {
	const out = JSON.parse(data);
	delete out.options;
	delete out.state;
	for (const name of Object.keys(out.metrics || {})) {
		const m = out.metrics[name];
		const values = m.values;
		const ts = m.thresholds || {};
		if (Object.keys(ts).length > 0) {
			values.thresholds = {};
			for (const expr of Object.keys(ts)) {
				values.thresholds[expr] = !ts[expr].ok;
			}
		}
		if (m.type === 'rate' && Object.prototype.hasOwnProperty.call(values, 'rate')) {
			values.value = values.rate;
			delete values.rate;
		}
		out.metrics[name] = values;
	}
	const keyed = (list, each) => {
		const o = {};
		for (const x of list) o[x.name] = each(x);
		return o;
	};
	const group = (g) => {
		if (Array.isArray(g.groups)) g.groups = keyed(g.groups, group);
		if (Array.isArray(g.checks)) g.checks = keyed(g.checks, (c) => c);
		return g;
	};
	if (out.root_group) out.root_group = group(out.root_group);
	if (extra !== null) out.knee = JSON.parse(extra);
	return JSON.stringify(out, null, 4);
})`

// LegacySummary is k6's --summary-export file for data (SummaryData's),
// with knee, if not nil, under the key "knee" (k6's readers ignore it).
// It is written by JavaScript's JSON.stringify, in a runtime of its own,
// so its numbers read as k6 writes them (1e-7, not 1e-07).
func LegacySummary(data map[string]any, knee any) ([]byte, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("the summary's data: %w", err)
	}
	rt := goja.New()
	fn, err := rt.RunString(legacyExport)
	if err != nil {
		return nil, err
	}
	call, _ := goja.AssertFunction(fn)
	extra := goja.Null()
	if knee != nil {
		b, err := json.Marshal(knee)
		if err != nil {
			return nil, fmt.Errorf("knee's summary: %w", err)
		}
		extra = rt.ToValue(string(b))
	}
	out, err := call(goja.Undefined(), rt.ToValue(string(raw)), extra)
	if err != nil {
		return nil, fmt.Errorf("the k6 summary export: %s", jsError(err))
	}
	return []byte(out.String()), nil
}
