#ifndef ONNX_CONVERT_SCHEMA_CONTEXT_BODIES_H_
#define ONNX_CONVERT_SCHEMA_CONTEXT_BODIES_H_

// The function bodies the spec defines per call (context-dependent: they
// depend on the node's input types or attributes). They live here, below
// both of their users (proto -> ir -> schema -> {adapters, eval} ->
// converter): the converter expands nodes into them, and the evaluator runs
// them for ops that have no kernel, with the input types of the values at
// hand.

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::schema {

// The function body the spec defines for `schema` when that body depends on
// the call (its input types, its attributes), written for the call `node`
// whose inputs have the types `input_types` (null where unknown), in the
// ONNX text form of OpSchema::function_bodies: a FunctionProto whose header
// imports the default domain at the op's since_version. Fails with
// FailedPrecondition naming what the body needs and is not known (an
// element type, a rank), and with Unimplemented for an op whose body is not
// written here.
absl::StatusOr<std::string> ContextDependentBody(
    const OpSchema& schema, const onnx::NodeProto& node,
    absl::Span<const onnx::TypeProto* const> input_types);

}  // namespace onnxconvert::schema

#endif  // ONNX_CONVERT_SCHEMA_CONTEXT_BODIES_H_
