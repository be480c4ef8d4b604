#ifndef ONNX_CONVERT_IR_WIRE_DIAGNOSTICS_H_
#define ONNX_CONVERT_IR_WIRE_DIAGNOSTICS_H_

// Checks of a serialized message's protobuf wire format, naming the first
// problem: what protobuf's parser rejects without saying where, and what it
// silently keeps as an unknown field.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace onnxconvert {

// Nesting depth protobuf's parser accepts by default; deeper messages are a
// wire error.
inline constexpr int kDefaultWireRecursionLimit = 100;

// The first wire-format problem in a serialized message.
struct WireError {
  int64_t offset = 0;   // byte offset of the tag, varint or length at fault
  std::string problem;  // e.g. "truncated varint"
  std::string path;     // e.g. "ModelProto.graph > GraphProto.node[3]"

  // "<problem> at byte <offset> (<path>)".
  std::string ToString() const;
};

// Walks `bytes` as a serialized message of type `type` and returns the first
// problem in byte order, or nullopt when the bytes are well formed.
//
// Reports what protobuf's parser rejects (truncated varints and lengths,
// lengths past the end of the enclosing message, invalid wire types and field
// numbers, groups, malformed packed payloads, nesting deeper than
// `recursion_limit`) and what it silently keeps as an unknown field: a
// declared field sent with the wrong wire type. Undeclared fields are
// skipped. Time is linear in the input; memory is bounded by the nesting.
std::optional<WireError> FindWireError(
    std::string_view bytes, const google::protobuf::Descriptor& type,
    int recursion_limit = kDefaultWireRecursionLimit);

// True when parsed `message` holds, among its unknown fields at any depth,
// something FindWireError reports on its bytes although protobuf's parser
// accepted it: a declared field sent with the wrong wire type, or a group.
// Lets a caller parse first and walk the bytes only when needed.
bool NeedsWireCheck(const google::protobuf::Message& message);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_WIRE_DIAGNOSTICS_H_
