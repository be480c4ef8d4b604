#include "base/indent.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onnxconvert {

std::string Indented(absl::string_view text, absl::string_view indent) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&out, indent, line, "\n");
  }
  return out;
}

}  // namespace onnxconvert
