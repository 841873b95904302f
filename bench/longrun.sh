#!/bin/bash
# Long runs stay flat: knee runs MINUTES (default 30) at RATE (default 2,000)
# req/s, open model with the default --max-vus, against the Bookstore
# (knee lab serve) with a 5 s freeze of the Bookstore every 5 minutes. Every
# 10 s it samples knee's RSS (and its anonymous part), goroutines (knee is
# built as bench/profiled, which writes its goroutine count every 10 s),
# threads (/proc task count), open files, VUs and the run directory's size,
# then prints the table and, per column, the largest deviation from its
# value at 2 minutes (the issue's bound: within 10 %). Not a CI test. Usage:
#   MINUTES=10 ./bench/longrun.sh
#   MINUTES=6 FREEZE_EVERY=90 ./bench/longrun.sh   # more freezes in less time
#   MINUTES=4 FREEZE_EVERY=60 PROFILE_AT=55s,200s ./bench/longrun.sh
# PROFILE_AT makes bench/profiled also write heap, goroutine and
# thread-creation profiles and memory statistics at those times since its
# start; all land in bench/out/longrun/profiles.
set -u
cd "$(dirname "$0")/.." || exit 1
MINUTES=${MINUTES:-30}
FREEZE_EVERY=${FREEZE_EVERY:-300} # seconds between freezes
RATE=${RATE:-2000}
OUT=${OUT:-$PWD/bench/out}
LR=$OUT/longrun
mkdir -p "$LR"
die() { echo "longrun: $*" >&2; exit 1; }
rm -rf "$LR/profiles"
mkdir -p "$LR/profiles"
export PROFILE_DIR=$LR/profiles
go build -o "$LR/knee" ./bench/profiled || die "building bench/profiled failed"

SERVE_PID= KNEE_PID=
cleanup() {
	[ -n "$KNEE_PID" ] && kill "$KNEE_PID" 2>/dev/null
	if [ -n "$SERVE_PID" ]; then
		kill -CONT "$SERVE_PID" 2>/dev/null
		kill "$SERVE_PID" 2>/dev/null
		wait "$SERVE_PID" 2>/dev/null
	fi
}
trap cleanup EXIT

env -u PROFILE_AT -u PROFILE_DIR "$LR/knee" lab serve --addr 127.0.0.1:0 >"$LR/serve.out" 2>"$LR/serve.err" &
SERVE_PID=$!
for _ in $(seq 100); do
	grep -q "listening on" "$LR/serve.out" 2>/dev/null && break
	sleep 0.1
done
ADDR=$(sed -n 's/^bookstore listening on //p' "$LR/serve.out" | head -n1)
[ -n "$ADDR" ] || die "knee lab serve did not start: $(cat "$LR/serve.err")"

faults=()
for ((t = FREEZE_EVERY; t < MINUTES * 60; t += FREEZE_EVERY)); do
	faults+=(--fault "freeze@${t}s:5s")
done
rm -rf "$LR/runs"
"$LR/knee" run --executor constant-arrival-rate --rate "$RATE" --duration "${MINUTES}m" \
	--url "http://$ADDR/api/books/{isbn}" --var isbn=9780441172719,9780261102217 \
	--target-pid "$SERVE_PID" "${faults[@]}" --quiet --out "$LR/runs" \
	--summary-export "$LR/summary.json" >"$LR/knee.out" 2>&1 &
KNEE_PID=$!

field() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$KNEE_PID/status" 2>/dev/null; }
echo "# knee run at $RATE req/s for $MINUTES min against the Bookstore, 5 s freeze every $FREEZE_EVERY s"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%6s %8s %8s %8s %6s %6s %6s %12s %10s\n' t_s rss_mb anon_mb threads fds vus gorout rundir_b delta_b | tee "$LR/samples.txt"
start=$(date +%s) prev=0
while kill -0 "$KNEE_PID" 2>/dev/null; do
	sleep 10
	kill -0 "$KNEE_PID" 2>/dev/null || break
	t=$(($(date +%s) - start))
	rss=$(field VmRSS) anon=$(field RssAnon) threads=$(field Threads)
	fds=$(ls "/proc/$KNEE_PID/fd" 2>/dev/null | wc -l)
	size=$(du -sb "$LR/runs" 2>/dev/null | cut -f1)
	# VUs alive, from the last interval written to counters.jsonl; goroutines
	# from bench/profiled's last sample (the open model's event loop keeps a VU
	# without a goroutine, so the two differ).
	vus=$(tail -n1 "$LR"/runs/*/counters.jsonl 2>/dev/null | sed -n 's/.*"vus":\([0-9]*\).*/\1/p')
	gor=$(tail -n1 "$LR/profiles/runtime.tsv" 2>/dev/null | cut -f2)
	[ -n "$rss" ] || break
	printf '%6d %8.1f %8.1f %8d %6d %6d %6d %12d %10d\n' "$t" "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "$(awk -v k="$anon" 'BEGIN{print k/1024}')" "$threads" "$fds" "${vus:-0}" "${gor:-0}" "$size" $((size - prev)) | tee -a "$LR/samples.txt"
	prev=$size
done
wait "$KNEE_PID"
echo "# knee exited $?; summary: $(jq -c '{requests, rate, errors, dropped_iterations, p99: .latency_ms.p99}' "$LR/summary.json" 2>/dev/null)"
echo "# $(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Deviation of each column from its first sample at or after 120 s: over
# every sample, and over those "between stalls", taken SETTLE (default 60)
# s or more after the last freeze began (a stall of the machine itself is
# not excluded); the run directory's growth per 10 s interval after 120 s
# (mean, min, max). A sample taken once the run's time is up is left out:
# knee is then reading the run back for its report.
awk -v every="$FREEZE_EVERY" -v settle="${SETTLE:-60}" -v end="$((MINUTES * 60))" '
function dev(x, x0) { d = (x - x0) / x0; return d < 0 ? -d : d }
NR > 1 && $1 >= 120 && $1 < end {
	# Columns 2-7: RSS, anonymous RSS, threads, open files, VUs, goroutines.
	if (!base) { base = 1; for (c = 2; c <= 7; c++) x0[c] = $c }
	between = $1 < every || $1 % every >= settle
	if (between) b++
	for (c = 2; c <= 7; c++) {
		d = dev($c, x0[c])
		if (d > m[c]) m[c] = d
		if (between && d > bm[c]) bm[c] = d
	}
	n++; s += $9; if (!mn || $9 < mn) mn = $9; if ($9 > mx) mx = $9
}
END {
	if (!n) { print "# too short: no sample after 120 s"; exit }
	printf "# 2-minute values: RSS %.1f MB (anonymous %.1f), threads %d, open files %d, VUs %d, goroutines %d\n", x0[2], x0[3], x0[4], x0[5], x0[6], x0[7]
	printf "# after 2 min, all %d samples: RSS within %.1f %% (anonymous %.1f %%), threads within %.1f %%, open files within %.1f %%, VUs within %.1f %%, goroutines within %.1f %% of their 2-minute values (bound 10 %%)\n", n, m[2] * 100, m[3] * 100, m[4] * 100, m[5] * 100, m[6] * 100, m[7] * 100
	printf "# between stalls (%d samples %d s or more after a freeze began): RSS within %.1f %% (anonymous %.1f %%), threads within %.1f %%, open files within %.1f %%, VUs within %.1f %%, goroutines within %.1f %%\n", b, settle, bm[2] * 100, bm[3] * 100, bm[4] * 100, bm[5] * 100, bm[6] * 100, bm[7] * 100
	printf "# run directory growth per 10 s: mean %.0f B, min %d, max %d (%d intervals)\n", s / n, mn, mx, n
}' "$LR/samples.txt"
