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

void NodeRewriter::TrackSubgraph(onnx::GraphProto& graph) {
  edits_.TrackSubgraph(graph, absl::StrCat(site_.path, "/", graph.name()), site_.graph);
}

}  // namespace onnxconvert::ir
