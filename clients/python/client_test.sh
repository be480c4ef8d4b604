#!/bin/sh
# Starts three servers on loopback ports they choose and calls every RPC through the
# Python client, comparing with the CLI's local runs: Convert (unary and,
# past a small unary limit, ConvertStream) byte-identical to `convert`;
# ConvertStream with uploaded external data identical to `convert
# --external-data-threshold`; Rewrite identical to `optimize`; Plan; Check;
# Inspect as `inspect` prints it; health; metrics; a malformed model refused
# with INVALID_ARGUMENT and an unconvertible one with FAILED_PRECONDITION
# and its step and node; round_robin spreading calls over an ipv4: target of
# both servers and a dead address; RESOURCE_EXHAUSTED retried as the retry
# policy says; the registry hook's stored files.
set -eu
server="$1"; cli="$2"; model="$3"
here="$(cd "$(dirname "$0")" && pwd)"
client_dir="$(dirname "$(readlink -f "$here/example_convert.py")")"
work="${TEST_TMPDIR:-$(mktemp -d)}"
dead_port() {  # a free loopback port from below the kernel's ephemeral range, which
  # nothing else in the run binds (servers here listen on --port 0)
  /usr/bin/python3 -c '
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
while True:
    port = random.randrange(10000, low)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port)); print(port); break
    except OSError:
        pass
    finally:
        s.close()'
}
start_server() {  # LOG [FLAG...]: starts a server on a port of its choosing (--port 0),
  # waits until it says where it listens; sets $started_port and $started_pid
  log_="$1"; shift
  "$server" --port 0 --workers 1 "$@" 2>"$log_" &
  started_pid=$!
  i=0
  until started_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log_") &&
        [ -n "$started_port" ]; do
    i=$((i + 1)); [ $i -lt 100 ] || { echo "server did not start"; cat "$log_"; exit 1; }
    sleep 0.1
  done
}
start_server "$work/server.log"; port=$started_port; pid=$started_pid
start_server "$work/server2.log"; port2=$started_port; pid2=$started_pid
# One model call at a time: a stalled upload makes the next call RESOURCE_EXHAUSTED.
start_server "$work/server3.log" --max_concurrent 1; port3=$started_port; pid3=$started_pid
trap 'kill $pid $pid2 $pid3 2>/dev/null || true' EXIT

/usr/bin/python3 "$client_dir/example_convert.py" --server "127.0.0.1:$port" \
  "$model" "$work/remote.onnx" --to 17 --report "$work/report.json"
"$cli" convert "$model" -o "$work/local.onnx" --to 17 >/dev/null
cmp "$work/remote.onnx" "$work/local.onnx" || { echo "remote and local outputs differ"; exit 1; }
grep -q '"target_opset": 17' "$work/report.json" || { echo "report lacks the target"; exit 1; }

# The CLI's local runs the client's answers must equal.
"$cli" optimize "$work/local.onnx" -o "$work/optimized.onnx" --profile exact >/dev/null
"$cli" inspect "$model" >"$work/inspect.txt"
mkdir -p "$work/ext" "$work/ext_local"
"$cli" convert "$model" -o "$work/ext/tiny.onnx" --to 11 --external-data-threshold 64 >/dev/null
"$cli" convert "$work/ext/tiny.onnx" -o "$work/ext_local/tiny.onnx" --to 17 \
  --external-data-threshold 64 >/dev/null
cat >"$work/gelu.txt" <<'EOF'
<
  ir_version: 10,
  opset_import: ["" : 20]
>
g (float[N] x) => (float[N] y) {
  y = Gelu(x)
}
EOF
"$cli" parse "$work/gelu.txt" -o "$work/gelu.onnx"

CLI="$cli" WORK="$work" MODEL="$model" CLIENT_DIR="$client_dir" PORT="$port" PORT2="$port2" PORT3="$port3" \
  DEAD="$(dead_port)" /usr/bin/python3 - <<'PY'
import filecmp, json, os, subprocess, sys
sys.path.insert(0, os.environ["CLIENT_DIR"])
import grpc
import onnx_convert_client as c
import example_registry_hook as hook

work, port, port2 = os.environ["WORK"], os.environ["PORT"], os.environ["PORT2"]
def read(path):
    with open(path, "rb") as f:
        return f.read()
model, local = read(os.environ["MODEL"]), read(f"{work}/local.onnx")
client = c.Client(f"127.0.0.1:{port}")

