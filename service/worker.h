#ifndef ONNX_CONVERT_SERVICE_WORKER_H_
#define ONNX_CONVERT_SERVICE_WORKER_H_

// Long work (a conversion) runs on a thread of its own while the RPC handler
// waits for it, so that the handler can answer at once when the client
// cancels or the deadline passes. The converter has no cancellation hook:
// abandoned work runs to its end and its result is dropped; it keeps its
// slot until then, so abandoned work still counts against the limit.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/request_guard.h"

namespace onnxconvert::service {

// A bounded number of slots for concurrent work. Thread-safe; shared by the
// handlers and the worker threads that outlive them.
class WorkSlots : public std::enable_shared_from_this<WorkSlots> {
 public:
  // A held slot; destroying the last copy frees it.
  class Slot {
   public:
    explicit Slot(std::shared_ptr<WorkSlots> owner) : owner_(std::move(owner)) {}
    ~Slot() { owner_->Release(); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    std::shared_ptr<WorkSlots> owner_;
  };

  // Slots for at most `capacity` pieces of work at once (<= 0: no limit).
  static std::shared_ptr<WorkSlots> Create(int64_t capacity);

  // A slot, or null when all are in use.
  std::shared_ptr<Slot> TryAcquire();
  // Slots in use now.
  int64_t in_use() const;
  // The limit (<= 0: none).
  int64_t capacity() const { return capacity_; }
  // Waits until no slot is in use or `deadline` passes; true when idle.
  bool WaitIdle(absl::Time deadline) const;

 private:
  explicit WorkSlots(int64_t capacity) : capacity_(capacity) {}
  void Release();

  const int64_t capacity_;
  mutable absl::Mutex mu_;
  int64_t in_use_ ABSL_GUARDED_BY(mu_) = 0;
};

// When to stop waiting for work.
struct WaitLimits {
  // True once the client has cancelled the call; polled.
  std::function<bool()> cancelled = [] { return false; };
  // The call's deadline; InfiniteFuture for none.
  absl::Time deadline = absl::InfiniteFuture();
  // How often `cancelled` and the deadline are looked at.
  absl::Duration poll = absl::Milliseconds(5);
};

// OK while a wait under `limits` may go on; DeadlineExceeded or Cancelled,
// naming the reason, once it must end.
absl::Status WaitEnded(const WaitLimits& limits);

// Runs `work` on a new thread, which keeps `slot` until the work ends, and
// waits for its result. Returns DeadlineExceeded or Cancelled, naming the
// reason, when the wait ends first; the work then finishes unobserved.
// ResourceExhausted when no thread can be started. What `work` throws is
// its result's status (see request_guard.h). `work` must own everything it
// uses.
template <typename T>
absl::StatusOr<T> RunAbandonable(std::function<absl::StatusOr<T>()> work,
                                 std::shared_ptr<WorkSlots::Slot> slot,
                                 const WaitLimits& limits) {
  struct State {
    absl::Mutex mu;
    std::optional<absl::StatusOr<T>> result ABSL_GUARDED_BY(mu);
    bool Done() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return result.has_value(); }
  };
  auto state = std::make_shared<State>();
  try {
    std::thread([state, work = std::move(work), slot = std::move(slot)]() mutable {
      absl::StatusOr<T> result = absl::UnknownError("");
      try {
        result = work();
      } catch (...) {
        // A thread must not let an exception out (the process would end).
        result = ExceptionStatus(std::current_exception(), "work on a worker thread");
      }
      // Free the slot before answering, so that the client's next call,
      // which may follow the answer at once, finds it free.
      slot.reset();
      absl::MutexLock lock(&state->mu);
      state->result = std::move(result);
    }).detach();
  } catch (const std::system_error& error) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start a worker thread: ", error.what()));
  }
  absl::MutexLock lock(&state->mu);
  while (!state->mu.AwaitWithTimeout(absl::Condition(state.get(), &State::Done),
                                     limits.poll)) {
    absl::Status ended = WaitEnded(limits);
    if (!ended.ok()) return ended;
  }
  // Work that stopped because the deadline passed says so as the wait would.
  if (!state->result->ok() && state->result->status().code() == absl::StatusCode::kCancelled &&
      absl::Now() >= limits.deadline) {
    return absl::DeadlineExceededError("the deadline passed before the work finished");
  }
  return *std::move(state->result);
}

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_WORKER_H_
