#ifndef ONNX_CONVERT_BASE_HEAP_TRIMMER_H_
#define ONNX_CONVERT_BASE_HEAP_TRIMMER_H_

// The heap policies: memory freed goes back to the system rather than
// staying with a heap that only grows, during long work that frees as it
// goes (PeriodicHeapTrimmer: a model converted window by window) and once a
// server has gone idle (IdleHeapTrimmer).

#include <cstddef>
#include <cstdint>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace onnxconvert {

// Gives free heap memory back to the system every `every_ticks` calls of
// Tick, when the process's anonymous resident memory (its heap and stacks,
// not the files it maps) has grown by over `slack_bytes` since the trimmer
// was made or last trimmed. What the heap held before (a service's, say) is
// left with it: giving it back each time would only fault in again what the
// work uses of it. The look costs a read of /proc/self/statm, whatever the
// state of the heap (glibc's own count walks every free chunk). Does nothing
// where the C library is not glibc or the file cannot be read.
class PeriodicHeapTrimmer {
 public:
  explicit PeriodicHeapTrimmer(int64_t every_ticks = 8, size_t slack_bytes = size_t{2} << 20);

  // Marks one unit of work done (a window), trimming when it is time.
  void Tick();
  // Trims done so far.
  int64_t trims() const { return trims_; }

 private:
  int64_t every_ticks_;
  size_t slack_bytes_;
  int64_t ticks_ = 0;
  int64_t trims_ = 0;
  size_t baseline_ = 0;  // anonymous resident bytes when made or last trimmed
};

// Gives the heap's free memory back to the system (malloc_trim) when told
// that the process went idle, at most once per `min_interval`, on a thread
// of its own so that no caller waits for it.
class IdleHeapTrimmer {
 public:
  explicit IdleHeapTrimmer(absl::Duration min_interval = absl::Seconds(1));
  ~IdleHeapTrimmer();
  IdleHeapTrimmer(const IdleHeapTrimmer&) = delete;
  IdleHeapTrimmer& operator=(const IdleHeapTrimmer&) = delete;

  // The last piece of work in flight has finished: trim soon.
  void Idle();
  // Trims done so far.
  int64_t trims() const;

 private:
  void Loop();

  const absl::Duration min_interval_;
  mutable absl::Mutex mu_;
  bool requested_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t trims_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_HEAP_TRIMMER_H_
