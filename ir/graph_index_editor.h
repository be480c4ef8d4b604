#ifndef ONNX_CONVERT_IR_GRAPH_INDEX_EDITOR_H_
#define ONNX_CONVERT_IR_GRAPH_INDEX_EDITOR_H_

// Direct access to a GraphIndex's node edits, one call at a time, for the
// index's own tests and benchmark (the build lets nothing else depend on
// it). Rewrite passes and rules edit through ir::GraphIndexRewriter.

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph_index.h"
#include "proto/onnx.pb.h"

namespace onnxconvert {

// The edits of one GraphIndex; each method is the index's own of the same
// name (see its comments in ir/graph_index.h).
class GraphIndexEditor {
 public:
  explicit GraphIndexEditor(GraphIndex& graph) : graph_(graph) {}

  // Adds `nodes` before node `before` (kNoNode: at the end).
  absl::StatusOr<std::vector<NodeId>> InsertNodes(std::vector<onnx::NodeProto> nodes,
                                                  NodeId before = kNoNode) {
    return graph_.InsertNodes(std::move(nodes), before);
  }
  // Adds `nodes` just after node `after`.
  absl::StatusOr<std::vector<NodeId>> InsertNodesAfter(NodeId after,
                                                       std::vector<onnx::NodeProto> nodes) {
    return graph_.InsertNodesAfter(after, std::move(nodes));
  }
  // Replaces live node `node` by `nodes`, where it was.
  absl::StatusOr<std::vector<NodeId>> ReplaceNode(NodeId node,
                                                  std::vector<onnx::NodeProto> nodes) {
    return graph_.ReplaceNode(node, std::move(nodes));
  }
  // Removes live node `node`.
  absl::Status RemoveNode(NodeId node) { return graph_.RemoveNode(node); }
  // Makes input `slot` of live node `node` name `value`.
  absl::Status SetInput(NodeId node, int slot, absl::string_view value) {
    return graph_.SetInput(node, slot, value);
  }
  // Makes every use of `from` use `to` instead.
  absl::Status RenameUses(absl::string_view from, absl::string_view to) {
    return graph_.RenameUses(from, to);
  }
  // Appends initializer `tensor`.
  absl::Status AddInitializer(onnx::TensorProto tensor) {
    return graph_.AddInitializer(std::move(tensor));
  }

 private:
  GraphIndex& graph_;
};

// The editor of `graph`.
inline GraphIndexEditor Edit(GraphIndex& graph) { return GraphIndexEditor(graph); }
// The editor of `*graph`.
inline GraphIndexEditor Edit(GraphIndex* graph) { return GraphIndexEditor(*graph); }
// The editor of `*graph`.
inline GraphIndexEditor Edit(const std::unique_ptr<GraphIndex>& graph) {
  return GraphIndexEditor(*graph);
}

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_IR_GRAPH_INDEX_EDITOR_H_
