#ifndef ONNX_CONVERT_SCHEMA_TYPE_STRINGS_H_
#define ONNX_CONVERT_SCHEMA_TYPE_STRINGS_H_

// The spec's type strings ("tensor(float)", "seq(tensor(int64))", ...) to
// and from TypeProtos, for matching type constraints and writing messages.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::schema {

// The spec's type string of `type`, ignoring shapes: "tensor(float)",
// "seq(tensor(int64))", "optional(tensor(bool))", "map(int64, tensor(float))",
// "sparse_tensor(float)". "" when the type is incomplete (no element type).
std::string TypeString(const onnx::TypeProto& type);

// Parses a spec type string into a TypeProto without shapes.
absl::StatusOr<onnx::TypeProto> ParseTypeString(absl::string_view text);

// Bit i set when "tensor(<element type i>)" is among the type strings
// `types`. Remembered per thread by the strings' address and count: they
// must be storage that lives, unchanged, as long as the process, the
// registry's (OpSchema::AllowedTypes).
uint64_t TensorElemMask(absl::Span<const absl::string_view> types);

}  // namespace onnxconvert::schema

#endif  // ONNX_CONVERT_SCHEMA_TYPE_STRINGS_H_
