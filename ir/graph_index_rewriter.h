#ifndef ONNX_CONVERT_IR_GRAPH_INDEX_REWRITER_H_
#define ONNX_CONVERT_IR_GRAPH_INDEX_REWRITER_H_

// ir::Rewriter over a GraphIndex: what a rewrite pass or rule (and a version
// adapter run outside a conversion) uses to change a graph it has indexed.
// Inserted nodes and the anchor's removal reach the index at Finish (so
// that a node inserted may produce what the anchor produces, as the
// converter's batched edits allow); the node list takes its final order at
// the index's Commit.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph_index.h"
#include "ir/rewriter.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::ir {

class GraphIndexRewriter : public Rewriter {
 public:
  // The type of `value` as `graph` (the graph defining it) knows it, or
  // null: what the caller's inference says.
  using TypeLookup =
      std::function<const onnx::TypeProto*(const GraphIndex& graph, absl::string_view value)>;

  // Rewrites live node `anchor` of `graph`; `types` (may be empty: no type
  // known) answers TypeOf.
  GraphIndexRewriter(GraphIndex& graph, NodeId anchor, TypeLookup types = {});
  GraphIndexRewriter(const GraphIndexRewriter&) = delete;
  GraphIndexRewriter& operator=(const GraphIndexRewriter&) = delete;

  onnx::NodeProto& anchor() override;
  const onnx::TypeProto* TypeOf(absl::string_view value) const override;
  const onnx::TensorProto* ConstantOf(absl::string_view name) const override;
  std::optional<bool> ValueUsed(absl::string_view value) const override;
  std::string FreshName(absl::string_view hint) override;
  absl::StatusOr<std::string> AddConstant(onnx::TensorProto value) override;
  onnx::NodeProto* InsertBefore(onnx::NodeProto node) override;
  onnx::NodeProto* InsertAfter(onnx::NodeProto node) override;
  std::string DetachOutput(int i) override;
  void RemoveAnchor() override;
  void TrackSubgraph(onnx::GraphProto& graph) override;

  // Applies the rewrite to the index: re-indexes the anchor when it was
  // edited in place (op, inputs, outputs, subgraphs) or removes it, then
  // places the nodes inserted before and after it. Call once, when the
  // rewrite is done; an error (an inserted node producing a value twice,
  // say) names the anchor, and the graph may then hold part of the
  // rewrite: the caller discards it.
  absl::Status Finish();
  // The anchor's id in the index now (an anchor edited in place is
  // re-indexed under a new id).
  NodeId anchor_id() const { return anchor_; }

 private:
  // What the index knows of the anchor: compared with the node to see
  // whether it was edited in place.
  struct Indexed {
    std::string domain;
    std::string op_type;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
  };
  static Indexed Snapshot(const onnx::NodeProto& node);
  // Re-indexes the anchor when it was edited in place since last indexed.
  absl::Status Sync();

  GraphIndex& graph_;
  NodeId anchor_;
  const NodeId first_anchor_;  // where nodes inserted after go
  TypeLookup types_;
  Indexed indexed_;
  bool subgraphs_changed_ = false;
  bool removed_ = false;
  // Nodes inserted before and after the anchor, until Finish.
  std::vector<std::unique_ptr<onnx::NodeProto>> before_;
  std::vector<std::unique_ptr<onnx::NodeProto>> after_;
};

}  // namespace onnxconvert::ir

#endif  // ONNX_CONVERT_IR_GRAPH_INDEX_REWRITER_H_
