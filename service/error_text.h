#ifndef ONNX_CONVERT_SERVICE_ERROR_TEXT_H_
#define ONNX_CONVERT_SERVICE_ERROR_TEXT_H_

// Client-supplied text (model and file names) quoted in error messages,
// kept short: a message travels back in the call's trailing metadata,
// which gRPC clients cap (8 KiB by default), so a name of thousands of
// characters must not be quoted whole.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace onnxconvert::service {

// Most bytes of a name quoted in an error message.
inline constexpr size_t kMaxQuotedNameBytes = 200;

// `text` when it is at most `max_bytes` long; otherwise its first bytes, cut
// at a UTF-8 character boundary, then "…" and the full length, e.g.
// "nnnn… (5000 bytes)".
std::string Abbreviate(absl::string_view text, size_t max_bytes = kMaxQuotedNameBytes);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_ERROR_TEXT_H_
