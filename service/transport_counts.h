#ifndef ONNX_CONVERT_SERVICE_TRANSPORT_COUNTS_H_
#define ONNX_CONVERT_SERVICE_TRANSPORT_COUNTS_H_

// What gRPC itself counts of the calls of this process's servers. A unary
// message over the server's receive limit (--max_message_bytes) is refused
// by gRPC's message-size filter before the call is handed to the
// application: in gRPC 1.51 no handler, server interceptor or global
// callback sees it (the call is never published), so it can be neither
// logged nor counted one by one. Channelz does count it, among the calls
// that ended without an answer from a handler.

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace onnxconvert::service {

// Calls gRPC started and calls it ended without an answer from a handler,
// summed over the servers of this process.
struct TransportCalls {
  int64_t started = 0;
  int64_t failed = 0;
};

// The counts in channelz's JSON list of servers (`json`, as
// grpc_channelz_get_servers gives it); none if it holds no server.
std::optional<TransportCalls> ParseChannelzServers(absl::string_view json);

// The counts of this process's servers, from channelz.
std::optional<TransportCalls> TransportCallCounts();

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_TRANSPORT_COUNTS_H_
