#!/bin/sh
# Runs the unit tests and the fuzz targets' replays (seed corpus and
# regression inputs) built with AddressSanitizer and UndefinedBehaviorSanitizer
# (gcc), in an output base of their own, and prints "N passed, N failed"
# counted as tools/run-tests.sh counts. A sanitizer report aborts its test,
# which then fails. Tests tagged "corpus" (whole-corpus sweeps, which the
# replays cover under the sanitizers) and "manual" are left out.
set -u
cd "$(dirname "$0")/.."
tools/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }
base=${SANITIZER_OUTPUT_BASE:-$HOME/.cache/bazel-onnx-convert-asan}
filters="--config=asan --config=ubsan --test_tag_filters=-corpus,-manual"

# The targets, listed by the default output base's server: the sanitized
# one is given labels, not //..., so that it never walks the default one's
# convenience symlink (bazel-<checkout folder>) as if it were sources.
targets=$(bazel query 'tests(//...) except attr(tags, "\b(manual|corpus)\b", tests(//...))' 2>/dev/null)
bazel --output_base="$base" test $filters --symlink_prefix=/ --keep_going "$@" -- $targets
bazel_rc=$?

python3 tools/count_tests.py "$(bazel --output_base="$base" info $filters bazel-testlogs 2>/dev/null)" \
  "$targets"
count_rc=$?
bazel --output_base="$base" shutdown
if [ $bazel_rc -ne 0 ] || [ $count_rc -ne 0 ]; then exit 1; fi
