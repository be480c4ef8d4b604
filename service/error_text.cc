#include "service/error_text.h"

#include "absl/strings/str_cat.h"

namespace onnxconvert::service {
namespace {

// True for the second and later bytes of a UTF-8 character.
bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string Abbreviate(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t keep = max_bytes;
  while (keep > 0 && IsContinuationByte(text[keep])) --keep;
  return absl::StrCat(text.substr(0, keep), "\xE2\x80\xA6 (", text.size(), " bytes)");
}

}  // namespace onnxconvert::service
