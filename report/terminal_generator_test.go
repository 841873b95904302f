package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/knee-dev/knee/rundir"
)

// Requests knee could not send are printed apart from the target's errors:
// 84 of 100 not sent is 84.00 %, and the errors line keeps the target's
// classes only (reset=2).
func TestSummaryGeneratorApart(t *testing.T) {
	var b bytes.Buffer
	s := rundir.Summary{Model: "open", Requests: 100, DurationS: 1, Rate: 100, Errors: 2,
		ErrorsByClass: map[string]int64{"reset": 2, "generator": 84}}
	if err := Summary(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "errors              2 (2.00 %) [reset=2]\n") {
		t.Errorf("the errors line is not the target's alone:\n%s", out)
	}
	if !strings.Contains(out, "not sent by knee    84 (84.00 %): no descriptor, port or memory; the generator was the limit") {
		t.Errorf("the requests knee could not send are not printed apart:\n%s", out)
	}
}
