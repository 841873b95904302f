#!/bin/sh
# Import benchmark: generate a k6 CSV (default 1024 MB), time `knee import`
# of it on one core (GOMAXPROCS=1) and Python's csv module computing the
# same counts. Output goes to bench/out/ (git-ignored).
set -eu
cd "$(dirname "$0")/../.."
MB=${MB:-1024}
OUT=bench/out/import
mkdir -p "$OUT"
CSV=$OUT/k6-${MB}mb.csv
[ -f "$CSV" ] || go run ./bench/import/gen -o "$CSV" -mb "$MB"
go build -o "$OUT/importbench" ./bench/import/importbench
rm -rf "$OUT/run"
GOMAXPROCS=1 "$OUT/importbench" -out "$OUT/run" "$CSV"
python3 bench/import/reference.py "$CSV"
