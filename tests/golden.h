#ifndef ONNX_CONVERT_TESTS_GOLDEN_H_
#define ONNX_CONVERT_TESTS_GOLDEN_H_

// Golden tables: a test's figures as text, checked in under tests/golden/
// and compared line by line, so that a change in a figure shows as a diff
// in the test's failure and in review.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace onnxconvert::testing {

// Compares `actual` with the checked-in golden file `path` (relative to the
// workspace, e.g. "tests/golden/corpus_conversion.txt", which the test must
// list in its data). On a difference, fails with the lines that differ
// ("-" golden, "+" actual) and `regenerate`, the command that rewrites the
// golden. With UPDATE_GOLDEN=1 in the environment, writes `actual` to the
// source tree's file instead (under `bazel run`, BUILD_WORKSPACE_DIRECTORY
// names the tree) and succeeds.
absl::Status CompareWithGolden(absl::string_view path, absl::string_view actual,
                               absl::string_view regenerate);

// The differing lines of `expected` and `actual` as a unified-style list:
// common lines omitted, "-" for lines only in `expected`, "+" for lines only
// in `actual`, in order ("" when they are equal).
std::string LineDiff(absl::string_view expected, absl::string_view actual);

}  // namespace onnxconvert::testing

#endif  // ONNX_CONVERT_TESTS_GOLDEN_H_
