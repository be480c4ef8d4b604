#include "base/heap_trimmer.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace onnxconvert {

HeapTrimmer::HeapTrimmer(int64_t every_ticks, size_t slack_bytes)
    : every_ticks_(every_ticks < 1 ? 1 : every_ticks), slack_bytes_(slack_bytes) {
#ifdef __GLIBC__
  free_at_start_ = mallinfo2().fordblks;
#endif
}

void HeapTrimmer::Tick() {
#ifdef __GLIBC__
  if (++ticks_ % every_ticks_ == 0 && mallinfo2().fordblks > free_at_start_ + slack_bytes_) {
    malloc_trim(0);
  }
#endif
}

}  // namespace onnxconvert
