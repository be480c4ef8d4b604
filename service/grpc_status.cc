#include "service/grpc_status.h"

#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "proto/rpc_status.pb.h"
#include "service/error_text.h"
#include "service/request_id.h"

namespace onnxconvert::service {
namespace {

// absl's codes are gRPC's canonical codes, value for value.
#define OC_SAME_CODE(absl_code, grpc_code)                          \
  static_assert(static_cast<int>(absl::StatusCode::absl_code) ==   \
                static_cast<int>(grpc::StatusCode::grpc_code))
OC_SAME_CODE(kOk, OK);
OC_SAME_CODE(kCancelled, CANCELLED);
OC_SAME_CODE(kUnknown, UNKNOWN);
OC_SAME_CODE(kInvalidArgument, INVALID_ARGUMENT);
OC_SAME_CODE(kDeadlineExceeded, DEADLINE_EXCEEDED);
OC_SAME_CODE(kNotFound, NOT_FOUND);
OC_SAME_CODE(kAlreadyExists, ALREADY_EXISTS);
OC_SAME_CODE(kPermissionDenied, PERMISSION_DENIED);
OC_SAME_CODE(kResourceExhausted, RESOURCE_EXHAUSTED);
OC_SAME_CODE(kFailedPrecondition, FAILED_PRECONDITION);
OC_SAME_CODE(kAborted, ABORTED);
OC_SAME_CODE(kOutOfRange, OUT_OF_RANGE);
OC_SAME_CODE(kUnimplemented, UNIMPLEMENTED);
OC_SAME_CODE(kInternal, INTERNAL);
OC_SAME_CODE(kUnavailable, UNAVAILABLE);
OC_SAME_CODE(kDataLoss, DATA_LOSS);
OC_SAME_CODE(kUnauthenticated, UNAUTHENTICATED);
#undef OC_SAME_CODE

constexpr absl::string_view kNodeMark = " \xE2\x80\xBA node ";

bool CarriesConversionError(absl::StatusCode code) {
  return code == absl::StatusCode::kFailedPrecondition ||
         code == absl::StatusCode::kInvalidArgument;
}

// Parses "F -> T" into the error's opsets.
bool ParseStepOpsets(absl::string_view step, v1::ConversionError& error) {
  std::vector<absl::string_view> ends = absl::StrSplit(step, " -> ");
  int64_t from = 0, to = 0;
  if (ends.size() != 2 || !absl::SimpleAtoi(ends[0], &from) ||
      !absl::SimpleAtoi(ends[1], &to)) {
    return false;
  }
  error.set_from_opset(from);
  error.set_to_opset(to);
  return true;
}

// Parses "NAME (Op-V): REASON" into the error's node, op and reason.
bool ParseNodePart(absl::string_view rest, v1::ConversionError& error) {
  size_t close = rest.find("): ");
  if (close == absl::string_view::npos) return false;
  size_t open = rest.rfind(" (", close);
  if (open == absl::string_view::npos) return false;
  error.set_node(std::string(rest.substr(0, open)));
  error.set_op_version(std::string(rest.substr(open + 2, close - open - 2)));
  error.set_reason(std::string(rest.substr(close + 3)));
  return true;
}

// `error` with each of its strings abbreviated to `max_bytes`.
v1::ConversionError Shortened(v1::ConversionError error, size_t max_bytes) {
  for (std::string* field : {error.mutable_message(), error.mutable_reason(),
                             error.mutable_graph(), error.mutable_node(),
                             error.mutable_op_version()}) {
    *field = Abbreviate(*field, max_bytes);
  }
  return error;
}

// The serialized google.rpc.Status holding `error`, its strings cut until
// it fits kMaxStatusDetailsBytes; empty (no details) if nothing fits.
std::string BoundedDetails(grpc::StatusCode code, const std::string& message,
                           const v1::ConversionError& error) {
  for (size_t max_bytes : {kMaxStatusMessageBytes, size_t{256}, size_t{64}}) {
    google::rpc::Status details;
    details.set_code(static_cast<int>(code));
    details.set_message(Abbreviate(message, max_bytes));
    details.add_details()->PackFrom(Shortened(error, max_bytes));
    std::string bytes = details.SerializeAsString();
    if (bytes.size() <= kMaxStatusDetailsBytes) return bytes;
  }
  return "";
}

}  // namespace

const char* StatusCodeName(grpc::StatusCode code) {
  static constexpr const char* kNames[] = {
      "OK",           "CANCELLED",          "UNKNOWN",          "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED", "NOT_FOUND",     "ALREADY_EXISTS",   "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",   "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL",          "UNAVAILABLE",      "DATA_LOSS",
      "UNAUTHENTICATED",
  };
  int index = static_cast<int>(code);
  if (index < 0 || index >= static_cast<int>(std::size(kNames))) return "UNKNOWN";
  return kNames[index];
}

v1::ConversionError ParseConversionError(absl::string_view message) {
  v1::ConversionError error;
  error.set_message(std::string(message));
  error.set_reason(std::string(message));
  absl::string_view rest = message;
  if (!absl::ConsumePrefix(&rest, "step ")) return error;
  size_t colon = rest.find(": ");
  size_t mark = rest.find(kNodeMark);
  if (colon == absl::string_view::npos || mark == absl::string_view::npos || mark < colon) {
    return error;
  }
  v1::ConversionError parsed = error;
  if (!ParseStepOpsets(rest.substr(0, colon), parsed)) return error;
  parsed.set_graph(std::string(rest.substr(colon + 2, mark - colon - 2)));
  if (!ParseNodePart(rest.substr(mark + kNodeMark.size()), parsed)) return error;
  return parsed;
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  auto code = static_cast<grpc::StatusCode>(status.code());
  std::string message = Abbreviate(status.message(), kMaxStatusMessageBytes);
  if (!CarriesConversionError(status.code())) return grpc::Status(code, message);
  return grpc::Status(code, message,
                      BoundedDetails(code, message, ParseConversionError(status.message())));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      StripRequestId(status.error_message()));
}

std::optional<v1::ConversionError> ConversionErrorOf(const grpc::Status& status) {
  google::rpc::Status details;
  if (status.error_details().empty() || !details.ParseFromString(status.error_details())) {
    return std::nullopt;
  }
  for (const google::protobuf::Any& any : details.details()) {
    v1::ConversionError error;
    if (any.Is<v1::ConversionError>() && any.UnpackTo(&error)) return error;
  }
  return std::nullopt;
}

}  // namespace onnxconvert::service