assert client.health() == "SERVING" and client.health("") == "SERVING"
caps = client.capabilities()
assert caps[""][1] == 27, caps
try:
    client.convert(b"\x08\x07\x12\xff", 17, name="broken.onnx")
    raise SystemExit("a malformed model was accepted")
except c.ConversionError as error:
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT, error
try:
    client.convert(read(f"{work}/gelu.onnx"), 17, expand_functions=False, name="gelu.onnx")
    raise SystemExit("Gelu-20 was converted to 17 without expansion")
except c.ConversionError as error:
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION, error
    assert error.detail.op_version == "Gelu-20", error.detail
    assert (error.detail.from_opset, error.detail.to_opset) == (20, 19), error.detail

# Plan: the report of a dry run, no model.
plan = client.plan(model, 17)
assert plan.model == b"" and plan.report.target_opset == 17, plan.report
assert [s.to_opset for s in plan.report.steps] == list(range(12, 18)), plan.report.steps

# Check and Inspect as the CLI prints them.
assert client.check(model) == (True, [])
report = client.check_report(local)
assert report.valid and report.nodes_checked == 6, report
inspected = client.inspect(model, name=os.environ["MODEL"])
assert inspected.summary.main_graph_nodes == 6, inspected.summary
with open(f"{work}/inspect.txt") as f:
    assert inspected.text == f.read(), inspected.text

# Rewrite: the same bytes as `optimize --profile exact`.
rewritten = client.rewrite(local, profile="exact")
assert rewritten.model == read(f"{work}/optimized.onnx"), "Rewrite differs from optimize"
assert rewritten.report.nodes_before == 6, rewritten.report

# Past the unary limit, Convert and Rewrite stream, in small chunks.
small = c.Client(f"127.0.0.1:{port}", unary_limit_bytes=100, chunk_bytes=97)
converted, report_json = small.convert(model, 17)
assert converted == local and json.loads(report_json)["target_opset"] == 17
assert small.rewrite(local, profile="exact").model == rewritten.model

# A model with its weights inside (the tiny CNN and an unused 16 MiB
# initializer: past the windows' 16 MiB): the weights the conversion passes
# through as they came are written from the client's own copy of the model
# (the result lists them), not downloaded; to a folder or to memory, from a
# file or from bytes, the bytes the CLI writes locally.
def varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)
def read_varint(data, at):
    n = shift = 0
    while True:
        n |= (data[at] & 0x7F) << shift
        shift, at = shift + 7, at + 1
        if not data[at - 1] & 0x80:
            return n, at
def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload
big = (varint(1 << 3) + varint(4 << 20) + varint(2 << 3) + varint(1) + field(8, b"big")
       + field(9, bytes([1]) * (16 << 20)))
weights, at = bytearray(), 0
while at < len(model):
    key, after_key = read_varint(model, at)
    end = {0: lambda: read_varint(model, after_key)[1], 1: lambda: after_key + 8,
           5: lambda: after_key + 4, 2: lambda: sum(read_varint(model, after_key))}[key & 7]()
    if key == (7 << 3 | 2):  # the graph: its initializers get "big"
        length, start = read_varint(model, after_key)
        weights += field(7, model[start:end] + field(5, big))
    else:
        weights += model[at:end]
    at = end
weights = bytes(weights)
with open(f"{work}/weights.onnx", "wb") as f:
    f.write(weights)
subprocess.run([os.environ["CLI"], "convert", f"{work}/weights.onnx", "-o",
                f"{work}/weights_local.onnx", "--to", "17"], check=True, stdout=subprocess.DEVNULL)
expected = read(f"{work}/weights_local.onnx")
for source in (f"{work}/weights.onnx", weights):
    to_folder = client.convert_stream(source, 17, name="weights.onnx",
                                      out_dir=f"{work}/weights_remote")
    ranges = to_folder.result.files[0].from_upload
    assert sum(r.length for r in ranges) >= 16 << 20, ranges
    assert read(f"{work}/weights_remote/weights.onnx") == expected, "folder output differs"
    assert client.convert_stream(source, 17, name="weights.onnx").files[""] == expected

# ConvertStream with uploaded external data, written to a folder: the
# files `convert --external-data-threshold` writes.
streamed = small.convert_stream(f"{work}/ext/tiny.onnx", 17, name="in/tiny.onnx",
                                external_files={"tiny.onnx.data": f"{work}/ext/tiny.onnx.data"},
                                external_data_threshold=64, out_dir=f"{work}/ext_remote")
