#!/usr/bin/env bash
# span.sh: what `knee analyze` of a k6 CSV costs against the data's size and
# its time span (issue 22, item 2): seconds and peak RSS (GNU time) for k6
# CSVs of N rows spread over a span, one name and five. Analysis should cost
# what the rows do, not what the span does: empty time is free.
#
#   bench/span.sh                # builds knee; prints one table
#   KNEE=./knee bench/span.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v /usr/bin/time >/dev/null || { echo "span.sh: needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
knee="${KNEE:-$work/knee}"
[ -n "${KNEE:-}" ] || go build -o "$knee" ./cmd/knee

h='metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata'
# csv ROWS SPAN_S NAMES: ROWS rows evenly over SPAN_S seconds.
csv() {
  awk -v rows="$1" -v span="$2" -v names="$3" -v h="$h" 'BEGIN {
    print h
    for (i = 0; i < rows; i++) {
      t = 1700000000 + int(i * span / (rows > 1 ? rows - 1 : 1))
      printf "http_req_duration,%d,%.3f,,,,true,,GET,GET /n%d,HTTP/1.1,s1,,200,,,GET /n%d,,\n", t, 1 + (i * 7919) % 500 / 10, i % names, i % names
    }
  }'
}
printf "%-9s %-9s %-6s %-9s %9s %9s\n" rows span names bytes seconds "peak MB"
for spec in "5 21600 1" "5 86400 1" "1460 31514400 1" "10000 60 1" "10000 21600 5" "100000 21600 5" "400000 21600 5"; do
  set -- $spec
  csv "$1" "$2" "$3" >"$work/in.csv"
  /usr/bin/time -f "%e %M" -o "$work/t" "$knee" analyze "$work/in.csv" >/dev/null 2>&1 || { echo "span.sh: knee analyze failed on $spec" >&2; exit 1; }
  read -r secs kb <"$work/t"
  printf "%-9s %-9s %-6s %-9s %9s %9d\n" "$1" "$2s" "$3" "$(wc -c <"$work/in.csv")" "$secs" $((kb / 1024))
done
