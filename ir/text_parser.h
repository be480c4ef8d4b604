#ifndef ONNX_CONVERT_IR_TEXT_PARSER_H_
#define ONNX_CONVERT_IR_TEXT_PARSER_H_

// Parser for ONNX text syntax (onnx docs/Syntax.md), e.g.
//
//   <ir_version: 10, opset_import: ["" : 13]>
//   g (float[N,4] X) => (float[N,4] Y) {
//     Y = Relu(X)
//   }
//
// Extensions, so that every field of a model has a place in the text:
// - Model header keys beyond ir_version/opset_import: producer_name,
//   producer_version, domain, model_version, doc_string, and
//   metadata_props: ["key" : "value", ...]. An opset entry without a domain
//   is a bare version (`[13]`); `?` is a missing version.
// - Function header keys: domain, overload, opset_import.
// - Names that are not identifiers are quoted strings: "input.1".
// - A node's name in brackets before it: `[conv_1] Y = Conv(X, W)`; a
//   domain set to "" (not absent) as `"".Relu(X)`; an
//   overload after the op: `Y = local.F:v2(X)`; `""` for a missing input.
// - `@doc "text"` before a graph, function, node, value, tensor or attribute
//   sets its doc_string.
// - `@raw "hex"` before the same items merges serialized protobuf bytes into
//   the item: the printer writes there every field the syntax does not show
//   (unknown fields, training_info, metadata on nodes and graphs, sparse
//   initializers, denotations, ...). `name = @raw "hex"` is a whole
//   attribute the syntax cannot express.
// - Tensor data: `{1, 2}` in the typed field for the element type;
//   `raw {1, 2}` or `raw "hex"` in raw_data (little-endian);
//   `external ["location" : "w.bin", "offset" : "0", ...]` for external data.
//   Initializers and value_info both live in the `<...>` list after the
//   outputs: `<float[2] W = {1.0, 2.0}, float[N] T>`.
// - Dims: a number, a symbol (identifier or string), or `?` for unknown;
//   `float` alone has no shape, `float[]` is a scalar.
// - Attribute types are spelt where the value does not tell them:
//   `perm: ints = []`, `t: type_proto = float[N]`, and references
//   `alpha: float = @alpha`.
// - `#` starts a comment.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {

// Parses a model: header, main graph, then functions. Errors read
// "line L, column C: ...".
absl::StatusOr<onnx::ModelProto> ParseModelText(absl::string_view text);
// Parses one graph.
absl::StatusOr<onnx::GraphProto> ParseGraphText(absl::string_view text);
// Parses one function with its header.
absl::StatusOr<onnx::FunctionProto> ParseFunctionText(absl::string_view text);
// Parses one node.
absl::StatusOr<onnx::NodeProto> ParseNodeText(absl::string_view text);
// Parses one type, e.g. "float[N,3]".
absl::StatusOr<onnx::TypeProto> ParseTypeText(absl::string_view text);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_TEXT_PARSER_H_
