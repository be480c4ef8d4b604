#!/bin/sh
# Starts the server on a free loopback port, converts the example model
# through it with the Python client, and checks the result: the converted
# model is byte-identical to the CLI's local conversion, a malformed model
# is refused with INVALID_ARGUMENT, and the capabilities list ai.onnx.
set -eu
server="$1"; cli="$2"; model="$3"; protos="$(dirname "$4")"
here="$(cd "$(dirname "$0")" && pwd)"
client_dir="$(dirname "$(readlink -f "$here/example_convert.py")")"
work="${TEST_TMPDIR:-$(mktemp -d)}"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$server" --port "$port" 2>"$work/server.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
i=0
until /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; do
  i=$((i + 1)); [ $i -lt 100 ] || { echo "server did not start"; cat "$work/server.log"; exit 1; }
  sleep 0.1
done

/usr/bin/python3 "$client_dir/example_convert.py" --server "127.0.0.1:$port" \
  "$model" "$work/remote.onnx" --to 17 --report "$work/report.json"
"$cli" convert "$model" -o "$work/local.onnx" --to 17 >/dev/null
cmp "$work/remote.onnx" "$work/local.onnx" || { echo "remote and local outputs differ"; exit 1; }
grep -q '"target_opset": 17' "$work/report.json" || { echo "report lacks the target"; exit 1; }

PROTOS="$protos" CLIENT_DIR="$client_dir" PORT="$port" /usr/bin/python3 - <<'PY'
import os, sys
sys.path.insert(0, os.environ["CLIENT_DIR"])
import grpc
import onnx_convert_client as c
client = c.Client(f"127.0.0.1:{os.environ['PORT']}", proto_dir=os.environ["PROTOS"])
caps = client.capabilities()
assert caps[""][1] == 27, caps
try:
    client.convert(b"\x08\x07\x12\xff", 17, name="broken.onnx")
    raise SystemExit("a malformed model was accepted")
except c.ConversionError as error:
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT, error
print("python client: ok")
PY
