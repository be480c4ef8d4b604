#!/bin/bash
# Counts the instructions (all threads, under valgrind's callgrind) of one
# conversion of the synthetic chain, the way the CLI converts, against one
# protobuf parse + serialize of the same model (the floor). Unlike times,
# the counts do not move with the machine's load, so they show what a
# change to the engine saves. Each count is (3 repetitions - 1) / 2, which
# leaves out building the model and starting the process.
#
#   tools/bench-instructions.sh [nodes]     default: 10000 (about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 1; }
bazel build -c opt //bench:convert_repeat >/dev/null 2>&1
nodes=${1:-10000}
binary=bazel-bin/bench/convert_repeat
count() {  # target repetitions -> instructions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "$nodes" "$1" "$2" 2>&1 |
    awk '/I +refs:/ { gsub(",", "", $NF); print $NF }'
}
per_run() {  # target -> instructions of one run
  local one three
  one=$(count "$1" 1)
  three=$(count "$1" 3)
  echo $(( (three - one) / 2 ))
}
floor=$(per_run 0)
printf '| nodes | parse + serialize | convert -> 13 | convert -> 21 |\n| --- | --- | --- | --- |\n'
to13=$(per_run 13)
to21=$(per_run 21)
awk -v n="$nodes" -v f="$floor" -v a="$to13" -v b="$to21" 'BEGIN {
  printf "| %d | %.1f M | %.1f M (%.2fx) | %.1f M (%.2fx) |\n", n, f / 1e6, a / 1e6, a / f, b / 1e6, b / f }'
