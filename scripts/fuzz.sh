#!/usr/bin/env bash
# fuzz.sh runs every fuzz target of the repository (func FuzzXxx in any
# package) for FUZZTIME seconds each (default 10), one after another: go test
# fuzzes one target of one package at a time. New crashers land in the
# package's testdata/fuzz/ and make the script fail.
#
#   FUZZTIME=60 make fuzz
#   FUZZTIME=5 scripts/fuzz.sh ./request ./scenario   # some packages only
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${FUZZTIME:-10}"
failed=0
n=0
for pkg in $(go list "${@:-./...}"); do
  # -list prints the matching names, then "ok <pkg> <time>".
  targets=$(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
  for t in $targets; do
    n=$((n + 1))
    echo "fuzz.sh: $pkg $t for ${secs}s"
    if ! go test -run '^$' -fuzz "^${t}\$" -fuzztime "${secs}s" "$pkg"; then
      echo "fuzz.sh: $pkg $t FAILED" >&2
      failed=1
    fi
  done
done
echo "fuzz.sh: $n fuzz targets, ${secs}s each"
exit "$failed"
