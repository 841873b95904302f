#!/usr/bin/env bash
# The coordinated-omission corpus: 14 healthy runs (open, ramping, steps,
# multi-scenario with startTime, closed with think time, k6 scripts with
# groups, k6 CSV imports with and without --model) and 6 runs stalled in the
# closed model (SIGSTOP of knee lab serve, an endpoint held for 1.5 s), all
# real on loopback, then knee analyze of each. Prints every run's verdict
# and the confusion matrix (LIKELY is the positive). About a minute and a half.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -count=1 -run '^TestCOCorpus$' -v ./internal/cli/ 2>&1) || status=$?
# The test's own summary: one line per run, then the matrix.
printf '%s\n' "$out" | sed -n '/CO corpus:/,/confusion matrix:/p' | sed 's/^ *co_corpus_test.go:[0-9]*: //'
if [ "${status:-0}" -ne 0 ]; then
	printf '%s\n' "$out" | grep -E -- '--- FAIL|co_corpus_test.go' | head -40
	exit "$status"
fi
