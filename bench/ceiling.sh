#!/bin/bash
# The ceiling (issue 27): the highest open-model rate each generator sends
# on time on this machine beside its target, found by stepping the rate,
# and the closed model's requests per second at 64 connections.
#
# Open model: each of RATES (default "5000 10000 15000 20000 25000 30000
# 40000") req/s for DURATION (default 10s), ascending, each on a fresh
# target warmed for WARM (default 2s) by fortio at the run's rate. A rate
# is held when:
#   knee    0 dropped iterations, achieved >= 99.5 % of the rate, send-lag
#           p99 < 1 ms (knee's own --summary-export);
#   wrk2    achieved >= 99.5 % (-t2 -c CONNS), and its lateness under 1 ms:
#           wrk2 sends late rather than drop and reports no send lag, but
#           with -L -U it prints its latency from the intended start
#           ("corrected") and from the actual send ("uncorrected"); their
#           p99s more than 1 ms apart mean it sent late;
#   fortio  achieved >= 99.5 % (-uniform -c CONNS): fortio reports neither
#           send lag nor latency from the intended start, so its achieved
#           rate is all there is to judge it by.
# The same lateness figure is printed for knee (latency p99 minus service
# p99) beside its send lag. A tool's ceiling is the highest rate held below
# its first miss. Every tool is also judged by the achieved rate alone (the
# peers' rule: 0 dropped for knee, lateness not looked at) and steps on
# until it misses that too. CONNS (default 16, as cost.sh) connections for
# the peers; knee opens what it needs (its default VU bounds).
#
# Closed model: REPS (default 3) interleaved runs of knee (constant-vus 64),
# wrk (-c64 -t2) and fortio (-qps 0 -c 64); the table gives the median
# req/s and CPU per request.
set -u
. "$(dirname "$0")/lib.sh"
D=${DURATION:-10s}
SECS=${D%s}
WARM=${WARM:-2s}
CONNS=${CONNS:-16}
REPS=${REPS:-3}
build
if [ ! -x "$PEERS/fortio" ]; then
	GOBIN=$PEERS go install fortio.org/fortio@v1.63.10 || die "installing fortio failed"
fi
TOOLS="knee fortio"
if [ -x "$PEERS/wrk2" ]; then
	TOOLS="knee wrk2 fortio"
else
	echo "# SKIPPED wrk2: bench/.bin/wrk2 is missing (see cost.sh for how to build it)" >&2
fi

# warm RATE warms the fresh target (0: as fast as it goes).
warm() {
	[ "$WARM" = 0 ] && return
	if [ "$1" = 0 ]; then
		"$PEERS/fortio" load -qps 0 -c 16 -t "$WARM" "$TARGET_URL" >"$OUT/warm.out" 2>&1
	else
		"$PEERS/fortio" load -qps "$1" -c 16 -uniform -t "$WARM" "$TARGET_URL" >"$OUT/warm.out" 2>&1
	fi || die "warming the target failed: $(tail -3 "$OUT/warm.out")"
}

# open_step TOOL RATE runs one step and prints "achieved held detail".
open_step() {
	name=ceil-$1-$2
	start_target
	warm "$2"
	case $1 in
	knee)
		timed "$name" "$BIN/knee" run --executor constant-arrival-rate --rate "$2" --duration "$D" \
			--url "$TARGET_URL" --quiet --out "$OUT/runs" --summary-export "$OUT/$name.json" ||
			die "knee failed: $(tail -3 "$OUT/$name.err")"
		jq -r --argjson r "$2" '[.rate, .dropped_iterations, (.send_lag_ms.p99 // 99), ((.latency_ms.p99 // 99) - (.service_ms.p99 // 0))] |
			"\(.[0]) \(if .[1] == 0 and .[0] >= 0.995 * $r and .[2] < 1 then "held" else "missed" end) \(if .[1] == 0 and .[0] >= 0.995 * $r then "held" else "missed" end) dropped=\(.[1]),lag-p99=\(.[2])ms,late-p99=\(.[3] * 1000 | round / 1000)ms"' \
			"$OUT/$name.json"
		;;
	wrk2)
		timed "$name" "$PEERS/wrk2" -t2 -c"$CONNS" -d"$D" -R"$2" -L -U "$TARGET_URL" ||
			die "wrk2 failed: $(tail -3 "$OUT/$name.err")"
		# The first " 99.000%" line is the corrected distribution, the
		# second the uncorrected one; values carry their unit.
		awk -v r="$2" '
		function ms(v) {
			if (v ~ /us$/) return v * 0.001
			if (v ~ /ms$/) return v + 0
			if (v ~ /m$/) return v * 60000
			if (v ~ /s$/) return v * 1000
			return v + 0
		}
		/^ *99\.000%/ { p99[++n] = ms($2) }
		/^Requests\/sec:/ { ach = $2 }
		END {
			late = (n == 2 ? p99[1] - p99[2] : 99)
			loose = (ach >= 0.995 * r ? "held" : "missed")
			held = (loose == "held" && late < 1 ? "held" : "missed")
			printf "%s %s %s corrected-p99=%.3fms,uncorrected-p99=%.3fms,late-p99=%.3fms\n", ach, held, loose, p99[1], p99[2], late
		}' "$OUT/$name.out"
		;;
	fortio)
		timed "$name" "$PEERS/fortio" load -qps "$2" -c "$CONNS" -uniform -t "$D" -json "$OUT/$name.json" "$TARGET_URL" ||
			die "fortio failed: $(tail -3 "$OUT/$name.err")"
		jq -r --argjson r "$2" '.ActualQPS | (if . >= 0.995 * $r then "held" else "missed" end) as $h | "\(.) \($h) \($h) -"' "$OUT/$name.json"
		;;
	esac
	stop_target
}

