package k6script

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/knee-dev/knee/load"
)

// Timers fire before the iteration ends, earliest first and, for equal
// delays, in the order set; an interval repeats until cleared (here by
// its own third call); clearTimeout cancels; extra arguments reach the
// callback; an await on a Promise a timer resolves settles. The order is
// fixed by the due times, not by how fast the machine runs.
func TestTimersFireBeforeTheIterationEnds(t *testing.T) {
	n, first := runOnce(t, `import { setTimeout as st, clearTimeout as ct } from 'k6/timers';
export default async function () {
  const log = [];
  setTimeout(() => log.push('b'), 20);
  st((x, y) => log.push('a' + x + y), 0, 1, 2);
  setTimeout(() => log.push('c'), 20);
  const gone = setTimeout(() => log.push('never'), 5);
  ct(gone);
  let ticks = 0;
  await new Promise((resolve) => {
    const iv = setInterval(() => { ticks++; log.push('i' + ticks); if (ticks === 3) { clearInterval(iv); resolve(); } }, 50);
  });
  log.push('after await');
  setTimeout(() => { if (log.join(',') !== 'a12,b,c,i1,i2,i3,after await') throw new Error('order: ' + log.join(',')); throw new Error('checked'); }, 0);
}`)
	if n != 1 || !strings.Contains(first, "Error: checked") {
		t.Errorf("%d errors, first %q; want only the final timer's 'checked'", n, first)
	}
}

// A callback that is not a function throws, with k6's message.
func TestTimersRefuseANonFunction(t *testing.T) {
	n, first := runOnce(t, `export default function () { setTimeout('code', 1); }`)
	if n != 1 || !strings.Contains(first, "setTimeout's callback isn't a callable function") {
		t.Errorf("%d errors, first %q", n, first)
	}
}

// An interval never cleared keeps the iteration going until the run ends;
// the run's end then stops it, counted as interrupted, not as an error.
func TestTimersStopWithTheRun(t *testing.T) {
	s := loadScript(t, `export default function () { setInterval(() => {}, 1); }`, nil)
	it := s.Iteration("x", ScenarioPlan{Exec: "default"}, nil).(load.SelfRecording)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var got samples
	it.DoRecord(ctx, load.Start{Scenario: "x", VU: 1, Called: time.Now()}, &got)
	if n, first := s.IterationErrors(); n != 0 || s.Iterations() != 0 {
		t.Errorf("%d errors (%q), %d iterations ended; want the one iteration interrupted", n, first, s.Iterations())
	}
}
