#!/bin/bash
# Runs //bench:convert_bench one benchmark per process (a benchmark runs
# differently after larger ones in the same process: the heap they leave)
# and prints the medians of 5 repetitions with their ratio to the floor
# (protobuf parse + serialize of the same model). It stops the Bazel server
# first.
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
median() {  # benchmark size -> median real time in ms
  "$binary" --benchmark_filter="^BM_$1/$2/" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true --benchmark_format=csv 2>/dev/null |
    awk -F, '/_median"/ { t = $3; u = $5; gsub(/"/, "", u);
      if (u == "us") t /= 1000; if (u == "ns") t /= 1e6; if (u == "s") t *= 1000;
      printf "%.2f", t }'
}
printf '| nodes | parse + serialize |'
benches=(SerializedTo13 SerializedTo21 ConvertTo13 ConvertTo21)
for b in "${benches[@]}"; do printf ' %s |' "$b"; done
printf '\n| --- | --- |'
for b in "${benches[@]}"; do printf ' --- |'; done
printf '\n'
for n in "${sizes[@]}"; do
  floor=$(median ParseAndSerialize "$n")
  printf '| %s | %s ms |' "$n" "$floor"
  for b in "${benches[@]}"; do
    t=$(median "$b" "$n")
    printf ' %s ms (%s) |' "$t" "$(awk -v t="$t" -v f="$floor" 'BEGIN { printf "%.2fx", t / f }')"
  done
  printf '\n'
done
