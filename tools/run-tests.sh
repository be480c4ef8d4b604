#!/bin/sh
# Installs what is missing, runs every test with Bazel, and prints one line
# "N passed, N failed" counted over the GoogleTest cases of every test target
# (a target that fails to build or crashes counts as one failure; a shell
# test, such as the ORT conformance sample, counts as one case).
set -u
cd "$(dirname "$0")/.."
tools/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }

bazel test //... --keep_going "$@"
bazel_rc=$?

# Targets tagged "manual" (e.g. //tests/conformance:ort_conformance_full) are
# not run by `bazel test //...`, so they are not counted either.
python3 tools/count_tests.py "$(bazel info bazel-testlogs 2>/dev/null)" \
  "$(bazel query 'tests(//...) except attr(tags, "\bmanual\b", tests(//...))' 2>/dev/null)"
count_rc=$?
if [ $bazel_rc -ne 0 ] || [ $count_rc -ne 0 ]; then exit 1; fi
