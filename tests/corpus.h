#ifndef ONNX_CONVERT_TESTS_CORPUS_H_
#define ONNX_CONVERT_TESTS_CORPUS_H_

// The ONNX backend test corpus for tests and benchmarks: where it is, its
// cases, and the opsets the conformance tests convert them to.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::testing {

// One case of the ONNX backend test corpus.
struct CorpusCase {
  std::string name;        // e.g. "node/test_abs"
  std::string dir;         // absolute directory of the case
  std::string model_path;  // dir + "/model.onnx"
};

// The root of the ONNX backend test corpus: $ONNX_BACKEND_TESTS if set,
// otherwise ../shared/onnx-backend-tests beside the workspace. Fails with a
// message naming the path when the folder is missing.
absl::StatusOr<std::string> CorpusRoot();

// Every case under CorpusRoot() (node, simple, pytorch-operator, and real:
// the real-model corpus of tools/real-models.js), sorted by name. Fails when the corpus is missing or holds no model.
absl::StatusOr<std::vector<CorpusCase>> ListCorpusCases();

// The target opsets of the conformance plan (issue 4): 7, 9, ..., 27.
absl::Span<const int64_t> ConformanceTargets();

// The opset `model` imports for `domain` ("" or "ai.onnx" for ai.onnx).
std::optional<int64_t> ImportedOpset(const onnx::ModelProto& model, absl::string_view domain);

// The workspace's source directory, resolved through the test's runfiles.
absl::StatusOr<std::string> WorkspaceRoot();

}  // namespace onnxconvert::testing

#endif  // ONNX_CONVERT_TESTS_CORPUS_H_
