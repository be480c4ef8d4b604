#ifndef ONNX_CONVERT_SERVICE_REQUEST_ID_H_
#define ONNX_CONVERT_SERVICE_REQUEST_ID_H_

// Request ids: taken from the client's metadata or made up, sent back in the
// server's metadata, and named at the start of every error message.

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "grpcpp/support/string_ref.h"

namespace onnxconvert::service {

// The metadata key of a call's request id: sent by the client (optional) and
// sent back by the server in its initial and trailing metadata.
inline constexpr char kRequestIdMetadata[] = "x-request-id";

// The longest request id taken from a client.
inline constexpr size_t kMaxRequestIdLength = 64;

// The id the client sent in `metadata` under x-request-id when it is a
// plain one (1 to 64 letters, digits, '-', '_' or '.'); else "".
std::string ClientRequestId(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata);

// A fresh random request id: 16 lowercase hexadecimal digits.
std::string NewRequestId();

// True when `message` names request `id` ("request <id>", the id whole).
bool NamesRequest(absl::string_view message, absl::string_view id);

// `message` followed by " [request <id>]", unless it names request `id`
// already (see NamesRequest).
std::string WithRequestId(absl::string_view message, absl::string_view id);

// `message` without a " [request <id>]" that WithRequestId put at its end.
std::string StripRequestId(absl::string_view message);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_REQUEST_ID_H_
