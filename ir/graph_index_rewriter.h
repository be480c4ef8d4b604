#ifndef ONNX_CONVERT_IR_GRAPH_INDEX_REWRITER_H_
#define ONNX_CONVERT_IR_GRAPH_INDEX_REWRITER_H_

// One rewrite of a node of a GraphIndex: it hands out the ir::Rewriter
// (NodeRewriter, ir/node_rewriter.h) a rewrite pass, a rule or a version
// adapter run outside a conversion changes the graph through, over a batch
// of its own, and applies the batch to the index at Finish (so that a node
// inserted may produce what the anchor produces). The node list takes its
// final order at the index's Commit.
//
//   GraphIndexRewriter rewrite(graph, id);
//   ir::Rewriter& r = rewrite.rewriter();
//   ... r.InsertBefore(...); r.RemoveAnchor(); ...
//   OC_RETURN_IF_ERROR(rewrite.Finish());

#include <functional>
#include <optional>
#include <string>
#include <utility>
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

class GraphIndexRewriter {
 public:
  // The type of `value` as `graph` (the graph defining it) knows it, or
  // null: what the caller's inference says.
  using TypeLookup =
      std::function<const onnx::TypeProto*(const GraphIndex& graph, absl::string_view value)>;

  // Rewrites live node `anchor` of `graph`; `types` (may be empty: no type
  // known) answers Rewriter::TypeOf.
  GraphIndexRewriter(GraphIndex& graph, NodeId anchor, TypeLookup types = {});
  GraphIndexRewriter(const GraphIndexRewriter&) = delete;
  GraphIndexRewriter& operator=(const GraphIndexRewriter&) = delete;

  // The rewriter of the anchor; valid until Finish.
  Rewriter& rewriter() { return rewriter_; }
  // Erases live node `id` (rewriter().EraseNode of its node), its id known:
  // Finish need not look it up by the node's outputs.
  void EraseNode(NodeId id);

  // Applies the rewrite to the index, in this order: removes the nodes
  // erased, re-indexes the anchor when it was edited in place (op, inputs,
  // outputs, subgraphs) or removes it, adds the constants that replace it,
  // places the nodes inserted before and after it, and moves the uses
  // replaced. Call once, when the rewrite is done; an error (an inserted
  // node producing a value twice, say) names the anchor, and the graph may
  // then hold part of the rewrite: the caller discards it.
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
    absl::StatusOr<std::string> AddConstant(onnx::TensorProto&& value) override;
    // Kept until Finish: the anchor still defines the name.
    absl::Status AddNamedConstant(onnx::TensorProto value) override;
    // The constants AddNamedConstant kept, moved out.
    std::vector<onnx::TensorProto> TakeNamed() { return std::move(named_); }

   private:
    GraphIndex& graph_;
    TypeLookup types_;
    std::vector<onnx::TensorProto> named_;
  };
  // The anchor's op as indexed: compared with the node (and its inputs and
  // outputs with the index's record) to see whether it was edited in place.
  struct Indexed {
    std::string domain;
    std::string op_type;
  };
  static Indexed Snapshot(const onnx::NodeProto& node);
  // The anchor as a site of the batch.
  static NodeSite SiteOf(GraphIndex& graph, NodeId anchor);
  // The id of `node`, a live node of the index.
  NodeId IdOf(const onnx::NodeProto& node) const;
  // Re-indexes the anchor when it was edited in place since last indexed.
  absl::Status Sync();
  // Finish, without the anchor named in errors.
  absl::Status Apply();

  GraphIndex& graph_;
  NodeId anchor_;
  const NodeId first_anchor_;  // where nodes inserted after go
  const NodeSite site_;        // the anchor as first met
  Indexed indexed_;
  NodeEdits edits_;
  // The nodes erased by id (EraseNode), with their ids.
  std::vector<std::pair<const onnx::NodeProto*, NodeId>> erased_ids_;
  Scope scope_;
  NodeRewriter rewriter_;
};

}  // namespace onnxconvert::ir

#endif  // ONNX_CONVERT_IR_GRAPH_INDEX_REWRITER_H_
