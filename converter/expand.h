#ifndef ONNX_CONVERT_CONVERTER_EXPAND_H_
#define ONNX_CONVERT_CONVERTER_EXPAND_H_

// Expansion of a node into the function body the spec gives its op, for
// steps that have no adapter but a body valid at the target opset.

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::converter {

// The nodes (and constants) that replace one node whose function body was
// expanded, valid at the target opset.
struct Expansion {
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> initializers;
};

// Expands `node`, bound to `schema`, into the static function body the spec
// gives for it (attributes substituted, values renamed apart from the rest
// of the model with `fresh_name`), then converts that body from its own
// opset to `target_opset` with the converter, validating each step.
// `type_of` and `constant_of` describe the node's inputs. Fails with
// FailedPrecondition naming what cannot be expressed.
absl::StatusOr<Expansion> ExpandFunctionNode(
    const onnx::NodeProto& node, const schema::OpSchema& schema, int64_t model_opset,
    int64_t target_opset, absl::FunctionRef<const onnx::TypeProto*(absl::string_view)> type_of,
    absl::FunctionRef<const onnx::TensorProto*(absl::string_view)> constant_of,
    absl::FunctionRef<std::string(absl::string_view)> fresh_name);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_EXPAND_H_
