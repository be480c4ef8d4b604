#ifndef ONNX_CONVERT_BASE_OP_KEY_H_
#define ONNX_CONVERT_BASE_OP_KEY_H_

// The composite keys that index operators and functions by domain and name
// in hash maps: the parts joined by a byte no domain or name contains.

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace onnxconvert {

// The domain's canonical name: "" for "ai.onnx" (the two name the same
// domain), otherwise `domain` itself.
inline absl::string_view CanonicalDomain(absl::string_view domain) {
  return domain == "ai.onnx" ? absl::string_view() : domain;
}

// What separates the parts of a composite key (the ASCII unit separator).
inline constexpr absl::string_view kKeySeparator = "\x1f";

// The key of operator (or function) `op` of `domain`.
std::string OpKey(absl::string_view domain, absl::string_view op);

// OpKey(domain, op) without allocating when it fits in `buffer`; otherwise
// built in `spill`. The view is of `buffer` or `spill`.
absl::string_view OpKeyIn(absl::string_view domain, absl::string_view op, absl::Span<char> buffer,
                          std::string& spill);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_OP_KEY_H_
