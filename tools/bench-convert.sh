#!/bin/bash
# Runs //bench:convert_bench one benchmark per process (a benchmark runs
# differently after larger ones in the same process: the heap they leave),
# in rounds: each round runs the floor (protobuf parse + serialize of the
# same model), then each way of converting, for at least 2 s each. A load
# that comes and goes on the machine then moves a round's floor and its
# conversions alike, so the ratio of each conversion to its round's floor
# moves far less than either time. Prints, per size and way, the median
# time of the rounds with the median ratio and the range of the ratios.
# It stops the Bazel server first.
#
#   tools/bench-convert.sh [sizes...]     default: 10000 100000 1000000
#   ROUNDS=5 (default)
#   WAYS="SerializedTo13 SerializedTo21 ConvertTo13 ConvertTo21" (default;
#   OptimizeExact is the rewriter's)
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build -c opt //bench:convert_bench >/dev/null 2>&1
# An idle Bazel server still wakes up: on a machine of 2 cores it moved the
# conversion's times by up to 30%. Stopped, it starts again at the next build.
bazel shutdown >/dev/null 2>&1
binary=bazel-bin/bench/convert_bench
rounds=${ROUNDS:-5}
sizes=("$@")
[ $# -eq 0 ] && sizes=(10000 100000 1000000)
read -r -a ways <<< "${WAYS:-SerializedTo13 SerializedTo21 ConvertTo13 ConvertTo21}"

# The mean time per iteration of benchmark $1 at size $2, in ms.
time_of() {
  "$binary" --benchmark_filter="^BM_$1/$2/" --benchmark_format=csv 2>/dev/null |
    awk -F, '/^"BM_/ { t = $3; u = $5; gsub(/"/, "", u);
      if (u == "us") t /= 1000; if (u == "ns") t /= 1e6; if (u == "s") t *= 1000;
      printf "%.3f\n", t }'
}
# "median lowest highest" of the numbers on stdin.
summary() {
  sort -g | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%s %s %s\n", m, v[1], v[NR] }'
}

declare -A cell floor
for n in "${sizes[@]}"; do
  floors=()
  declare -A times=() ratios=()
  for ((r = 0; r < rounds; ++r)) do
    f=$(time_of ParseAndSerialize "$n")
    floors+=("$f")
    for way in "${ways[@]}"; do
      t=$(time_of "$way" "$n")
      times[$way]+="$t "
      ratios[$way]+="$(awk -v t="$t" -v f="$f" 'BEGIN { printf "%.3f", t / f }') "
    done
  done
  read -r fm _ _ < <(printf '%s\n' "${floors[@]}" | summary)
  floor[$n]=$fm
  for way in "${ways[@]}"; do
    read -r tm _ _ < <(printf '%s\n' ${times[$way]} | summary)
    read -r rm rlo rhi < <(printf '%s\n' ${ratios[$way]} | summary)
    cell[$way,$n]=$(printf '%.2f ms (%.2f×; %.2f–%.2f×)' "$tm" "$rm" "$rlo" "$rhi")
  done
done
printf '| nodes | parse + serialize |'
for way in "${ways[@]}"; do printf ' %s |' "$way"; done
printf '\n| --- | --- |'
for way in "${ways[@]}"; do printf ' --- |'; done
printf '\n'
for n in "${sizes[@]}"; do
  printf '| %s | %.2f ms |' "$n" "${floor[$n]}"
  for way in "${ways[@]}"; do printf ' %s |' "${cell[$way,$n]}"; done
  printf '\n'
done
printf '\n%s rounds. Each cell: the median time (the median ratio to the floor of\n' "$rounds"
printf 'the same round; the lowest and the highest).\n'
