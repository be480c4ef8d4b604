#include "tests/corpus.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "schema/registry.h"

namespace onnxconvert::testing {
namespace fs = std::filesystem;

absl::StatusOr<std::string> WorkspaceRoot() {
  // The test declares //:WORKSPACE as data; its runfiles entry is a symlink
  // to the source tree, wherever the runfiles directory is.
  std::error_code ec;
  for (const char* candidate : {"WORKSPACE", "onnx_convert/WORKSPACE"}) {
    fs::path resolved = fs::canonical(candidate, ec);
    if (!ec) return resolved.parent_path().string();
  }
  if (const char* src = std::getenv("TEST_SRCDIR")) {
    fs::path resolved =
        fs::canonical(fs::path(src) / "onnx_convert" / "WORKSPACE", ec);
    if (!ec) return resolved.parent_path().string();
  }
  return absl::NotFoundError(
      "cannot locate the workspace: add //:WORKSPACE to the test's data");
}

absl::StatusOr<std::string> CorpusRoot() {
  fs::path root;
  if (const char* env = std::getenv("ONNX_BACKEND_TESTS"); env && *env) {
    root = env;
  } else {
    absl::StatusOr<std::string> workspace = WorkspaceRoot();
    if (!workspace.ok()) return workspace.status();
    root = fs::path(*workspace) / ".." / "shared" / "onnx-backend-tests";
  }
  std::error_code ec;
  fs::path canonical = fs::canonical(root, ec);
  if (ec || !fs::is_directory(canonical)) {
    return absl::NotFoundError(absl::StrCat(
        "the ONNX backend test corpus is missing: expected a folder at ",
        root.string(),
        " (../shared/onnx-backend-tests beside the checkout, or set "
        "ONNX_BACKEND_TESTS)"));
  }
  return canonical.string();
}

absl::StatusOr<std::vector<CorpusCase>> ListCorpusCases() {
  absl::StatusOr<std::string> root = CorpusRoot();
  if (!root.ok()) return root.status();
  std::vector<CorpusCase> cases;
  for (const char* suite : {"node", "simple", "pytorch-operator", "real"}) {
    fs::path suite_dir = fs::path(*root) / suite;
    std::error_code ec;
    if (!fs::is_directory(suite_dir, ec)) continue;
    for (const fs::directory_entry& entry :
         fs::directory_iterator(suite_dir, ec)) {
      fs::path model = entry.path() / "model.onnx";
      if (!fs::is_regular_file(model, ec)) continue;
      cases.push_back({absl::StrCat(suite, "/", entry.path().filename().string()),
                       entry.path().string(), model.string()});
    }
  }
  if (cases.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no model.onnx found under ", *root));
  }
  std::sort(cases.begin(), cases.end(),
            [](const CorpusCase& a, const CorpusCase& b) { return a.name < b.name; });
  return cases;
}

absl::Span<const int64_t> ConformanceTargets() {
  static constexpr int64_t kTargets[] = {7, 9, 11, 13, 15, 17, 18, 19, 21, 23, 25, 26, 27};
  return kTargets;
}

std::optional<int64_t> ImportedOpset(const onnx::ModelProto& model, absl::string_view domain) {
  using schema::Registry;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (CanonicalDomain(opset.domain()) == CanonicalDomain(domain)) {
      return opset.version();
    }
  }
  return std::nullopt;
}

}  // namespace onnxconvert::testing
