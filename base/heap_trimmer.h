#ifndef ONNX_CONVERT_BASE_HEAP_TRIMMER_H_
#define ONNX_CONVERT_BASE_HEAP_TRIMMER_H_

// The heap policy of long pieces of work that free as they go (a model
// converted window by window): memory they free goes back to the system
// rather than staying with a heap that only grows.

#include <cstddef>
#include <cstdint>

namespace onnxconvert {

// Gives free heap memory back to the system every `every_ticks` calls of
// Tick, when more is free than was when the trimmer was made by over
// `slack_bytes`. What was free before (a service's heap, say) is left with
// the heap: giving it back each time would only fault in again what the
// work uses of it. Does nothing where the C library is not glibc.
class HeapTrimmer {
 public:
  explicit HeapTrimmer(int64_t every_ticks = 8, size_t slack_bytes = size_t{2} << 20);

  // Marks one unit of work done (a window), trimming when it is time.
  void Tick();

 private:
  int64_t every_ticks_;
  size_t slack_bytes_;
  int64_t ticks_ = 0;
  size_t free_at_start_ = 0;
};

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_HEAP_TRIMMER_H_
