#include "ir/node_rewriter.h"

#include "absl/strings/str_cat.h"

namespace onnxconvert::ir {

std::string NodeRewriter::DetachOutput(int i) {
  auto* outputs = site_.node->mutable_output();
  std::string fresh = scope_.FreshName(outputs->Get(i));
  outputs->AddAllocated(new std::string(fresh));
  outputs->SwapElements(i, outputs->size() - 1);
  edits_.Retire(outputs->ReleaseLast());
  return fresh;
}

absl::Status NodeRewriter::ReplaceByConstants(std::vector<onnx::TensorProto> values) {
  const onnx::NodeProto& node = *site_.node;
  if (static_cast<int>(values.size()) != node.output_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node.name(), "' (", node.op_type(), ") has ", node.output_size(),
        " outputs; ", values.size(), " constants cannot replace them"));
  }
  if (site_.graph == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("node '", node.name(), "' (", node.op_type(),
                     ") is in a function body, which holds no constants"));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (node.output(static_cast<int>(i)).empty()) continue;
    values[i].set_name(node.output(static_cast<int>(i)));
    absl::Status added = scope_.AddNamedConstant(std::move(values[i]));
    if (!added.ok()) return added;
  }
  edits_.Remove(site_);
  return absl::OkStatus();
}

void NodeRewriter::TrackSubgraph(onnx::GraphProto& graph) {
  edits_.TrackSubgraph(graph, absl::StrCat(site_.path, "/", graph.name()), site_.graph);
}

}  // namespace onnxconvert::ir
