#!/bin/bash
# The generator's cost next to its peers, interleaved in one run (issue 12):
# open model at RATES (default "1000 5000 20000") req/s with knee, fortio
# (default: its connections paced in step, so requests go out in bursts of
# FORTIO_C) and fortio -uniform (evenly spaced, as knee's schedule); the
# closed loop, 64 connections, with knee, wrk and fortio -qps 0. Each run
# gets a fresh target; REPS (default 2) repetitions, DURATION (default 10s)
# each; the table gives the median of the repetitions. BASE_BIN, if set, is
# a second knee binary measured in the same loop as "knee-base". The open
# model is also run by vegeta (installed into bench/.bin, as fortio) and by
# wrk2 (-t2 -c FORTIO_C -R RATE) when bench/.bin/wrk2 is there: wrk2 is not
# in Debian; build it with
#   git clone https://github.com/giltene/wrk2 && make -C wrk2 && cp wrk2/wrk bench/.bin/wrk2
# (PEERS_OPEN="fortio" leaves both out.)
#
# Each fresh target is first warmed for WARM (default 2s; 0: not) by fortio
# at the run's rate (the closed runs: as fast as it goes), the same for every
# generator. A Go server's first ~100 ms (heap, GC pacing, threads) are
# slower; at 20,000/s that alone made a cold target's replies late, the open
# model's starts meet no idle VU and each new VU opens a connection (knee,
# as k6), while fortio warms each of its connections itself before it
# starts: without it, 20,000/s measured the target's start, not the
# generator (bench/README (d), 18:30 UTC).
#
# Generator CPU is user+sys of the whole process (/usr/bin/time). knee's
# fixed cost (start-up, environment note, run directory, read-back) is
# measured alone with a 1 req/s, 2 s run, and knee's per-request figure
# without it is "knee −fixed"; "knee load" is knee's own count of the load
# alone (generator_cpu_s).
set -u
. "$(dirname "$0")/lib.sh"
D=${DURATION:-10s}
SECS=${D%s}
REPS=${REPS:-2}
FC=${FORTIO_C:-16}
WARM=${WARM:-2s}
build
if [ ! -x "$PEERS/fortio" ]; then
	# Newer releases need a module this machine cannot reach.
	GOBIN=$PEERS go install fortio.org/fortio@v1.63.10 || die "installing fortio failed"
fi
if [ -n "${BASE_BIN:-}" ]; then
	cp "$BASE_BIN" "$BIN/knee-base" || die "BASE_BIN $BASE_BIN: cannot copy it"
fi
RAW=$OUT/cost.tsv
: >"$RAW"

# fresh_target RATE starts a target and warms it at RATE (0: closed, as
# fast as it goes) for WARM.
fresh_target() {
	start_target
	[ "$WARM" = 0 ] && return
	if [ "$1" = 0 ]; then
		"$PEERS/fortio" load -qps 0 -c 16 -t "$WARM" "$TARGET_URL" >"$OUT/warm.out" 2>&1
	else
		"$PEERS/fortio" load -qps "$1" -c 16 -uniform -t "$WARM" "$TARGET_URL" >"$OUT/warm.out" 2>&1
	fi || die "warming the target failed: $(tail -3 "$OUT/warm.out")"
}

# row TOOL MODEL RATE NAME N [LAG50 LAG99 ACHIEVED DROPPED LOAD_CPU] appends one measured run.
row() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$5" "$(cpu_of "$4")" \
		"${6:--}" "${7:--}" "${8:--}" "${9:--}" "${10:--}" >>"$RAW"
}

# knee_open NAME BIN RATE runs a knee binary in the open model.
knee_open() {
	timed "$1" "$2" run --executor constant-arrival-rate --rate "$3" --duration "$D" --url "$TARGET_URL" \
		--quiet --out "$OUT/runs" --summary-export "$OUT/$1.json" || die "knee failed: $(cat "$OUT/$1.err")"
	row "${4:-knee}" open "$3" "$1" "$(knee_sum "$1" .requests)" "$(knee_sum "$1" '.send_lag_ms.p50 // "-"')" \
		"$(knee_sum "$1" '.send_lag_ms.p99 // "-"')" "$(knee_sum "$1" .rate)" "$(knee_sum "$1" .dropped_iterations)" \
		"$(knee_sum "$1" .generator_cpu_s)"
}

