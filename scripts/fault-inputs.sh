#!/usr/bin/env bash
# fault-inputs.sh runs knee on every hostile input of issue 22 (items 1, 2,
# 5, 6) under a memory and time bound, and checks each ends as it should:
# the right exit code within `timeout` (SECS) and a peak resident memory
# under RSS_MB (measured by GNU time; `ulimit -v` MEM_KB is only a backstop
# that keeps a runaway from taking the machine: Go reserves address space
# well beyond what it uses, so a tight ulimit -v fails at random).
# Full-disk cases need root and unshare (a tiny tmpfs in a private mount
# namespace); without them they are skipped, loudly.
#
#   scripts/fault-inputs.sh            # builds knee into a temporary directory
#   KNEE=./knee scripts/fault-inputs.sh
set -uo pipefail
cd "$(dirname "$0")/.."

MEM_KB="${MEM_KB:-4000000}" # 4 GB of address space: the backstop
RSS_MB="${RSS_MB:-400}"      # the bound asserted on every check
SECS="${SECS:-60}"
gnutime=/usr/bin/time
[ -x "$gnutime" ] || { gnutime=""; echo "SKIP  peak-memory assertions: GNU time (/usr/bin/time, Debian package time) is not installed"; }
work=$(mktemp -d)
srv_pid=""
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
knee="${KNEE:-$work/knee}"
[ -n "${KNEE:-}" ] || go build -o "$knee" ./cmd/knee || exit 1

failed=0 n=0
# check NAME WANT_EXIT CMD...: runs CMD bounded; prints seconds, peak RSS, exit.
check() {
  local name=$1 want=$2
  shift 2
  n=$((n + 1))
  local t0 t1 rc
  t0=$(date +%s.%N)
  rm -f "$work/rss"
  if [ -n "$gnutime" ]; then
    (ulimit -v "$MEM_KB"; exec "$gnutime" -q -f %M -o "$work/rss" timeout -s KILL "$SECS" "$@") >"$work/out" 2>&1 </dev/null
  else
    (ulimit -v "$MEM_KB"; exec timeout -s KILL "$SECS" "$@") >"$work/out" 2>&1 </dev/null
  fi
  rc=$?
  t1=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
  local rss=""
  [ -s "$work/rss" ] && rss=$(($(tail -n 1 "$work/rss") / 1024))
  if [ "$rc" -ne "$want" ]; then
    failed=1
    echo "FAIL  $name: exit $rc, want $want (${secs} s; 137 = killed: over ${SECS} s)"
    tail -n 3 "$work/out" | sed 's/^/        /'
  elif [ -n "$rss" ] && [ "$rss" -gt "$RSS_MB" ]; then
    failed=1
    echo "FAIL  $name: peak RSS ${rss} MB, over ${RSS_MB} MB"
  else
    echo "ok    $name: exit $rc in ${secs} s, peak RSS ${rss:-?} MB"
  fi
}
# check_stdin NAME WANT_EXIT PRODUCER -- CMD...: CMD reads PRODUCER's output.
check_stdin() {
  local name=$1 want=$2 producer=$3
  shift 4
  n=$((n + 1))
  local rc
  (ulimit -v "$MEM_KB"; $producer 2>/dev/null | timeout -s KILL "$SECS" "$@"; exit "${PIPESTATUS[1]}") >"$work/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    failed=1
    echo "FAIL  $name: exit $rc, want $want"
    tail -n 3 "$work/out" | sed 's/^/        /'
  else
    echo "ok    $name: exit $rc"
  fi
}

k6h='metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata'
row() { echo "http_req_duration,$1,12.5,,,,true,,GET,$2,HTTP/1.1,s1,,200,,,$2,,"; }

echo "== item 2: cost by data, not by time span"
{ echo "$k6h"; for i in 0 1 2 3 4; do row $((1700000000 + i * 21600)) "GET /a"; done; } >"$work/span5.csv"
check "k6 CSV, 5 rows 6 h apart" 0 "$knee" analyze "$work/span5.csv"
{ echo "$k6h"; for i in $(seq 0 1459); do row $((1700000000 + i * 21600)) "GET /a"; done; } >"$work/span1460.csv"
check "k6 CSV, 1,460 rows 6 h apart (a year)" 0 "$knee" analyze "$work/span1460.csv"
{
  echo '{"type":"Point","metric":"http_req_duration","data":{"time":"2023-11-14T22:13:20Z","value":12.5,"tags":{"name":"GET /a","status":"200","scenario":"s1"}}}'
  echo '{"type":"Point","metric":"http_req_duration","data":{"time":"2023-11-15T04:13:20Z","value":12.5,"tags":{"name":"GET /a","status":"200","scenario":"s1"}}}'
} >"$work/span.json"
check "k6 JSON, 2 points 6 h apart" 0 "$knee" analyze "$work/span.json"
"$knee" import "$work/span5.csv" --out "$work/imp" >/dev/null 2>&1
run="$work/imp/span5"
{ head -n 5 "$run/latency.hlog"; sed -n 6p "$run/latency.hlog"; sed -n 6p "$run/latency.hlog" | sed 's/,0\.000,/,31536000.000,/'; } >"$work/year.hlog"
check "hlog, two lines a year apart" 0 "$knee" analyze "$work/year.hlog"
cp -r "$run" "$work/yearrun"
sed -i '$ s/,86400\.000,/,31622400.000,/' "$work/yearrun/latency.hlog"
check "run directory, last hlog line a year ahead" 0 "$knee" analyze "$work/yearrun"

