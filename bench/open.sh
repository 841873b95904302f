#!/bin/bash
# (b) Open model at RATES (default "5000 20000") req/s for DURATION (default
# 20s): achieved vs target, dropped, send-lag p99, generator CPU per request
# and peak RSS; knee (constant-arrival-rate, default VUs) vs vegeta -rate N.
set -u
. "$(dirname "$0")/lib.sh"
D=${DURATION:-20s}
SECS=${D%s}
build
start_target

header "open model, $D per rate"
echo "| tool | target/s | requests | achieved/s | achieved/target | dropped | send-lag p99 | µs CPU/req | peak RSS MB | CPU/req vs vegeta |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for R in ${RATES:-5000 20000}; do
	k=knee-open-$R v=vegeta-open-$R
	timed "$k" "$BIN/knee" run --executor constant-arrival-rate --rate "$R" --duration "$D" --url "$TARGET_URL" \
		--quiet --out "$OUT/runs" --summary-export "$OUT/$k.json" || die "knee failed: $(cat "$OUT/$k.err")"
	timed "$v" "$PEERS/vegeta" attack -rate "$R" -duration "$D" -targets <(echo "GET $TARGET_URL") \
		-output "$OUT/$v.bin" || die "vegeta failed"
	vegeta_report "$v"

	kn=$(knee_sum "$k" .requests)
	vn=$(jq -r .requests "$OUT/$v.json")
	kus=$(us_per "$(cpu_of "$k")" "$kn")
	vus=$(us_per "$(cpu_of "$v")" "$vn")
	kach=$(div "$kn" "$SECS" %.1f)
	vach=$(jq -r '.rate' "$OUT/$v.json")
	printf '| knee | %d | %d | %s | %s %% | %s | %s ms | %s | %s | %s× |\n' "$R" "$kn" "$kach" \
		"$(pct "$kach" "$R")" "$(knee_sum "$k" .dropped_iterations)" \
		"$(knee_sum "$k" '.send_lag_ms.p99 // "-"')" "$kus" "$(rss_of "$k")" "$(div "$kus" "$vus" %.2f)"
	printf '| vegeta | %d | %d | %.1f | %s %% | - | - | %s | %s | 1× |\n' "$R" "$vn" "$vach" \
		"$(pct "$vach" "$R")" "$vus" "$(rss_of "$v")"
done