assert sorted(streamed.files) == ["", "tiny.onnx.data"], streamed.files
assert [f.name for f in streamed.result.files] == ["", "tiny.onnx.data"]
for name in ("tiny.onnx", "tiny.onnx.data"):
    assert filecmp.cmp(f"{work}/ext_remote/{name}", f"{work}/ext_local/{name}",
                       shallow=False), name
# The output's data file is the upload, unchanged: the server says so and
# sends no chunks of it (the client copies its own file); a client that
# does not ask (keep_identical_data=False, as all before it) downloads it.
assert [f.same_as_upload for f in streamed.result.files] == ["", "tiny.onnx.data"]
assert sorted(os.listdir(f"{work}/ext_remote")) == ["tiny.onnx", "tiny.onnx.data"]
# Every tensor of a byte or more external: a data file unlike the upload,
# downloaded; the copy of the upload made ahead of the answer is removed.
regathered = small.convert_stream(f"{work}/ext/tiny.onnx", 17, name="in/tiny.onnx",
                                  external_files={"tiny.onnx.data": f"{work}/ext/tiny.onnx.data"},
                                  external_data_threshold=1, out_dir=f"{work}/ext_regathered")
assert [f.same_as_upload for f in regathered.result.files] == ["", ""], regathered.result.files
assert sorted(os.listdir(f"{work}/ext_regathered")) == ["tiny.onnx", "tiny.onnx.data"]
assert os.path.getsize(f"{work}/ext_regathered/tiny.onnx.data") == regathered.result.files[1].size
# Data kept on the client (as the CLI with --server): the model alone
# goes up and comes back, its data file is copied beside it.
local_data = small.convert_stream(f"{work}/ext/tiny.onnx", 17, name="in/tiny.onnx",
                                  external_files={"tiny.onnx.data": f"{work}/ext/tiny.onnx.data"},
                                  keep_external_data=True, out_dir=f"{work}/ext_kept")
assert sorted(os.listdir(f"{work}/ext_kept")) == ["tiny.onnx", "tiny.onnx.data"]
assert filecmp.cmp(f"{work}/ext_kept/tiny.onnx.data", f"{work}/ext/tiny.onnx.data",
                   shallow=False)
assert [f.name for f in local_data.result.files] == [""], local_data.result.files
model_only = small.convert_stream(f"{work}/ext/tiny.onnx", 17, name="in/tiny.onnx",
                                  keep_external_data=True)
assert read(f"{work}/ext_kept/tiny.onnx") == model_only.files[""]
echoed = c.Client(f"127.0.0.1:{port}", chunk_bytes=97, keep_identical_data=False)
downloaded = echoed.convert_stream(f"{work}/ext/tiny.onnx", 17, name="in/tiny.onnx",
                                   external_files={"tiny.onnx.data":
                                                   f"{work}/ext/tiny.onnx.data"},
                                   external_data_threshold=64, out_dir=f"{work}/ext_echoed")
assert [f.same_as_upload for f in downloaded.result.files] == ["", ""]
for name in ("tiny.onnx", "tiny.onnx.data"):
    assert filecmp.cmp(f"{work}/ext_echoed/{name}", f"{work}/ext_local/{name}",
                       shallow=False), name
kept_in_memory = small.convert_stream(f"{work}/ext/tiny.onnx", 17, name="in/tiny.onnx",
                                      external_files={"tiny.onnx.data":
                                                      read(f"{work}/ext/tiny.onnx.data")},
                                      external_data_threshold=64)
assert kept_in_memory.files == {"": read(f"{work}/ext_local/tiny.onnx"),
                                "tiny.onnx.data": read(f"{work}/ext_local/tiny.onnx.data")}
in_memory = small.convert_stream(model, 17, request_id="stream-1")
assert in_memory.files == {"": local}, in_memory.files.keys()

# Every option set off still talks to the server.
plain = c.Client(f"127.0.0.1:{port}", balancing=None, retry=None, health_check=False)
assert plain.convert(model, 17)[0] == local

# round_robin over an ipv4: target of both servers and a dead address:
# every call succeeds, both servers take a share.
def converts(p):
    with c.Client(f"127.0.0.1:{p}") as direct:
        return sum(m.requests for m in direct.metrics().methods if m.method == "Convert")
