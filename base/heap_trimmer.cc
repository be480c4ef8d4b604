#include "base/heap_trimmer.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace onnxconvert {
namespace {

// Gives the heap's free memory back to the system where the C library is
// glibc.
void TrimHeap() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace

PeriodicHeapTrimmer::PeriodicHeapTrimmer(int64_t every_ticks, size_t slack_bytes)
    : every_ticks_(every_ticks < 1 ? 1 : every_ticks), slack_bytes_(slack_bytes) {
#ifdef __GLIBC__
  free_at_start_ = mallinfo2().fordblks;
#endif
}

void PeriodicHeapTrimmer::Tick() {
#ifdef __GLIBC__
  if (++ticks_ % every_ticks_ == 0 && mallinfo2().fordblks > free_at_start_ + slack_bytes_) {
    TrimHeap();
  }
#endif
}

IdleHeapTrimmer::IdleHeapTrimmer(absl::Duration min_interval)
    : min_interval_(min_interval), thread_([this] { Loop(); }) {}

IdleHeapTrimmer::~IdleHeapTrimmer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void IdleHeapTrimmer::Idle() {
  absl::MutexLock lock(&mu_);
  requested_ = true;
}

int64_t IdleHeapTrimmer::trims() const {
  absl::MutexLock lock(&mu_);
  return trims_;
}

void IdleHeapTrimmer::Loop() {
  absl::Time last = absl::InfinitePast();
  absl::MutexLock lock(&mu_);
  while (true) {
    mu_.Await(absl::Condition(
        +[](IdleHeapTrimmer* self) { return self->requested_ || self->stop_; }, this));
    // Rate limit: wait out the interval since the last trim (or a stop).
    mu_.AwaitWithDeadline(
        absl::Condition(+[](IdleHeapTrimmer* self) { return self->stop_; }, this),
        last + min_interval_);
    if (stop_) return;
    requested_ = false;
    mu_.Unlock();
    TrimHeap();
    last = absl::Now();
    mu_.Lock();
    ++trims_;
  }
}

}  // namespace onnxconvert
