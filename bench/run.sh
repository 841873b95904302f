#!/bin/bash
# Runs every load-generator benchmark in turn and prints their Markdown
# tables (about 15 minutes; LONG=1 adds the 10-minute memory run). The
# import benchmark is separate: bench/import/run.sh.
set -eu
dir=$(dirname "$0")
"$dir/closed.sh"
"$dir/cost.sh"
"$dir/open.sh"
"$dir/freeze.sh"
"$dir/rss.sh"
