#ifndef ONNX_CONVERT_CONVERTER_VERIFY_TESTING_H_
#define ONNX_CONVERT_CONVERTER_VERIFY_TESTING_H_

// For tests only: corrupts what one adapter writes, to check that
// verification blames exactly that step and node.

#include <string>
#include <utility>

#include "converter/verify.h"

namespace onnxconvert::converter {

// While alive, every node the adapter named `adapter` converts is
// corrupted after its step (see internal::FaultInjection).
class ScopedFaultInjection {
 public:
  explicit ScopedFaultInjection(std::string adapter) {
    internal::FaultForTesting().adapter = std::move(adapter);
  }
  ~ScopedFaultInjection() { internal::FaultForTesting().adapter.clear(); }
  ScopedFaultInjection(const ScopedFaultInjection&) = delete;
  ScopedFaultInjection& operator=(const ScopedFaultInjection&) = delete;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_VERIFY_TESTING_H_
