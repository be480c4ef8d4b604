#ifndef ONNX_CONVERT_IR_WIRE_DIAGNOSTICS_H_
#define ONNX_CONVERT_IR_WIRE_DIAGNOSTICS_H_

#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "google/protobuf/descriptor.h"

namespace onnxconvert {

// Walks `bytes` as a serialized message of type `descriptor` and describes
// the first wire-format problem, with its byte offset and field path, e.g.
// "wrong wire type 0 for field 7 (graph), expected 2, at byte 4
// (ModelProto.graph)". Returns nullopt when the bytes are well formed.
//
// Catches what protobuf's parser rejects (truncated varints and lengths,
// invalid wire types, groups, nesting past the limit) and what it silently
// accepts as an unknown field: a declared field sent with the wrong wire
// type. Fields the schema does not declare are accepted and skipped. Cost is
// linear in the number of fields; string and bytes payloads are skipped.
std::optional<std::string> FindWireError(
    absl::string_view bytes, const google::protobuf::Descriptor* descriptor);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_WIRE_DIAGNOSTICS_H_
