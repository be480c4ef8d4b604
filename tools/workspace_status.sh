#!/bin/sh
# Bazel's --workspace_status_command (.bazelrc): the commit a stamped build
# (`bazel build --stamp //cli:onnx-convert`) reports in --version.
echo "STABLE_GIT_COMMIT $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
