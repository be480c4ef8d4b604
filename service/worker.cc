#include "service/worker.h"

namespace onnxconvert::service {

std::shared_ptr<WorkSlots> WorkSlots::Create(int64_t capacity) {
  return std::shared_ptr<WorkSlots>(new WorkSlots(capacity));
}

std::shared_ptr<WorkSlots::Slot> WorkSlots::TryAcquire() {
  {
    absl::MutexLock lock(&mu_);
    if (capacity_ > 0 && in_use_ >= capacity_) return nullptr;
    ++in_use_;
  }
  return std::make_shared<Slot>(shared_from_this());
}

int64_t WorkSlots::in_use() const {
  absl::MutexLock lock(&mu_);
  return in_use_;
}

bool WorkSlots::WaitIdle(absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_use_ == 0; };
  return mu_.AwaitWithDeadline(absl::Condition(&idle), deadline);
}

absl::Status WaitEnded(const WaitLimits& limits) {
  if (absl::Now() >= limits.deadline) {
    return absl::DeadlineExceededError("the deadline passed before the work finished");
  }
  if (limits.cancelled()) return absl::CancelledError("the client cancelled the call");
  return absl::OkStatus();
}

void WorkSlots::Release() {
  absl::MutexLock lock(&mu_);
  --in_use_;
}

}  // namespace onnxconvert::service
