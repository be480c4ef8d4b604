#include "base/heap_trimmer.h"

#include <unistd.h>

#include <cstdio>

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

// The process's resident memory that no file backs (statm's resident less
// shared pages), or 0 if it cannot be read.
size_t AnonymousResidentBytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long long size = 0, resident = 0, shared = 0;
  int read = std::fscanf(statm, "%llu %llu %llu", &size, &resident, &shared);
  std::fclose(statm);
  if (read != 3 || shared > resident) return 0;
  static const long page = sysconf(_SC_PAGESIZE);
  return static_cast<size_t>(resident - shared) * static_cast<size_t>(page);
}

}  // namespace

PeriodicHeapTrimmer::PeriodicHeapTrimmer(int64_t every_ticks, size_t slack_bytes)
    : every_ticks_(every_ticks < 1 ? 1 : every_ticks),
      slack_bytes_(slack_bytes),
      baseline_(AnonymousResidentBytes()) {}

void PeriodicHeapTrimmer::Tick() {
#ifdef __GLIBC__
  if (++ticks_ % every_ticks_ != 0) return;
  size_t resident = AnonymousResidentBytes();
  if (resident == 0 || resident <= baseline_ + slack_bytes_) return;
  TrimHeap();
  ++trims_;
  baseline_ = AnonymousResidentBytes();
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
