#ifndef ONNX_CONVERT_CONVERTER_BYTES_BEHIND_H_
#define ONNX_CONVERT_CONVERTER_BYTES_BEHIND_H_

// The bytes of a model that a pass over them has left behind, handed to
// WindowOptions::release a MiB at a time (for a mapped file: its pages
// dropped from memory, so that a pass holds only what lies near it).
// Internal to the converter.

#include <cstddef>
#include <functional>

#include "absl/strings/string_view.h"

namespace onnxconvert::converter {

// Hands `release` (if set) what a pass has left behind: moving forwards,
// the bytes before it; moving backwards, the bytes after it; each time they
// come to kBytes.
class BytesBehind {
 public:
  static constexpr ptrdiff_t kBytes = ptrdiff_t{1} << 20;

  // A pass that starts at `start` (the first byte forwards, one past the
  // last backwards).
  BytesBehind(const std::function<void(absl::string_view)>* release, const char* start)
      : release_(release != nullptr && *release ? release : nullptr), mark_(start) {}

  // A forward pass has reached `at`.
  void Forwards(const char* at) {
    if (release_ == nullptr || at - mark_ < kBytes) return;
    (*release_)(absl::string_view(mark_, static_cast<size_t>(at - mark_)));
    mark_ = at;
  }
  // A backward pass has reached `at`.
  void Backwards(const char* at) {
    if (release_ == nullptr || mark_ - at < kBytes) return;
    (*release_)(absl::string_view(at, static_cast<size_t>(mark_ - at)));
    mark_ = at;
  }

 private:
  const std::function<void(absl::string_view)>* release_;
  const char* mark_;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_BYTES_BEHIND_H_
