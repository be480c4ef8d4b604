#!/bin/sh
# Installs what is missing, builds onnx-convert, and runs it on the example
# model that ships in examples/.
set -eu
cd "$(dirname "$0")/.."
tools/install-deps.sh
bazel build //cli:onnx-convert
CLI=bazel-bin/cli/onnx-convert
echo "== inspect examples/tiny_cnn.onnx"
$CLI inspect examples/tiny_cnn.onnx
echo "== check examples/tiny_cnn.onnx"
$CLI check examples/tiny_cnn.onnx
echo "== convert examples/tiny_cnn.onnx from opset 11 to 17"
OUT=$(mktemp -d)
$CLI convert examples/tiny_cnn.onnx -o "$OUT/tiny_cnn_17.onnx" --to 17 --report "$OUT/report.json"
$CLI inspect "$OUT/tiny_cnn_17.onnx" | head -4
echo "report: $OUT/report.json"