before = [converts(port), converts(port2)]
both = c.Client(f"ipv4:127.0.0.1:{os.environ['DEAD']},127.0.0.1:{port},127.0.0.1:{port2}")
for i in range(20):
    assert both.convert(model, 17, request_id=f"rr-{i}")[0] == local
served = [converts(port) - before[0], converts(port2) - before[1]]
assert sum(served) == 20 and min(served) >= 5, served

# Retries: while a stalled ConvertStream upload holds the one slot of the
# third server, a Convert is RESOURCE_EXHAUSTED; gRPC makes max_attempts
# attempts of it (the server counts each), or one without a retry policy.
import threading, time
port3 = os.environ["PORT3"]
release = threading.Event()
def stalled_upload():
    yield c.pb.ConvertStreamRequest(header=c.pb.StreamHeader(
        model_name="held.onnx", options=c.pb.ConvertOptions(target_opset=17),
        external_data=c.pb.EXTERNAL_DATA_KEPT_BY_CLIENT))
    release.wait()
    yield c.pb.ConvertStreamRequest(chunk=c.pb.Chunk(data=model))
once = c.Client(f"127.0.0.1:{port3}", retry=None)
held = once.stub.ConvertStream(stalled_upload())
held_answers = []
holder = threading.Thread(target=lambda: held_answers.extend(held), daemon=True)
holder.start()
try:
    def exhausted_count():
        methods = {m.method: m for m in once.metrics().methods}
        statuses = methods["Convert"].statuses if "Convert" in methods else []
        return sum(s.count for s in statuses if s.code == "RESOURCE_EXHAUSTED")
    # Until the server has read the header and holds the slot (a Convert
    # sent earlier could take the slot itself: it is admitted on arrival).
    for _ in range(200):
        if once.metrics().running_workers == 1:
            break
        time.sleep(0.05)
    for _ in range(200):
        try:
            once.convert(model, 17)
        except c.ConversionError as error:
            if error.code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                break
        time.sleep(0.05)
    else:
        raise SystemExit("calls kept running beside the held upload (--max_concurrent 1)")
    # gRPC retries only answers without headers (Trailers-Only): a server
    # that sends its initial metadata (x-request-id) before an error commits
    # the call to its first attempt. Main's server does so (issue 21: the
    # request id must move to the trailers for retries to work).
    try:
        once.stub.Convert(c.pb.ConvertRequest(model=model,
                                              options=c.pb.ConvertOptions(target_opset=17)))
        raise SystemExit("a call ran beside the held upload")
    except grpc.RpcError as error:
        headers_first = bool(error.initial_metadata())
    if headers_first:
        print("warning: the server sends headers before RESOURCE_EXHAUSTED: gRPC cannot "
              "retry it (x-request-id belongs in the trailers)")
    for client_retry, attempts in ((None, 1),
                                   (c.RetryPolicy(max_attempts=3, initial_backoff_s=0.01),
                                    1 if headers_first else 3)):
        before = exhausted_count()
        retrying = c.Client(f"127.0.0.1:{port3}", retry=client_retry)
        try:
            retrying.convert(model, 17)
            raise SystemExit("a call ran beside the held upload")
        except c.ConversionError as error:
            assert error.code == grpc.StatusCode.RESOURCE_EXHAUSTED, error
        assert exhausted_count() - before == attempts, (client_retry, exhausted_count() - before)
finally:
    release.set()
holder.join()
assert held_answers[0].result.report.target_opset == 17
assert b"".join(a.chunk.data for a in held_answers[1:]) == local
assert once.convert(model, 17)[0] == local

# The registry hook stores the converted model and its report, or the error.
store = hook.DirectoryStore(f"{work}/registry")
summary = hook.on_model_uploaded(client, "cnn", model, store, 17)
assert summary["converted"] and summary["steps"] == 6, summary
assert read(f"{work}/registry/cnn/opset17/model.onnx") == local
assert json.loads(read(f"{work}/registry/cnn/opset17/report.json"))["target_opset"] == 17
summary = hook.on_model_uploaded(client, "gelu", read(f"{work}/gelu.onnx"), store, 17,
                                 expand_functions=False)
assert summary["converted"] is False and summary["code"] == "FAILED_PRECONDITION", summary
with open(f"{work}/registry/gelu/opset17/error.json") as f:
    assert json.load(f)["op"] == "Gelu-20"
print("python client: ok")
PY
