#!/bin/bash
# The issue's comparison: the target is stopped (SIGSTOP) for 3 s, 11 s
# into a 25 s run at 500 req/s. How many requests does each tool see, how
# many slower than 1 s, and what p99? knee freezes the target itself
# (--fault); for the peers a background job sends SIGSTOP/SIGCONT on the
# same schedule. A fresh target serves each tool.
set -u
. "$(dirname "$0")/lib.sh"
build

# freeze_later stops the target 11 s from now for 3 s, in the background.
freeze_later() {
	(sleep 11 && kill -STOP "$TARGET_PID" && sleep 3 && kill -CONT "$TARGET_PID") &
	FREEZER=$!
}

start_target
"$BIN/knee" run --executor constant-arrival-rate --rate 500 --duration 25s --max-vus 2000 \
	--fault freeze@11s:3s --target-pid "$TARGET_PID" --url "$TARGET_URL" \
	--quiet --out "$OUT/runs" --summary-export "$OUT/knee-freeze.json" >"$OUT/knee-freeze.out" 2>&1 ||
	die "knee failed: $(cat "$OUT/knee-freeze.out")"
stop_target

start_target
"$BIN/knee" run --executor constant-vus --vus 20 --think 100ms --duration 25s \
	--fault freeze@11s:3s --target-pid "$TARGET_PID" --url "$TARGET_URL" \
	--quiet --out "$OUT/runs" --summary-export "$OUT/knee-freeze-closed.json" >"$OUT/knee-freeze-closed.out" 2>&1 ||
	die "knee failed: $(cat "$OUT/knee-freeze-closed.out")"
stop_target

# vegeta_frozen NAME ARGS... runs vegeta at 500/s against a target frozen on schedule.
vegeta_frozen() {
	name=$1
	shift
	start_target
	freeze_later
	"$PEERS/vegeta" attack -rate 500 -duration 25s "$@" -targets <(echo "GET $TARGET_URL") -output "$OUT/$name.bin" ||
		die "vegeta failed"
	wait "$FREEZER"
	FREEZER=
	stop_target
	vegeta_report "$name"
	"$PEERS/vegeta" report -type='hist[0,1s]' "$OUT/$name.bin" >"$OUT/$name.hist"
}
vegeta_frozen vegeta-freeze
# With its workers capped, vegeta waits for a free worker and times from then.
vegeta_frozen vegeta-freeze-capped -max-workers 50

start_target
freeze_later
hey -z 25s -c 50 -q 10 -o csv "$TARGET_URL" >"$OUT/hey-freeze.csv" || die "hey failed"
wait "$FREEZER"
FREEZER=
stop_target

header "target frozen 3 s (SIGSTOP at 11 s) during 25 s at 500 req/s"
echo "| tool | model | requests | > 1 s | p99 |"
echo "|---|---|---:|---:|---:|"
for k in knee-freeze knee-freeze-closed; do
	model="open, 500/s"
	[ "$k" = knee-freeze-closed ] && model="closed, 20 VUs, 100 ms think"
	printf '| knee | %s | %s | %s | %.0f ms |\n' "$model" "$(knee_sum "$k" .requests)" \
		"$(knee_sum "$k" .slower_than_1s)" "$(knee_sum "$k" .latency_ms.p99)"
done
for v in vegeta-freeze vegeta-freeze-capped; do
	args="-rate 500"
	[ "$v" = vegeta-freeze-capped ] && args="-rate 500 -max-workers 50"
	printf '| vegeta | %s | %s | %s | %.0f ms |\n' "$args" "$(jq -r .requests "$OUT/$v.json")" \
		"$(awk '/^\[1s/ {print $3}' "$OUT/$v.hist")" "$(jq -r '.latencies."99th" / 1e6' "$OUT/$v.json")"
done
# hey's CSV: response-time (s) is the first column; the header line is skipped.
tail -n +2 "$OUT/hey-freeze.csv" | cut -d, -f1 | sort -g | awk '
	{ v[NR] = $1; if ($1 > 1) slow++ }
	END { i = int(NR * 0.99); if (i < NR * 0.99) i++; printf "| hey | -c 50 -q 10 | %d | %d | %.0f ms |\n", NR, slow, v[i] * 1000 }'
