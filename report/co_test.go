package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/knee-dev/knee/analyze"
)

// The terminal's coordinated-omission block: the run's verdict, then each
// scenario's verdict and reason followed by its own signals ("!" where one
// fired), the server's record apart; no "give --think" hint for a run knee
// ran in the open model, which has nothing to compute.
func TestCOSignalsTerminal(t *testing.T) {
	tests := []struct {
		name string
		in   analyze.COSignals
		want []string
		not  []string
	}{
		{"two scenarios", analyze.COSignals{
			Verdict: analyze.VerdictWeak,
			Scenarios: []analyze.ScenarioCO{
				{Scenario: "a", Model: "closed", Verdict: analyze.VerdictWeak, Reason: "the correction moves p90 from 1 ms to 1 ms"},
				{Scenario: "b", Model: "open", Verdict: analyze.VerdictOpenModel, Reason: "knee ran it in the open model"},
			},
			Signals: []analyze.COSignal{
				{Scenario: "a", Name: analyze.SignalThroughput, Fired: true, Evidence: "achieved 90 of 100"},
				{Scenario: "b", Name: analyze.SignalStall, Evidence: "the target's stall"},
				{Name: analyze.SignalServer, Evidence: "agree"},
			},
		}, []string{
			"coordinated omission: WEAK SIGN OF COORDINATED OMISSION\n" +
				"  scenario a (closed model): weak sign of coordinated omission: the correction moves p90 from 1 ms to 1 ms\n" +
				"    ! throughput   achieved 90 of 100\n" +
				"  scenario b (open model): no sign — open model: knee ran it in the open model\n" +
				"      stall        the target's stall\n" +
				"      server       agree\n",
		}, []string{"no signal could be computed"}},
		{"open model, no signal", analyze.COSignals{
			Verdict:   analyze.VerdictOpenModel,
			Scenarios: []analyze.ScenarioCO{{Scenario: "o", Model: "open", Verdict: analyze.VerdictOpenModel, Reason: "r"}},
		}, []string{"scenario o (open model): no sign — open model: r\n"}, []string{"no signal could be computed"}},
		{"nothing to compute", analyze.COSignals{Verdict: analyze.VerdictNoSign},
			[]string{"(no signal could be computed: give --think, --vus or --target-rate)"}, nil},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := COSignals(&b, tt.in); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, b.String())
			}
		}
		for _, n := range tt.not {
			if strings.Contains(b.String(), n) {
				t.Errorf("%s: output has %q:\n%s", tt.name, n, b.String())
			}
		}
	}
}

// The HTML report lists each scenario's verdict and reason, and names the
// scenario of each signal.
func TestCOSignalsHTML(t *testing.T) {
	co := analyze.COSignals{Verdict: analyze.VerdictNoSign,
		Scenarios: []analyze.ScenarioCO{{Scenario: "browse", Model: "closed", Verdict: analyze.VerdictNoSign, Reason: "the correction moves p90 from 1 ms to 1 ms"}},
		Signals:   []analyze.COSignal{{Scenario: "browse", Name: analyze.SignalStall, Evidence: "no interval"}}}
	page := string(renderHTML(t, Input{CO: &co}))
	for _, want := range []string{
		"<li>Scenario <strong>browse</strong> (closed model): no sign: the correction moves p90 from 1 ms to 1 ms</li>",
		"<li><strong>browse stall</strong> (quiet): no interval</li>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
