#!/bin/sh
# Runs checker_parity.py with Debian's python3-onnx (tools/install-deps.sh
# installs it; it is /usr/bin/python3's, not another python3 on PATH) on the
# corpus at ../shared/onnx-backend-tests beside the checkout (or
# $ONNX_BACKEND_TESTS), which is skipped, saying so, when absent.
# Usage: checker_parity_test.sh CHECK_MODELS CHECKER_PARITY_PY
set -u
check_models="$(readlink -f "$1")"
script="$2"
python="${ONNX_PYTHON:-/usr/bin/python3}"
if ! "$python" -c "import onnx" 2>/dev/null; then
  echo "FAIL: $python cannot import onnx: install python3-onnx (tools/install-deps.sh)"
  exit 1
fi
workspace=$(dirname "$(readlink -f WORKSPACE)")
corpus="${ONNX_BACKEND_TESTS:-$workspace/../shared/onnx-backend-tests}"
exec "$python" "$script" "$check_models" "${TEST_TMPDIR:-$(mktemp -d)}" "$corpus"
