#!/bin/bash
# Streaming throughput of the service: a model with MIB MiB of external data
# (bench/make_external_model) converted to opset 13
#   1. locally by the CLI (the floor: read, convert, write the same bytes),
#   2. by the CLI with --server (it keeps external data on the client: the
#      model goes to the server, the data file is copied locally),
#   3. through ConvertStream by the Python client's convert_stream, the data
#      file uploaded and the output (model and data file) written to a folder:
#      "all back" downloads the output data file (keep_identical_data=False,
#      what clients before it did), "data kept" copies it from the local
#      file when the server says it is the upload, unchanged (the default),
#      "data local" uploads the model only (keep_external_data: the CLI's
#      --server way) and copies the data file beside the output,
# with each run's MB/s (model and data bytes over wall time), the client's
# peak RSS and the server's (VmHWM, the process that receives and sends).
# DIR holds the model, the outputs and the server's --work_dir: /tmp puts
# them on disk, /dev/shm in memory (the transport alone).
#   bazel build -c opt //service:onnx-convert-server //cli:onnx-convert //bench:make_external_model
#   bench/stream_bench.sh bazel-bin/service/onnx-convert-server bazel-bin/cli/onnx-convert \
#       bazel-bin/bench/make_external_model [DIR=/tmp] [MIB=1024] [CHUNK_BYTES=1048576]
set -euo pipefail
server_bin=$1; cli_bin=$2; make_model=$3; parent=${4:-/tmp}; mib=${5:-1024}
chunk=${6:-1048576}
client_dir="$(cd "$(dirname "$0")/../clients/python" && pwd)"
dir=$(mktemp -d "$parent/stream-bench.XXXXXX")
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$make_model" "$dir/model.onnx" "$mib"
bytes=$(( $(stat -c %s "$dir/model.onnx") + $(stat -c %s "$dir/model.onnx.data") ))
mkdir -p "$dir/work" "$dir/local" "$dir/remote" "$dir/stream"
echo "model: $bytes bytes (model file and external data) in $parent, chunks of $chunk bytes"
# Prints LABEL: seconds, MB/s, client peak RSS for `/usr/bin/time` output in FILE.
report() {
  read -r secs kib user sys <"$2"
  awk -v l="$1" -v s="$secs" -v k="$kib" -v b="$bytes" -v c="$(echo "$user + $sys" | bc)" \
    'BEGIN {printf "%-26s %6.2f s %6.0f MB/s  client: peak RSS %4.0f MB, CPU %5.2f s\n", l, s, b / s / 1e6, k / 1024, c}'
}
# Converts MODEL to OUT locally (-> 13), reported as LABEL.
local_run() {
  sync
  /usr/bin/time -f "%e %M %U %S" -o "$dir/t" "$cli_bin" convert "$2" -o "$3" --to 13 >/dev/null
  report "$1" "$dir/t"
}
# Starts a server with its work folder in DIR; sets $server and $port.
start_server() {
  "$server_bin" --port=0 --work_dir="$1" --log_requests=false 2>"$1.stderr" &
  server=$!
  for _ in $(seq 500); do grep -qs "listening on" "$1.stderr" && break; sleep 0.01; done
  port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$1.stderr")
}
local_run "local CLI (floor)" "$dir/model.onnx" "$dir/local/model.onnx"
start_server "$dir/work"
hwm() { awk '/^VmHWM:/ {printf "%.0f", $2 / 1024}' /proc/$server/status; }
cpu() { awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / t}' /proc/$server/stat; }

sync
before=$(cpu)
/usr/bin/time -f "%e %M %U %S" -o "$dir/t" "$cli_bin" --server "127.0.0.1:$port" convert \
  "$dir/model.onnx" -o "$dir/remote/model.onnx" --to 13 >/dev/null
report "CLI --server" "$dir/t"
echo "  server: peak RSS $(hwm) MB, CPU $(echo "$(cpu) - $before" | bc) s"
cmp -s "$dir/local/model.onnx.data" "$dir/remote/model.onnx.data" || echo "  DATA DIFFERS"

# Runs the Python client's convert_stream into $dir/stream as LABEL; MODE
# 0: the data file uploaded and the output's downloaded, as clients did
# before keep_identical_data; 1: uploaded, the output's (identical to the
# upload) copied from the local file; local: not uploaded
# (keep_external_data, as the CLI with --server), copied beside the output.
python_stream() {
  rm -rf "$dir/stream" && mkdir -p "$dir/stream"
  sync
  before=$(cpu)
  /usr/bin/time -f "%e %M %U %S" -o "$dir/t" /usr/bin/python3 - "$client_dir" "$port" "$dir" \
      "$chunk" "$2" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import onnx_convert_client
port, dir, chunk, mode = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
with onnx_convert_client.Client(f"127.0.0.1:{port}", timeout=600, chunk_bytes=chunk,
                                keep_identical_data=mode == "1") as client:
    client.convert_stream(f"{dir}/model.onnx", 13, name="model.onnx",
                          external_files={"model.onnx.data": f"{dir}/model.onnx.data"},
                          keep_external_data=mode == "local", out_dir=f"{dir}/stream")
PY
  report "$1" "$dir/t"
  echo "  server: peak RSS $(hwm) MB, CPU $(echo "$(cpu) - $before" | bc) s"
  cmp -s "$dir/local/model.onnx.data" "$dir/stream/model.onnx.data" || echo "  DATA DIFFERS"
  cmp -s "$dir/local/model.onnx" "$dir/stream/model.onnx" || echo "  MODEL DIFFERS"
}
python_stream "Python stream, all back" 0
python_stream "Python stream, data kept" 1
python_stream "Python stream, data local" local

# A model with its weights inside (INSIDE_MIB MiB, default 256) through
# --server, on a fresh server: the CLI streams it from its file and the
# converted model back to the output, and neither the server nor its worker
# holds it whole (the worker's peak is the largest of its worker processes').
inside_mib=${INSIDE_MIB:-256}
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true
mkdir -p "$dir/inside/local" "$dir/inside/remote" "$dir/inside/work"
"$make_model" "$dir/inside/model.onnx" "$inside_mib" inside
bytes=$(stat -c %s "$dir/inside/model.onnx")
echo "model with its weights inside: $bytes bytes"
local_run "local CLI, weights inside" "$dir/inside/model.onnx" "$dir/inside/local/model.onnx"
start_server "$dir/inside/work"
sync
/usr/bin/time -f "%e %M %U %S" -o "$dir/t" "$cli_bin" --server "127.0.0.1:$port" convert \
  "$dir/inside/model.onnx" -o "$dir/inside/remote/model.onnx" --to 13 >/dev/null
report "CLI --server, weights inside" "$dir/t"
workers=$(for zygote in $(pgrep -P "$server"); do pgrep -P "$zygote"; done)
worker_peak=$(for pid in $workers; do awk '/^VmHWM:/ {print $2}' "/proc/$pid/status"; done |
              sort -n | tail -n 1)
echo "  server: peak RSS $(hwm) MB; worker: peak RSS $(( ${worker_peak:-0} / 1024 )) MB"
cmp -s "$dir/inside/local/model.onnx" "$dir/inside/remote/model.onnx" || echo "  MODEL DIFFERS"
