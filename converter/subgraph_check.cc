#include "converter/subgraph_check.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "schema/checker.h"

namespace onnxconvert::converter {

absl::Status CheckNodeApart(
    const onnx::ModelProto& shell, onnx::NodeProto& node,
    absl::Span<const absl::string_view> captures,
    absl::FunctionRef<const onnx::TypeProto*(absl::string_view)> type_of) {
  onnx::ModelProto model;
  model.set_ir_version(shell.ir_version());
  *model.mutable_opset_import() = shell.opset_import();
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(shell.graph().name());
  absl::flat_hash_set<absl::string_view> declared;
  auto declare = [&](absl::string_view name) -> absl::Status {
    if (name.empty() || !declared.insert(name).second) return absl::OkStatus();
    const onnx::TypeProto* type = type_of(name);
    if (type == nullptr) {
      return absl::UnimplementedError(absl::StrCat("'", name, "', read in a subgraph of node '",
                                                   node.name(), "', is not defined before its use"));
    }
    onnx::ValueInfoProto& input = *graph.add_input();
    input.set_name(std::string(name));
    *input.mutable_type() = *type;
    return absl::OkStatus();
  };
  for (const std::string& input : node.input()) OC_RETURN_IF_ERROR(declare(input));
  for (absl::string_view capture : captures) OC_RETURN_IF_ERROR(declare(capture));
  // The node is lent to the model, not copied.
  graph.add_node()->Swap(&node);
  schema::CheckReport check = schema::CheckModel(model);
  node.Swap(graph.mutable_node(0));
  for (const schema::CheckIssue& issue : check.issues) {
    if (!issue.is_warning) {
      return absl::UnimplementedError(
          absl::StrCat("the model does not check: ", issue.ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::converter