# wrk2_run NAME RATE runs wrk2 at RATE.
wrk2_run() {
	timed "$1" "$PEERS/wrk2" -t2 -c"$FC" -d"$D" -R"$2" "$TARGET_URL" || die "wrk2 failed: $(tail -3 "$OUT/$1.err")"
	row wrk2 open "$2" "$1" "$(awk '/requests in/ {print $1}' "$OUT/$1.out")" - - \
		"$(awk '/^Requests\/sec:/ {print $2}' "$OUT/$1.out")"
}

# vegeta_run NAME RATE runs vegeta at RATE (no limit on its workers, as by default).
vegeta_run() {
	timed "$1" "$PEERS/vegeta" attack -rate "$2" -duration "$D" -targets <(echo "GET $TARGET_URL") \
		-output "$OUT/$1.bin" || die "vegeta failed: $(tail -3 "$OUT/$1.err")"
	vegeta_report "$1"
	row vegeta open "$2" "$1" "$(jq -r .requests "$OUT/$1.json")" - - "$(jq -r .throughput "$OUT/$1.json")"
}

# fortio_run NAME TOOL MODEL RATE ARGS... runs fortio load.
fortio_run() {
	name=$1 tool=$2 model=$3 rate=$4
	shift 4
	timed "$name" "$PEERS/fortio" load "$@" -t "$D" -json "$OUT/$name.json" "$TARGET_URL" || die "fortio failed"
	row "$tool" "$model" "$rate" "$name" "$(jq -r .DurationHistogram.Count "$OUT/$name.json")" - - \
		"$(jq -r .ActualQPS "$OUT/$name.json")"
}

PEERS_OPEN=${PEERS_OPEN:-fortio vegeta wrk2}
case " $PEERS_OPEN " in *" wrk2 "*)
	if [ ! -x "$PEERS/wrk2" ]; then
		echo "# SKIPPED wrk2: bench/.bin/wrk2 is missing (see the top of this script for how to build it)" >&2
		PEERS_OPEN=${PEERS_OPEN/wrk2/}
	fi
esac
header "generator cost, $D runs, $REPS repetitions, interleaved"
for rep in $(seq "$REPS"); do
	start_target
	timed "knee-fixed-$rep" "$BIN/knee" run --executor constant-arrival-rate --rate 1 --duration 2s \
		--url "$TARGET_URL" --quiet --out "$OUT/runs" --summary-export "$OUT/knee-fixed-$rep.json" || die "knee failed"
	row knee-fixed open 1 "knee-fixed-$rep" "$(knee_sum "knee-fixed-$rep" .requests)"
	stop_target
	for R in ${RATES:-1000 5000 20000}; do
		fresh_target "$R" && knee_open "knee-$R-$rep" "$BIN/knee" "$R" && stop_target
		fresh_target "$R" && fortio_run "fortio-$R-$rep" fortio open "$R" -qps "$R" -c "$FC" && stop_target
		fresh_target "$R" && fortio_run "fortiou-$R-$rep" fortio-uniform open "$R" -qps "$R" -c "$FC" -uniform && stop_target
		case " $PEERS_OPEN " in *" wrk2 "*) fresh_target "$R" && wrk2_run "wrk2-$R-$rep" "$R" && stop_target ;; esac
		case " $PEERS_OPEN " in *" vegeta "*) fresh_target "$R" && vegeta_run "vegeta-$R-$rep" "$R" && stop_target ;; esac
		if [ -n "${BASE_BIN:-}" ]; then
			fresh_target "$R" && knee_open "kneebase-$R-$rep" "$BIN/knee-base" "$R" knee-base && stop_target
		fi
	done
	fresh_target 0
	timed "knee-closed-$rep" "$BIN/knee" run --executor constant-vus --vus 64 --duration "$D" --url "$TARGET_URL" \
		--quiet --out "$OUT/runs" --summary-export "$OUT/knee-closed-$rep.json" || die "knee failed"
	row knee closed 64 "knee-closed-$rep" "$(knee_sum "knee-closed-$rep" .requests)" - - - - \
		"$(knee_sum "knee-closed-$rep" .generator_cpu_s)"
	stop_target
	fresh_target 0
	timed "wrk-closed-$rep" wrk -c64 -t2 -d"$D" "$TARGET_URL" || die "wrk failed"
	row wrk closed 64 "wrk-closed-$rep" "$(awk '/requests in/ {print $1}' "$OUT/wrk-closed-$rep.out")"
	stop_target
	fresh_target 0 && fortio_run "fortio-closed-$rep" fortio closed 64 -qps 0 -c 64 && stop_target
	if [ -n "${BASE_BIN:-}" ]; then
		fresh_target 0
		timed "kneebase-closed-$rep" "$BIN/knee-base" run --executor constant-vus --vus 64 --duration "$D" \
			--url "$TARGET_URL" --quiet --out "$OUT/runs" --summary-export "$OUT/kneebase-closed-$rep.json" || die "knee failed"
		row knee-base closed 64 "kneebase-closed-$rep" "$(knee_sum "kneebase-closed-$rep" .requests)" - - - - \
			"$(knee_sum "kneebase-closed-$rep" .generator_cpu_s)"
		stop_target
	fi
	echo "# repetition $rep done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
