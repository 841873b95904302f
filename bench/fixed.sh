#!/bin/bash
# fixed.sh measures knee's fixed cost per run: the CPU of a 1 req/s, 2 s
# run (start-up, environment note and floor probe, run directory, read-back
# and summary), whole process, and of `knee --version` (start-up alone).
# With BASE_BIN (another knee binary) the two are run alternately, REPS
# times each, on one fresh target, so the machine's noise falls on both:
# compare their medians, not the figures of another day.
#
#   REPS=12 BASE_BIN=/tmp/knee-before ./bench/fixed.sh
#
# CPU is perf stat's task-clock (ms) where perf is allowed, with context
# switches and page faults beside it; else /usr/bin/time's user+sys (10 ms
# steps).
set -u
. "$(dirname "$0")/lib.sh"
REPS=${REPS:-12}
go build -o "$BIN/knee" ./cmd/knee || die "building knee failed"
go build -o "$BIN/target" ./bench/target || die "building the target failed"
BINS=("$BIN/knee")
NAMES=(knee)
if [ -n "${BASE_BIN:-}" ]; then
	cp "$BASE_BIN" "$BIN/knee-base" || die "BASE_BIN $BASE_BIN: cannot copy it"
	BINS+=("$BIN/knee-base")
	NAMES+=(knee-base)
fi
PERF=
if command -v perf >/dev/null && perf stat -e task-clock -x, -o /dev/null true 2>/dev/null; then
	PERF=1
fi
start_target
RAW=$OUT/fixed.raw
: >"$RAW"

# measure NAME KIND CMD... appends "NAME KIND ms cs pf" for one run of CMD.
measure() {
	name=$1 kind=$2
	shift 2
	if [ -n "$PERF" ]; then
		perf stat -e task-clock,context-switches,page-faults -x, -o "$OUT/fixed.perf" "$@" >/dev/null 2>&1 ||
			die "$name $kind failed"
		awk -F, -v n="$name" -v k="$kind" '$3 == "task-clock" {ms = $1} $3 == "context-switches" {cs = $1}
			$3 == "page-faults" {pf = $1} END {print n, k, ms, cs, pf}' "$OUT/fixed.perf" >>"$RAW"
	else
		timed fixed "$@" || die "$name $kind failed"
		echo "$name $kind $(awk '{print $1 * 1000}' "$OUT/fixed.time") - -" >>"$RAW"
	fi
}

for _ in $(seq "$REPS"); do
	for i in "${!BINS[@]}"; do
		measure "${NAMES[$i]}" run "${BINS[$i]}" run --executor constant-arrival-rate --rate 1 --duration 2s \
			--url "$TARGET_URL" --quiet --out "$OUT/runs"
		measure "${NAMES[$i]}" --version "${BINS[$i]}" --version
	done
done
stop_target

echo "# knee's fixed cost, $REPS alternating runs each; $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| binary | what | CPU ms (median) | CPU ms (range) | context switches | page faults |"
echo "|---|---|---:|---|---:|---:|"
# med FIELD NAME KIND is the median of one column of NAME's KIND runs.
med() {
	awk -v n="$2" -v k="$3" -v f="$1" '$1 == n && $2 == k {print $f}' "$RAW" | sort -n |
		awk '{a[NR] = $1} END {if (a[1] == "-") print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
for name in "${NAMES[@]}"; do
	for kind in run --version; do
		range=$(awk -v n="$name" -v k="$kind" '$1 == n && $2 == k {print $3}' "$RAW" | sort -n | sed -n '1p;$p' | paste -sd' ')
		printf "| %s | %s | %.1f | %s | %s | %s |\n" "$name" "$kind" "$(med 3 "$name" "$kind")" "${range/ /–}" \
			"$(med 4 "$name" "$kind")" "$(med 5 "$name" "$kind")"
	done
done
