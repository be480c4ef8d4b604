#ifndef ONNX_CONVERT_SERVICE_GRPC_STATUS_H_
#define ONNX_CONVERT_SERVICE_GRPC_STATUS_H_

// Status conversions between the library (absl::Status) and gRPC. The codes
// are the same canonical codes on both sides; the message travels as it is,
// up to a bound: a status reaches the client in the call's trailing
// metadata, which gRPC clients cap (8 KiB by default), the message
// percent-encoded (up to 3 bytes a byte) and the details base64-encoded.

#include <cstddef>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/support/status.h"
#include "proto/onnx_convert_service.pb.h"

namespace onnxconvert::service {

// Most bytes of a status message sent to a client.
inline constexpr size_t kMaxStatusMessageBytes = 1024;
// Most bytes of the serialized google.rpc.Status sent as error details.
inline constexpr size_t kMaxStatusDetailsBytes = 2048;

// The gRPC status for `status`: same code and message (abbreviated past
// kMaxStatusMessageBytes). A failed conversion (FAILED_PRECONDITION or
// INVALID_ARGUMENT) also carries a google.rpc.Status in its error details,
// holding a v1::ConversionError, its fields shortened as needed to fit
// kMaxStatusDetailsBytes.
grpc::Status ToGrpcStatus(const absl::Status& status);

// The library status for a gRPC status: same code and message, less the
// " [request <id>]" the service appends (see request_id.h).
absl::Status FromGrpcStatus(const grpc::Status& status);

// The parts of a converter error message,
// "step F -> T: GRAPH › node NAME (Op-V): REASON"; a message of another
// shape fills `message` and `reason` only.
v1::ConversionError ParseConversionError(absl::string_view message);

// The canonical name of `code`, e.g. "INVALID_ARGUMENT".
const char* StatusCodeName(grpc::StatusCode code);

// `status` carrying a google.rpc.RetryInfo of `delay` (as an absl payload);
// ToGrpcStatus sends it in the error details.
absl::Status WithRetryDelay(absl::Status status, absl::Duration delay);

// The retry delay of the google.rpc.RetryInfo in `status`'s error details,
// if any.
std::optional<absl::Duration> RetryDelayOf(const grpc::Status& status);

// The ConversionError attached to `status` by ToGrpcStatus, if any.
std::optional<v1::ConversionError> ConversionErrorOf(const grpc::Status& status);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_GRPC_STATUS_H_
