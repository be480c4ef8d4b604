#ifndef ONNX_CONVERT_FUZZ_FUZZ_UTIL_H_
#define ONNX_CONVERT_FUZZ_FUZZ_UTIL_H_

// Helpers shared by the fuzz targets.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/strings/string_view.h"

namespace onnxconvert::fuzz {

// The fuzzer's bytes as a string view.
inline std::string_view Bytes(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// The same, as abseil's string view (not std's in Debian's abseil).
inline absl::string_view AbslBytes(const uint8_t* data, size_t size) {
  return absl::string_view(reinterpret_cast<const char*>(data), size);
}

// Inputs larger than this are skipped: the targets look for logic errors,
// and the loaders' size limits are tested elsewhere.
inline constexpr size_t kMaxInputBytes = 1 << 20;

}  // namespace onnxconvert::fuzz

#endif  // ONNX_CONVERT_FUZZ_FUZZ_UTIL_H_
