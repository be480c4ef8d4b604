#ifndef ONNX_CONVERT_SERVICE_TESTING_CANCEL_LATER_H_
#define ONNX_CONVERT_SERVICE_TESTING_CANCEL_LATER_H_

// For tests of waits that a client cancels while the work runs.

#include <atomic>
#include <chrono>
#include <thread>

#include "service/worker.h"

namespace onnxconvert::service::testing {

// WaitLimits whose client cancels `delay` after construction (a thread that
// sets the flag; joined on destruction).
class CancelLater {
 public:
  explicit CancelLater(std::chrono::milliseconds delay)
      : canceller_([this, delay] {
          std::this_thread::sleep_for(delay);
          cancelled_ = true;
        }) {
    limits_.cancelled = [this] { return cancelled_.load(); };
  }
  ~CancelLater() { canceller_.join(); }
  CancelLater(const CancelLater&) = delete;
  CancelLater& operator=(const CancelLater&) = delete;

  // The limits to wait under: cancelled once the delay has passed.
  const WaitLimits& limits() const { return limits_; }

 private:
  std::atomic<bool> cancelled_{false};
  WaitLimits limits_;
  std::thread canceller_;
};

}  // namespace onnxconvert::service::testing

#endif  // ONNX_CONVERT_SERVICE_TESTING_CANCEL_LATER_H_
