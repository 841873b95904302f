#!/bin/bash
# The machine's floor under knee's send lag (issue 12): how late a bare
# thread that sleeps until a time wakes, with the 1 ns timer slack knee's
# loop sets (request's BenchmarkWakeLateness: 1 ms waits in epoll_pwait2),
# on the idle machine and while fortio -uniform drives the target at each
# of RATES (default "300 1000 5000 20000") req/s. No generator that sleeps
# until its next start can send sooner after it than this; one that never
# sleeps spins a core. WAITS (default 5000) waits per measurement.
set -u
. "$(dirname "$0")/lib.sh"
WAITS=${WAITS:-5000}
go build -o "$BIN/target" ./bench/target || die "building the target failed"
go test -c -o "$BIN/request.test" ./request || die "building request's tests failed"
if [ ! -x "$PEERS/fortio" ]; then
	GOBIN=$PEERS go install fortio.org/fortio@v1.63.10 || die "installing fortio failed"
fi

# probe LABEL prints one row: the lateness of WAITS timed waits.
probe() {
	"$BIN/request.test" -test.run '^$' -test.bench 'WakeLateness/slack-1ns' -test.benchtime "${WAITS}x" >"$OUT/probe.out" 2>&1 ||
		die "the probe failed: $(cat "$OUT/probe.out")"
	awk -v l="$1" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" '/late-p50/ {
		for (i = 1; i < NF; i++) { if ($(i+1) == "late-p50-µs") p50 = $i; if ($(i+1) == "late-p99-µs") p99 = $i }
		printf "| %s | %.0f | %.0f | %s |\n", l, p50, p99, load }' "$OUT/probe.out"
}

header "wake-up lateness of a bare timed wait (1 ns slack), $WAITS waits of 1 ms"
echo "| machine | p50 µs | p99 µs | load average |"
echo "|---|---:|---:|---|"
probe idle
secs=$((WAITS * 12 / 10000 + 6)) # the probe's time and a margin
for R in ${RATES:-300 1000 5000 20000}; do
	start_target
	"$PEERS/fortio" load -qps "$R" -c 16 -uniform -t "${secs}s" -json "$OUT/floor-$R.json" "$TARGET_URL" >"$OUT/floor-$R.out" 2>&1 &
	FORTIO=$!
	sleep 2
	probe "target at $R/s (fortio -uniform)"
	wait "$FORTIO" || die "fortio failed: $(tail -3 "$OUT/floor-$R.out")"
	stop_target
done
