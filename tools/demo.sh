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
echo "== print examples/tiny_cnn.onnx (ONNX text syntax)"
$CLI print examples/tiny_cnn.onnx | head -20
