#include "tests/golden.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/corpus.h"

namespace onnxconvert::testing {
namespace fs = std::filesystem;
namespace {

// The file `path` under the runfiles (the golden as the test sees it).
std::string ReadRunfile(const fs::path& path, bool& found) {
  std::ifstream in(path, std::ios::binary);
  found = static_cast<bool>(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The source tree the golden is written to: BUILD_WORKSPACE_DIRECTORY under
// `bazel run`, else the workspace the runfiles point at.
absl::StatusOr<fs::path> SourceTree() {
  if (const char* dir = std::getenv("BUILD_WORKSPACE_DIRECTORY"); dir && *dir) return fs::path(dir);
  absl::StatusOr<std::string> root = WorkspaceRoot();
  if (!root.ok()) return root.status();
  return fs::path(*root);
}

}  // namespace

std::string LineDiff(absl::string_view expected, absl::string_view actual) {
  std::vector<absl::string_view> a = absl::StrSplit(expected, '\n');
  std::vector<absl::string_view> b = absl::StrSplit(actual, '\n');
  // Longest common subsequence of lines, from the ends.
  std::vector<std::vector<int>> common(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1
                                  : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  std::string diff;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ++i, ++j;
    } else if (i < a.size() && (j == b.size() || common[i + 1][j] >= common[i][j + 1])) {
      absl::StrAppend(&diff, "- ", a[i++], "\n");
    } else {
      absl::StrAppend(&diff, "+ ", b[j++], "\n");
    }
  }
  return diff;
}

absl::Status CompareWithGolden(absl::string_view path, absl::string_view actual,
                               absl::string_view regenerate) {
  if (const char* update = std::getenv("UPDATE_GOLDEN"); update && std::string(update) == "1") {
    absl::StatusOr<fs::path> tree = SourceTree();
    if (!tree.ok()) return tree.status();
    fs::path target = *tree / std::string(path);
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out << actual;
    if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write ", target.string()));
    return absl::OkStatus();
  }
  bool found = false;
  std::string golden = ReadRunfile(fs::path(std::string(path)), found);
  if (!found) {
    return absl::NotFoundError(absl::StrCat("the golden ", path, " is missing (list it in the ",
                                            "test's data); to write it: ", regenerate));
  }
  std::string diff = LineDiff(golden, actual);
  if (diff.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the figures differ from the golden ", path, " (- golden, + now):\n", diff,
      "If the change is intended, rewrite the golden and commit it with the change:\n  ",
      regenerate));
}

}  // namespace onnxconvert::testing
