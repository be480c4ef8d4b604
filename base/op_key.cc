#include "base/op_key.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace onnxconvert {
namespace {

// Copies `text` to `to`; nothing when it is empty (the empty domain may view
// no storage at all, a null data(), which memcpy must not be given).
void CopyChars(absl::string_view text, char* to) {
  if (!text.empty()) std::memcpy(to, text.data(), text.size());
}

}  // namespace

std::string OpKey(absl::string_view domain, absl::string_view op) {
  return absl::StrCat(domain, kKeySeparator, op);
}

absl::string_view OpKeyIn(absl::string_view domain, absl::string_view op, absl::Span<char> buffer,
                          std::string& spill) {
  size_t size = domain.size() + kKeySeparator.size() + op.size();
  if (size > buffer.size()) {
    spill = OpKey(domain, op);
    return spill;
  }
  CopyChars(domain, buffer.data());
  CopyChars(kKeySeparator, buffer.data() + domain.size());
  CopyChars(op, buffer.data() + domain.size() + kKeySeparator.size());
  return absl::string_view(buffer.data(), size);
}

}  // namespace onnxconvert
