#ifndef ONNX_CONVERT_TESTS_EVENTUALLY_H_
#define ONNX_CONVERT_TESTS_EVENTUALLY_H_

// Polling for a condition that another thread or process makes true, for
// tests that cannot be told when it happens.

#include <chrono>
#include <thread>

namespace onnxconvert::testing {

// Waits until `predicate` holds, polling every 10 ms for up to 10 s;
// whether it held.
template <typename Predicate>
bool Eventually(Predicate predicate) {
  for (int i = 0; i < 1000; ++i) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace onnxconvert::testing

#endif  // ONNX_CONVERT_TESTS_EVENTUALLY_H_
