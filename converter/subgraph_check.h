#ifndef ONNX_CONVERT_CONVERTER_SUBGRAPH_CHECK_H_
#define ONNX_CONVERT_CONVERTER_SUBGRAPH_CHECK_H_

// The check of one node with subgraphs apart from its graph, as the windows
// (windowed.cc) check such a node of theirs. Internal to the converter.

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

// Checks `node`, of the main graph of `shell` (whose nodes are held
// elsewhere), and its subgraphs, which read `captures` from the main graph,
// as CheckModel of the whole model would: in a model of their own (the
// shell's IR version, opsets and graph name) whose inputs are the values
// the node and its subgraphs read, typed by `type_of`. The node is lent to
// that model and given back. Unimplemented, saying why, when a value read
// has no type (it is not defined before the node) or the check finds an
// error.
absl::Status CheckNodeApart(
    const onnx::ModelProto& shell, onnx::NodeProto& node,
    absl::Span<const absl::string_view> captures,
    absl::FunctionRef<const onnx::TypeProto*(absl::string_view)> type_of);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_SUBGRAPH_CHECK_H_
