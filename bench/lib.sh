# Shared by the bench scripts: builds knee and the target, starts and stops
# the target by PID, and runs a generator under /usr/bin/time so only that
# process's CPU and peak RSS are measured. Source it; do not run it.

cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/bench/out}
BIN=$OUT/bin
PEERS=$ROOT/bench/.bin
mkdir -p "$BIN" "$OUT/runs"

die() { echo "bench: $*" >&2; exit 1; }

# build compiles knee and the target server; vegeta is installed into
# bench/.bin (never into knee's go.mod) the first time. KNEE_BIN, if set,
# is a knee binary to measure instead of building one.
build() {
	if [ -n "${KNEE_BIN:-}" ]; then
		cp "$KNEE_BIN" "$BIN/knee" || die "KNEE_BIN $KNEE_BIN: cannot copy it"
	else
		go build -o "$BIN/knee" ./cmd/knee || die "building knee failed"
	fi
	go build -o "$BIN/target" ./bench/target || die "building the target failed"
	if [ ! -x "$PEERS/vegeta" ]; then
		GOBIN=$PEERS go install github.com/tsenart/vegeta/v12@latest || die "installing vegeta failed"
	fi
	command -v wrk >/dev/null || die "wrk missing: apt-get install -y wrk"
	command -v hey >/dev/null || die "hey missing: apt-get install -y hey"
	[ -x /usr/bin/time ] || die "/usr/bin/time missing: apt-get install -y time"
}

# start_target [delay] starts the target on a free loopback port and sets
# TARGET_PID and TARGET_URL.
start_target() {
	fifo=$OUT/target-$$.addr
	rm -f "$fifo"
	"$BIN/target" -delay "${1:-0s}" >"$fifo" 2>>"$OUT/target.err" &
	TARGET_PID=$!
	for _ in $(seq 50); do
		[ -s "$fifo" ] && break
		sleep 0.1
	done
	[ -s "$fifo" ] || die "the target did not start"
	TARGET_URL="http://$(head -n1 "$fifo")/"
}

# stop_target continues and stops the target, first stopping a pending
# freeze_later job so it cannot signal a reused PID.
stop_target() {
	if [ -n "${FREEZER:-}" ]; then
		kill "$FREEZER" 2>/dev/null
		FREEZER=
	fi
	if [ -n "${TARGET_PID:-}" ]; then
		kill -CONT "$TARGET_PID" 2>/dev/null
		kill "$TARGET_PID" 2>/dev/null
		wait "$TARGET_PID" 2>/dev/null
		TARGET_PID=
	fi
}
trap stop_target EXIT

# timed NAME CMD... runs CMD under /usr/bin/time; its CPU seconds
# (user+sys), wall seconds and peak RSS (MB) land in $OUT/NAME.time as
# "cpu wall rss_mb", its stdout in $OUT/NAME.out.
timed() {
	name=$1
	shift
	/usr/bin/time -f "%U %S %e %M" -o "$OUT/$name.rawtime" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	rc=$?
	awk '{printf "%.3f %.3f %.1f\n", $1+$2, $3, $4/1024}' "$OUT/$name.rawtime" >"$OUT/$name.time"
	return $rc
}

cpu_of() { awk '{print $1}' "$OUT/$1.time"; }
wall_of() { awk '{print $2}' "$OUT/$1.time"; }
rss_of() { awk '{print $3}' "$OUT/$1.time"; }

# div A B [format] prints A/B.
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN { if (b == 0) print "-"; else printf f "\n", a / b }'; }

# knee_sum NAME JQ reads a field of knee's exported summary.
knee_sum() { jq -r "$2" "$OUT/$1.json"; }

# vegeta_report NAME writes vegeta's JSON report of NAME's results.
vegeta_report() { "$PEERS/vegeta" report -type=json "$OUT/$1.bin" >"$OUT/$1.json"; }

# header prints when, where and how busy the machine was.
header() {
	echo "# $1"
	echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# us_per CPU_SECONDS N prints µs of CPU per request.
us_per() { awk -v c="$1" -v n="$2" 'BEGIN { if (n == 0) print "-"; else printf "%.1f\n", c * 1e6 / n }'; }

# pct A B prints A as a percentage of B.
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2f\n", a * 100 / b }'; }
