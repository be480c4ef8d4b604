#!/bin/bash
# Runs //bench:convert_bench one benchmark per process (a benchmark runs
# differently after larger ones in the same process: the heap they leave)
# and prints, for 5 repetitions of each, the median and the fastest with
# their ratio to the floor (protobuf parse + serialize of the same model).
# Other load on the machine only slows a repetition down, so the fastest is
# the figure it moves least. It stops the Bazel server first.
#
#   tools/bench-convert.sh [sizes...]     default: 10000 100000 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build -c opt //bench:convert_bench >/dev/null 2>&1
# An idle Bazel server still wakes up: on a machine of 2 cores it moved the
# conversion's times by up to 30%. Stopped, it starts again at the next build.
bazel shutdown >/dev/null 2>&1
binary=bazel-bin/bench/convert_bench
sizes=("$@")
[ $# -eq 0 ] && sizes=(10000 100000 1000000)
benches=(ParseAndSerialize SerializedTo13 SerializedTo21 ConvertTo13 ConvertTo21)
declare -A median fastest
for n in "${sizes[@]}"; do
  for b in "${benches[@]}"; do
    # "median min" in ms
    read -r m f < <("$binary" --benchmark_filter="^BM_$b/$n/" --benchmark_repetitions=5 \
      --benchmark_report_aggregates_only=true --benchmark_format=csv 2>/dev/null |
      awk -F, '/_(median|min)"/ { t = $3; u = $5; gsub(/"/, "", u);
        if (u == "us") t /= 1000; if (u == "ns") t /= 1e6; if (u == "s") t *= 1000;
        if ($1 ~ /_median"/) m = t; else f = t }
        END { printf "%.2f %.2f\n", m, f }')
    median[$b,$n]=$m
    fastest[$b,$n]=$f
  done
done
table() {  # title, array name
  local -n times=$2
  printf '%s\n\n| nodes | parse + serialize |' "$1"
  for b in "${benches[@]:1}"; do printf ' %s |' "$b"; done
  printf '\n| --- | --- |'
  for b in "${benches[@]:1}"; do printf ' --- |'; done
  printf '\n'
  for n in "${sizes[@]}"; do
    local floor=${times[ParseAndSerialize,$n]}
    printf '| %s | %s ms |' "$n" "$floor"
    for b in "${benches[@]:1}"; do
      local t=${times[$b,$n]}
      printf ' %s ms (%s) |' "$t" "$(awk -v t="$t" -v f="$floor" 'BEGIN { printf "%.2fx", t / f }')"
    done
    printf '\n'
  done
  printf '\n'
}
table "Medians of 5 repetitions" median
table "Fastest of 5 repetitions" fastest
