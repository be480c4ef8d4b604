#include "converter/model_shell.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "converter/wire_scan.h"
#include "ir/wire.h"

namespace onnxconvert::converter {

absl::Status FinishAroundNodes(onnx::ModelProto& shell, absl::Span<const absl::string_view> as_read,
                               ModelSink& out) {
  std::unique_ptr<onnx::GraphProto> graph(shell.release_graph());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> tensors;
  tensors.Swap(graph->mutable_initializer());
  std::string others = graph->SerializeAsString();
  std::deque<std::string> encoded;
  std::vector<absl::string_view> graph_rest;
  absl::string_view rest(others);
  size_t split = FirstFieldAfter(rest, kGraphInitializer);
  graph_rest.push_back(rest.substr(0, split));
  for (int i = 0; i < tensors.size(); ++i) {
    if (static_cast<size_t>(i) < as_read.size() && !as_read[i].empty()) {
      graph_rest.push_back(as_read[i]);
      continue;
    }
    std::string& bytes = encoded.emplace_back();
    wire::AppendMessageField(kGraphInitializer, tensors[i], bytes);
    graph_rest.push_back(bytes);
  }
  graph_rest.push_back(rest.substr(split));
  std::string model = shell.SerializeAsString();
  graph->mutable_initializer()->Swap(&tensors);
  shell.set_allocated_graph(graph.release());
  // The graph goes where protobuf puts field 7: after fields 1 to 6.
  absl::string_view all(model);
  size_t graph_at = FirstFieldAfter(all, kModelGraph);
  return out.Finish(all.substr(0, graph_at), graph_rest, all.substr(graph_at));
}

}  // namespace onnxconvert::converter
