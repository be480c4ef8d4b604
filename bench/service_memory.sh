#!/bin/bash
# Memory of onnx-convert-server under concurrent conversions of a synthetic
# chain: RSS before, peak while the calls run (sampled every 20 ms, the
# server alone and with its zygote and workers; and each process's VmHWM),
# and 2 s after the last call.
#   bazel build //service:onnx-convert-server //service:memory_bench
#   bench/service_memory.sh bazel-bin/service/onnx-convert-server \
#       bazel-bin/service/memory_bench "--clients=8 --nodes=10000" --workers=0 --max_concurrent=8
# The acceptance run: 64 clients against a memory budget (calls past it are
# refused with a retry delay; the summary counts them):
#   bench/service_memory.sh bazel-bin/service/onnx-convert-server \
#       bazel-bin/service/memory_bench "--clients=64 --calls=4 --nodes=10000" --workers=0 \
#       --max_concurrent=64 --max_inflight_bytes=16777216 --stream_window_bytes=16384
# (memory_bench declares each model's size in x-model-bytes: the server
# refuses a call past the budget before reading its request; the small
# stream window bounds what gRPC takes in of a refused call's body.)
# With WARMUP set to memory_bench flags (e.g. WARMUP="--clients=1 --nodes=10000"),
# those calls run first: the baseline is then the server's RSS after them
# (the tables a first call loads, e.g. the operator schemas, are in it), and
# the peak (VmHWM) is reset before the measured calls.
set -euo pipefail
server_bin=$1; bench_bin=$2; bench_flags=$3; shift 3
dir=$(mktemp -d)
"$server_bin" --port=0 --work_dir="$dir" --log_requests=false "$@" 2>"$dir/stderr" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 500); do grep -qs "listening on" "$dir/stderr" && break; sleep 0.01; done
port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$dir/stderr")

# The pid and every descendant of it.
tree() {
  local pid=$1
  echo "$pid"
  for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do tree "$child"; done
}
rss_kib() { awk '/^VmRSS:/ {s += $2} END {print s + 0}' $(for p in "$@"; do echo /proc/"$p"/status; done) 2>/dev/null; }
hwm_kib() { awk '/^VmHWM:/ {s += $2} END {print s + 0}' $(for p in "$@"; do echo /proc/"$p"/status; done) 2>/dev/null; }

sleep 0.5
echo "server RSS before: $(rss_kib $server) KiB; with zygote and workers: $(rss_kib $(tree $server)) KiB"
if [[ -n "${WARMUP:-}" ]]; then
  "$bench_bin" --target="127.0.0.1:$port" $WARMUP >/dev/null
  sleep 2
  for p in $(tree $server); do echo 5 >/proc/"$p"/clear_refs; done  # resets VmHWM
  echo "server RSS after the warm-up ($WARMUP): $(rss_kib $server) KiB; with zygote and workers: $(rss_kib $(tree $server)) KiB"
fi
"$bench_bin" --target="127.0.0.1:$port" $bench_flags >"$dir/bench" &
bench=$!
peak_server=0; peak_all=0
while kill -0 $bench 2>/dev/null; do
  s=$(rss_kib $server); a=$(rss_kib $(tree $server))
  (( s > peak_server )) && peak_server=$s
  (( a > peak_all )) && peak_all=$a
  sleep 0.02
done
wait $bench
cat "$dir/bench" | sed -n '1p'
grep '^summary:' "$dir/bench"
echo "peak RSS while converting (sampled): server $peak_server KiB; with zygote and workers $peak_all KiB"
echo "peak RSS (VmHWM): server $(hwm_kib $server) KiB; summed over zygote and workers $(hwm_kib $(tree $server | tail -n +2)) KiB"
sleep 2
echo "RSS 2 s after the last call: server $(rss_kib $server) KiB; with zygote and workers $(rss_kib $(tree $server)) KiB"