done

# The table: medians over the repetitions of µs CPU per request (whole
# process), and for knee its figure without the fixed cost, its own count of
# the load, send lag, achieved rate and drops.
awk -F'\t' -v secs="$SECS" -v fc="$FC" '
function med(key,   n, i, j, t, a) {
	n = split(vals[key], a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	if (n == 0) return ""
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(key, v) { if (v != "-" && v != "") vals[key] = vals[key] " " v }
$1 == "knee-fixed" { add("fixed", $5); next }
{
	k = $1 SUBSEP $2 SUBSEP $3
	if (!(k in seen)) { seen[k] = 1; order[++no] = k }
	add(k SUBSEP "us", $4 > 0 ? $5 * 1e6 / $4 : "")
	add(k SUBSEP "n", $4)
	add(k SUBSEP "cpu", $5)
	add(k SUBSEP "lag50", $6); add(k SUBSEP "lag99", $7)
	add(k SUBSEP "ach", $8); add(k SUBSEP "drop", $9)
	add(k SUBSEP "load", $10 != "-" && $4 > 0 ? $10 * 1e6 / $4 : "")
	if ($1 == "knee" || $1 == "knee-base") add(k SUBSEP "net", $4 > 0 ? "pending" : "")
	runs[k] = runs[k] " " $5 ":" $4
}
END {
	fixed = med("fixed")
	printf "# knee fixed cost (1 req/s for 2 s, whole process): %.3f s CPU\n", fixed
	printf "| tool | model | rate/s | requests | µs CPU/req | knee −fixed µs/req | knee load µs/req | achieved/s | dropped | send-lag p50 / p99 ms |\n"
	printf "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
	for (o = 1; o <= no; o++) {
		k = order[o]; split(k, p, SUBSEP)
		net = "-"
		if (p[1] ~ /^knee/) {
			n = split(runs[k], rr, " "); delete nv; nl = ""
			for (i = 1; i <= n; i++) { split(rr[i], cn, ":"); if (cn[2] > 0) nl = nl " " (cn[1] - fixed) * 1e6 / cn[2] }
			vals[k SUBSEP "netv"] = nl; net = sprintf("%.1f", med(k SUBSEP "netv"))
		}
		ld = med(k SUBSEP "load"); ld = ld == "" ? "-" : sprintf("%.1f", ld)
		ach = med(k SUBSEP "ach"); ach = ach == "" ? (p[2] == "closed" ? sprintf("%.0f", med(k SUBSEP "n") / secs) : "-") : sprintf("%.0f", ach)
		dr = med(k SUBSEP "drop"); dr = dr == "" ? "-" : dr
		lag = med(k SUBSEP "lag50"); lag = lag == "" ? "-" : sprintf("%s / %s", lag, med(k SUBSEP "lag99"))
		us[k] = med(k SUBSEP "us")
		printf "| %s | %s | %s | %.0f | %.1f | %s | %s | %s | %s | %s |\n", p[1], p[2], p[3], med(k SUBSEP "n"), us[k], net, ld, ach, dr, lag
	}
	printf "\n| knee | model | rate/s | µs/req | fortio (-c %d) | fortio -uniform | wrk2 | vegeta | wrk | knee / fortio | knee / fortio -uniform | knee / wrk2 | knee / vegeta | knee / wrk |\n", fc
	printf "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
	for (o = 1; o <= no; o++) {
		k = order[o]; split(k, p, SUBSEP)
		if (p[1] != "knee" && p[1] != "knee-base") continue
		line = sprintf("| %s | %s | %s | %.1f |", p[1], p[2], p[3], us[k]); ratios = ""
		split("fortio fortio-uniform wrk2 vegeta wrk", peer, " ")
		for (i = 1; i <= 5; i++) {
			v = us[peer[i] SUBSEP p[2] SUBSEP p[3]]
			line = line (v == "" ? " - |" : sprintf(" %.1f |", v))
			ratios = ratios (v == "" ? " - |" : sprintf(" %.2f× |", us[k] / v))
		}
		print line ratios
	}
}' "$RAW"
echo "# raw runs: $RAW"
