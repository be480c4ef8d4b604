#ifndef ONNX_CONVERT_BASE_ENUM_WORDS_H_
#define ONNX_CONVERT_BASE_ENUM_WORDS_H_

// Enumerations named in reports by a table of words, one per enumerator in
// enum order (e.g. ChangeKind's "attribute-to-input"): the word of an
// enumerator and the enumerator of a word.

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"

namespace onnxconvert {

// The word of `value` in `words` (listed in the order of Enum's values).
template <typename Enum, size_t N>
absl::string_view EnumWord(const absl::string_view (&words)[N], Enum value) {
  return words[static_cast<size_t>(value)];
}

// The value whose word in `words` is `word`, or nullopt for a word the
// table does not hold.
template <typename Enum, size_t N>
std::optional<Enum> ParseEnumWord(const absl::string_view (&words)[N], absl::string_view word) {
  for (size_t i = 0; i < N; ++i) {
    if (words[i] == word) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_ENUM_WORDS_H_