header "the open-model ceiling, $D steps"
echo "| tool | rate/s | achieved/s | µs CPU/req | held | held, peers' rule | detail |"
echo "|---|---:|---:|---:|---|---|---|"
declare -A CEIL LOOSE
for T in $TOOLS; do
	CEIL[$T]=none LOOSE[$T]=none
	strict=yes
	for R in ${RATES:-5000 10000 15000 20000 25000 30000 40000}; do
		read -r ach held loose detail < <(open_step "$T" "$R")
		echo "| $T | $R | $(printf '%.0f' "$ach") | $(us_per "$(cpu_of "ceil-$T-$R")" "$(awk -v a="$ach" -v s="$SECS" 'BEGIN { printf "%d", a * s }')") | $held | $loose | $detail |"
		[ "$held" = held ] || strict=
		[ -n "$strict" ] && CEIL[$T]=$R
		# Every tool steps on while it holds by the peers' rule, for that
		# figure beside the others'; a miss by both rules ends the steps.
		[ "$loose" = held ] || break
		LOOSE[$T]=$R
	done
done
echo
for T in $TOOLS; do echo "# ceiling $T: ${CEIL[$T]} req/s (by the peers' rule: ${LOOSE[$T]} req/s)"; done

header "the closed model, 64 connections, $D, $REPS interleaved runs"
: >"$OUT/ceiling-closed.tsv"
for rep in $(seq "$REPS"); do
	start_target && warm 0
	timed "closed-knee-$rep" "$BIN/knee" run --executor constant-vus --vus 64 --duration "$D" --url "$TARGET_URL" \
		--quiet --out "$OUT/runs" --summary-export "$OUT/closed-knee-$rep.json" || die "knee failed"
	printf 'knee\t%s\t%s\n' "$(knee_sum "closed-knee-$rep" .requests)" "$(cpu_of "closed-knee-$rep")" >>"$OUT/ceiling-closed.tsv"
	stop_target
	start_target && warm 0
	timed "closed-wrk-$rep" wrk -c64 -t2 -d"$D" "$TARGET_URL" || die "wrk failed"
	printf 'wrk\t%s\t%s\n' "$(awk '/requests in/ {print $1}' "$OUT/closed-wrk-$rep.out")" "$(cpu_of "closed-wrk-$rep")" >>"$OUT/ceiling-closed.tsv"
	stop_target
	start_target && warm 0
	timed "closed-fortio-$rep" "$PEERS/fortio" load -qps 0 -c 64 -t "$D" -json "$OUT/closed-fortio-$rep.json" "$TARGET_URL" ||
		die "fortio failed"
	printf 'fortio\t%s\t%s\n' "$(jq -r .DurationHistogram.Count "$OUT/closed-fortio-$rep.json")" "$(cpu_of "closed-fortio-$rep")" >>"$OUT/ceiling-closed.tsv"
	stop_target
done
echo "| tool | req/s (median) | runs | µs CPU/req (median) | vs wrk |"
echo "|---|---:|---|---:|---:|"
awk -F'\t' -v secs="$SECS" '
function med(s,   n, a, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ rps[$1] = rps[$1] " " $2 / secs; us[$1] = us[$1] " " ($2 > 0 ? $3 * 1e6 / $2 : 0); if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
END {
	w = med(rps["wrk"])
	for (i = 1; i <= n; i++) { t = order[i]; m = med(rps[t])
		printf "| %s | %.0f | %s | %.1f | %.2f× |\n", t, m, rps[t], med(us[t]), (w > 0 ? m / w : 0) }
}' "$OUT/ceiling-closed.tsv"
