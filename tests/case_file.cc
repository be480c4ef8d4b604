#include "tests/case_file.h"

#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace onnxconvert::testing {

std::string CasePart::Text() const {
  std::string text;
  for (const std::string& line : lines) absl::StrAppend(&text, line, "\n");
  return text;
}

const CasePart* FileCase::Find(absl::string_view key) const {
  for (const CasePart& part : parts) {
    if (part.key == key) return &part;
  }
  return nullptr;
}

absl::StatusOr<std::vector<FileCase>> ReadCaseFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::vector<FileCase> cases;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": ", what));
    };
    if (line.empty() || line[0] == '#') continue;
    if (absl::StartsWith(line, "  ")) {
      if (cases.empty() || cases.back().parts.empty()) {
        return error("an indented line belongs to no part");
      }
      cases.back().parts.back().lines.push_back(line.substr(2));
    } else if (absl::StartsWith(line, "case ")) {
      cases.push_back({line.substr(5), number, {}});
    } else if (cases.empty()) {
      return error("expected 'case' first");
    } else if (size_t colon = line.find(": "); colon != std::string::npos) {
      cases.back().parts.push_back({line.substr(0, colon), line.substr(colon + 2), {}, number});
    } else if (absl::EndsWith(line, ":")) {
      cases.back().parts.push_back({line.substr(0, line.size() - 1), "", {}, number});
    } else {
      return error(absl::StrCat("expected 'KEY: VALUE' or 'KEY:', not '", line, "'"));
    }
  }
  return cases;
}

}  // namespace onnxconvert::testing
