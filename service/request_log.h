#ifndef ONNX_CONVERT_SERVICE_REQUEST_LOG_H_
#define ONNX_CONVERT_SERVICE_REQUEST_LOG_H_

// The JSON log line the server writes for each finished call.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace onnxconvert::service {

// What the log line of one finished call says.
struct RequestLogEntry {
  absl::Time time;           // when the call answered
  absl::string_view id;      // its request id
  absl::string_view method;  // e.g. "Convert"
  absl::string_view code;    // e.g. "OK", "INVALID_ARGUMENT"
  double milliseconds = 0;
  int64_t bytes_in = 0;
  int64_t bytes_out = 0;
  absl::string_view model_name;  // "": not known
  int64_t from_opset = 0;        // 0: not known
  int64_t to_opset = 0;          // 0: not known
  absl::string_view error;       // "" when the call succeeded
};

// `text` as a JSON string, quotes included: control characters, quotes and
// backslashes escaped, bytes that are not UTF-8 as U+FFFD.
std::string JsonString(absl::string_view text);

// `entry` as one JSON object on one line (no newline): time (RFC 3339, UTC),
// id, method, code, ms, bytes_in, bytes_out, then model, from_opset,
// to_opset and error when known.
std::string JsonLogLine(const RequestLogEntry& entry);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_REQUEST_LOG_H_
