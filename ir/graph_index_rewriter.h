#ifndef ONNX_CONVERT_IR_GRAPH_INDEX_REWRITER_H_
#define ONNX_CONVERT_IR_GRAPH_INDEX_REWRITER_H_

// The ir::Rewriter (NodeRewriter, ir/node_rewriter.h) bound to a node of a
// GraphIndex: what a rewrite rule (and a version adapter run outside a
// conversion) changes an indexed graph through. Edits are batched as the
// converter's are and reach the index at Finish (so that a node inserted
// may produce what the anchor produces); the node list takes its final
// order at the index's Commit.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph_index.h"
#include "ir/node_edits.h"
#include "ir/node_rewriter.h"
#include "ir/op_index.h"
#include "ir/rewriter.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::ir {

class GraphIndexRewriter final : public Rewriter {
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

  onnx::NodeProto& anchor() override { return *graph_.mutable_node(anchor_); }
  const onnx::TypeProto* TypeOf(absl::string_view value) const override {
    return rewriter_.TypeOf(value);
  }
  const onnx::TensorProto* ConstantOf(absl::string_view name) const override {
    return rewriter_.ConstantOf(name);
  }
  std::optional<bool> ValueUsed(absl::string_view value) const override {
    return rewriter_.ValueUsed(value);
  }
  std::string FreshName(absl::string_view hint) override { return rewriter_.FreshName(hint); }
  absl::StatusOr<std::string> AddConstant(onnx::TensorProto value) override {
    return rewriter_.AddConstant(std::move(value));
  }
  onnx::NodeProto* InsertBefore(onnx::NodeProto node) override {
    return rewriter_.InsertBefore(std::move(node));
  }
  onnx::NodeProto* InsertAfter(onnx::NodeProto node) override {
    return rewriter_.InsertAfter(std::move(node));
  }
  std::string DetachOutput(int i) override { return rewriter_.DetachOutput(i); }
  void RemoveAnchor() override { rewriter_.RemoveAnchor(); }
  void TrackSubgraph(onnx::GraphProto& graph) override { rewriter_.TrackSubgraph(graph); }

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
  // What the index knows around the anchor, and its names and constants.
  class Scope final : public RewriteScope {
   public:
    Scope(GraphIndex& graph, TypeLookup types) : graph_(graph), types_(std::move(types)) {}
    const onnx::TypeProto* TypeOf(absl::string_view value) const override;
    const onnx::TensorProto* ConstantOf(absl::string_view name) const override;
    std::optional<bool> ValueUsed(absl::string_view value) const override;
    std::string FreshName(absl::string_view hint) override;
    absl::StatusOr<std::string> AddConstant(onnx::TensorProto value) override;

   private:
    GraphIndex& graph_;
    TypeLookup types_;
  };
  // What the index knows of the anchor: compared with the node to see
  // whether it was edited in place.
  struct Indexed {
    std::string domain;
    std::string op_type;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
  };
  static Indexed Snapshot(const onnx::NodeProto& node);
  // The anchor as a site of the batch.
  static NodeSite SiteOf(GraphIndex& graph, NodeId anchor);
  // Re-indexes the anchor when it was edited in place since last indexed.
  absl::Status Sync();

  GraphIndex& graph_;
  NodeId anchor_;
  const NodeId first_anchor_;  // where nodes inserted after go
  const NodeSite site_;        // the anchor as first met
  Indexed indexed_;
  NodeEdits edits_;
  Scope scope_;
  NodeRewriter rewriter_;
};

}  // namespace onnxconvert::ir

#endif  // ONNX_CONVERT_IR_GRAPH_INDEX_REWRITER_H_
