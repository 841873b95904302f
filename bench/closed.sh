#!/bin/bash
# (a) Closed loop, 64 connections, DURATION (default 10s), against the
# loopback target: requests/s and the generator's CPU per request, knee
# (constant-vus 64, no think time) vs wrk, hey and vegeta in the same run.
# Prints one Markdown table row per tool; raw outputs go to bench/out/.
set -u
. "$(dirname "$0")/lib.sh"
D=${DURATION:-10s}
SECS=${D%s}
build
start_target

timed knee-closed "$BIN/knee" run --executor constant-vus --vus 64 --duration "$D" --url "$TARGET_URL" \
	--quiet --out "$OUT/runs" --summary-export "$OUT/knee-closed.json" || die "knee failed: $(cat "$OUT/knee-closed.err")"
knee_n=$(knee_sum knee-closed .requests)
knee_gen=$(knee_sum knee-closed .generator_cpu_s)

timed wrk-closed wrk -c64 -t2 -d"$D" "$TARGET_URL" || die "wrk failed"
wrk_n=$(awk '/requests in/ {print $1}' "$OUT/wrk-closed.out")

timed hey-closed hey -c 64 -z "$D" "$TARGET_URL" || die "hey failed"
hey_n=$(awk '/\[200\]/ {print $2}' "$OUT/hey-closed.out")

timed vegeta-closed "$PEERS/vegeta" attack -rate 0 -max-workers 64 -workers 64 -duration "$D" \
	-targets <(echo "GET $TARGET_URL") -output "$OUT/vegeta-closed.bin" || die "vegeta failed"
vegeta_report vegeta-closed
vegeta_n=$(jq -r .requests "$OUT/vegeta-closed.json")

header "closed loop, 64 connections, $D"
wrk_us=$(div "$(cpu_of wrk-closed)" "$wrk_n" "%.9f")
echo "| tool | requests | req/s | CPU s | req per CPU-s | µs CPU/req | vs wrk |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for t in knee wrk hey vegeta; do
	n=${t}_n
	n=${!n}
	cpu=$(cpu_of "$t-closed")
	us=$(div "$cpu" "$n" "%.9f")
	printf '| %s | %d | %s | %s | %s | %s | %s× |\n' "$t" "$n" "$(div "$n" "$SECS" %.0f)" "$cpu" \
		"$(div "$n" "$cpu" %.0f)" "$(us_per "$cpu" "$n")" "$(div "$us" "$wrk_us" %.2f)"
done
echo "# knee's own count of the load alone (no start-up, no read-back): $(us_per "$knee_gen" "$knee_n") µs CPU/req"
