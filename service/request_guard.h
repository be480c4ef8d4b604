#ifndef ONNX_CONVERT_SERVICE_REQUEST_GUARD_H_
#define ONNX_CONVERT_SERVICE_REQUEST_GUARD_H_

// The boundary of a request: whatever is thrown while one is handled
// becomes that request's status, so that it fails that request only.

#include <exception>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace onnxconvert::service {

// The status for `error`, thrown by `subject` (e.g. "request r42"):
// std::bad_alloc is ResourceExhausted ("request r42: out of memory
// (std::bad_alloc)"), anything else Internal, with what() when it is a
// std::exception; `where` (e.g. " in worker process 1234") ends the message.
absl::Status ExceptionStatus(std::exception_ptr error, absl::string_view subject,
                             absl::string_view where = "");

// Returns `fn()` (an absl::Status or absl::StatusOr), or the status of what
// it throws, naming request `request_id` (see ExceptionStatus).
template <typename Fn>
auto GuardRequest(absl::string_view request_id, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (...) {
    return ExceptionStatus(std::current_exception(), absl::StrCat("request ", request_id));
  }
}

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_REQUEST_GUARD_H_