echo "== item 5: torn last lines"
cp -r "$run" "$work/torn"
truncate -s -40 "$work/torn/latency.hlog"
truncate -s -20 "$work/torn/counters.jsonl"
check "torn latency.hlog and counters.jsonl: analyze" 0 "$knee" analyze "$work/torn"
check "torn: analyze --lenient" 0 "$knee" analyze --lenient "$work/torn"
check "torn: report" 0 "$knee" report "$work/torn"
"$knee" analyze "$work/torn" >"$work/torn.out" 2>&1 # a file: grep -q on a pipe would stop knee early (pipefail)
if grep -q "cut short" "$work/torn.out"; then
  echo "ok    torn: the analysis says which file was cut short"
else
  failed=1
  echo "FAIL  torn: the analysis does not say a file was cut short"
fi

echo "== item 6: reads without a limit"
mkdir -p "$work/zrun" && ln -s /dev/zero "$work/zrun/run.json"
check "run.json is /dev/zero" 2 "$knee" analyze "$work/zrun"
check "knee run /dev/zero" 2 "$knee" run /dev/zero
check_stdin "yes 'a: b' | knee run -" 2 "yes a:_b" -- "$knee" run -
ln -s /dev/zero "$work/zero.js"
check "a k6 script that is /dev/zero" 2 "$knee" run "$work/zero.js"
printf 'const d = open("/dev/zero", "b");\nexport default function () {}\n' >"$work/open.js"
check "open('/dev/zero', 'b') in a script" 2 "$knee" run "$work/open.js" --vus 1 --duration 1s
{ echo "$k6h"; head -c $((16 << 20)) /dev/zero | tr '\0' ','; echo; } >"$work/commas.csv"
check "a 16 MiB CSV line of commas" 2 "$knee" analyze "$work/commas.csv"

echo "== item 1: unique URLs in a k6 script"
cat >"$work/target.go" <<'GO'
package main

import (
	"fmt"
	"net"
	"net/http"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Addr())
	http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
}
GO
(cd "$work" && go mod init target >/dev/null 2>&1 && go build -o target target.go) || exit 1
"$work/target" >"$work/addr" &
srv_pid=$!
for _ in $(seq 50); do [ -s "$work/addr" ] && break; sleep 0.1; done
cat >"$work/uniq.js" <<JS
import http from 'k6/http';
export const options = { vus: 4, duration: '8s' };
export default function () { http.get('http://$(cat "$work/addr")/item/' + __VU + '-' + __ITER); }
JS
# 1.5 GB of address space: the run reached 1.5 GB of RSS in 11 s before.
check "k6 script with a unique URL per iteration, 8 s" 0 "$knee" run "$work/uniq.js" --out "$work/runs"
if grep -q 'recorded as "(other)"' "$work/out"; then
  echo "ok    unique URLs: the run says names were folded into (other)"
else
  failed=1
  echo "FAIL  unique URLs: no warning of names folded into (other)"
fi

echo "== item 5: a full disk"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
  mkdir -p "$work/full"
  full() { unshare -m sh -c "mount -t tmpfs -o size=$1 tmpfs '$work/full' && $2; rc=\$?; cp -r '$work/full' '$work/fullcopy'; exit \$rc"; }
  full 24k "'$knee' run '$work/uniq.js' --duration 5s --out '$work/full' >'$work/out' 2>&1"
  rc=$?
  n=$((n + 1))
  if [ "$rc" -eq 1 ]; then echo "ok    run on a full disk: exit 1"; else failed=1; echo "FAIL  run on a full disk: exit $rc, want 1"; fi
  d=$(ls -d "$work"/fullcopy/*/ | head -n 1)
  if [ -n "$d" ] && [ "$(tail -c 1 "$d/latency.hlog" | od -An -c | tr -d ' ')" = '\n' ]; then
    echo "ok    run on a full disk: latency.hlog ends in a whole line"
  else
    failed=1
    echo "FAIL  run on a full disk: latency.hlog ends mid-line"
  fi
  check "run on a full disk: analyze" 0 "$knee" analyze "$d"
  rm -rf "$work/fullcopy"
  full 40k "dd if=/dev/zero of='$work/full/fill' bs=1k count=24 2>/dev/null; '$knee' report '$run' --format html --out '$work/full/report.html' >'$work/out' 2>&1"
  rc=$?
  n=$((n + 1))
  if [ "$rc" -eq 1 ] && [ ! -e "$work/fullcopy/report.html" ]; then
    echo "ok    report --out on a full disk: exit 1, no partial report.html"
  else
    failed=1
    echo "FAIL  report --out on a full disk: exit $rc, report.html $(ls -l "$work/fullcopy/report.html" 2>&1)"
  fi
  rm -rf "$work/fullcopy"
  { echo "$k6h"; for i in $(seq 0 3000); do row $((1700000000 + i)) "GET /a$((i % 50))"; done; } >"$work/big.csv"
  full 40k "'$knee' import '$work/big.csv' --out '$work/full' >'$work/out' 2>&1"
  rc=$?
  n=$((n + 1))
  if [ "$rc" -eq 1 ]; then echo "ok    import on a full disk: exit 1"; else failed=1; echo "FAIL  import on a full disk: exit $rc, want 1"; fi
else
  echo "SKIP  full-disk cases: they need root and unshare -m (a private tmpfs)"
fi

echo "fault-inputs.sh: $n checks, each under ${SECS} s and ${RSS_MB} MB of peak RSS"
exit "$failed"
