#!/bin/sh
# Writes the Python stubs of the service's protos (messages and gRPC
# stubs) with Debian's protoc and grpc_python_plugin:
#
#   clients/python/generate_stubs.sh [OUT_DIR [PROTO_DIR]]
#
# By default into clients/python, where they are checked in (run this after
# changing proto/; stubs_test fails while they are stale).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here}"
protos="${2:-$here/../../proto}"
cd "$protos"
protoc --proto_path=. --python_out="$out" --grpc_python_out="$out" \
  --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin \
  onnx_convert_service.proto grpc_health.proto rpc_status.proto
