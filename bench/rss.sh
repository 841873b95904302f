#!/bin/bash
# (c) Peak RSS. Always: 5,000 req/s for 1 minute, and 2,000 closed-model VUs
# against a slow endpoint (the target waits 1 s per request) for 30 s.
# With LONG=1 also 5,000 req/s for 10 minutes (11 minutes in all), to show
# that memory does not grow with the run's length. Both open runs get a
# fixed pool of VUS (default 300) VUs, so a busy moment on a shared machine,
# which would grow the pool, does not pass for growth with length.
set -u
. "$(dirname "$0")/lib.sh"
build

open_run() { # NAME DURATION
	timed "$1" "$BIN/knee" run --executor constant-arrival-rate --rate 5000 --duration "$2" --url "$TARGET_URL" \
		--pre-allocated-vus "${VUS:-300}" --max-vus "${VUS:-300}" \
		--quiet --out "$OUT/runs" --summary-export "$OUT/$1.json" || die "knee failed: $(cat "$OUT/$1.err")"
}

start_target
open_run knee-rss-1m 1m
[ "${LONG:-0}" = 1 ] && open_run knee-rss-10m 10m
stop_target

start_target 1s
timed knee-rss-2000vus "$BIN/knee" run --executor constant-vus --vus 2000 --duration 30s --url "$TARGET_URL" \
	--quiet --out "$OUT/runs" --summary-export "$OUT/knee-rss-2000vus.json" || die "knee failed: $(cat "$OUT/knee-rss-2000vus.err")"
stop_target

header "peak RSS"
echo "| run | requests | dropped | most VUs | peak RSS MB | vs 1 minute |"
echo "|---|---:|---:|---:|---:|---:|"
for r in knee-rss-1m knee-rss-10m knee-rss-2000vus; do
	[ -f "$OUT/$r.time" ] && [ "$OUT/$r.time" -nt "$OUT/knee-rss-1m.err" -o "$r" = knee-rss-1m ] || continue
	dir=$(awk '/^run directory:/ {print $3}' "$OUT/$r.out")
	printf '| %s | %s | %s | %s | %s | %s× |\n' "$r" "$(knee_sum "$r" .requests)" "$(knee_sum "$r" .dropped_iterations)" \
		"$(jq -s 'map(.vus) | max' "$dir/counters.jsonl")" "$(rss_of "$r")" "$(div "$(rss_of "$r")" "$(rss_of knee-rss-1m)" %.2f)"
done
