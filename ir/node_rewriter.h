#ifndef ONNX_CONVERT_IR_NODE_REWRITER_H_
#define ONNX_CONVERT_IR_NODE_REWRITER_H_

// The ir::Rewriter: one node (the anchor) rewritten through a NodeEdits
// batch (ir/node_edits.h), with what is known around it (types, constants,
// uses) and the names and constants handed out coming from the driver's
// RewriteScope. The converter binds it to one step's batch and tables
// (converter/step_scope.h); a GraphIndexRewriter, to a batch of its own that
// the index takes at the rewrite's end (ir/graph_index_rewriter.h). The one
// implementation of ir::Rewriter.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/node_edits.h"
#include "ir/op_index.h"
#include "ir/rewriter.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::ir {

// What the driver of a rewrite knows of the graph around its anchor, and
// where its fresh names and constants come from; each method answers the
// Rewriter method of the same name.
class RewriteScope {
 public:
  virtual ~RewriteScope() = default;
  // See Rewriter::TypeOf.
  virtual const onnx::TypeProto* TypeOf(absl::string_view value) const = 0;
  // See Rewriter::ConstantOf.
  virtual const onnx::TensorProto* ConstantOf(absl::string_view name) const = 0;
  // See Rewriter::ValueUsed.
  virtual std::optional<bool> ValueUsed(absl::string_view value) const = 0;
  // See Rewriter::StaticInts; none by default.
  virtual std::optional<std::vector<int64_t>> StaticInts(
      [[maybe_unused]] absl::string_view name) const {
    return std::nullopt;
  }
  // See Rewriter::FreshName.
  virtual std::string FreshName(absl::string_view hint) = 0;
  // See Rewriter::AddConstant.
  virtual absl::StatusOr<std::string> AddConstant(onnx::TensorProto&& value) = 0;
  // Adds `value` as a constant of the anchor's graph under its own name,
  // which the anchor produces until the rewrite ends (it is then removed);
  // FailedPrecondition where constants cannot be added. For
  // Rewriter::ReplaceByConstants.
  virtual absl::Status AddNamedConstant(onnx::TensorProto value) = 0;
};

// Rewrites `site`'s node: edits go to `edits`, the rest to `scope`. The
// three must outlive it.
class NodeRewriter final : public Rewriter {
 public:
  NodeRewriter(NodeEdits& edits, const NodeSite& site, RewriteScope& scope)
      : edits_(edits), site_(site), scope_(scope) {}
  NodeRewriter(const NodeRewriter&) = delete;
  NodeRewriter& operator=(const NodeRewriter&) = delete;

  onnx::NodeProto& anchor() override { return *site_.node; }
  const onnx::TypeProto* TypeOf(absl::string_view value) const override {
    return scope_.TypeOf(value);
  }
  const onnx::TensorProto* ConstantOf(absl::string_view name) const override {
    return scope_.ConstantOf(name);
  }
  std::optional<bool> ValueUsed(absl::string_view value) const override {
    return scope_.ValueUsed(value);
  }
  std::optional<std::vector<int64_t>> StaticInts(absl::string_view name) const override {
    return scope_.StaticInts(name);
  }
  std::string FreshName(absl::string_view hint) override { return scope_.FreshName(hint); }
  absl::StatusOr<std::string> AddConstant(onnx::TensorProto&& value) override {
    return scope_.AddConstant(std::move(value));
  }
  onnx::NodeProto* InsertBefore(onnx::NodeProto node) override {
    return edits_.InsertBefore(site_, std::move(node));
  }
  onnx::NodeProto* InsertAfter(onnx::NodeProto node) override {
    return edits_.InsertAfter(site_, std::move(node));
  }
  // The old name's string stays alive in the batch: inferred types may view
  // it.
  std::string DetachOutput(int i) override;
  void RemoveAnchor() override { edits_.Remove(site_); }
  void EraseNode(const onnx::NodeProto& node) override {
    edits_.Remove({const_cast<onnx::NodeProto*>(&node), site_.graph, site_.list, site_.path});
  }
  void ReplaceAllUses(absl::string_view value, absl::string_view replacement) override {
    edits_.RenameUses(site_, std::string(value), std::string(replacement));
  }
  absl::Status ReplaceByConstants(std::vector<onnx::TensorProto> values) override;
  void TrackSubgraph(onnx::GraphProto& graph) override;

 private:
  NodeEdits& edits_;
  const NodeSite site_;
  RewriteScope& scope_;
};

}  // namespace onnxconvert::ir

#endif  // ONNX_CONVERT_IR_NODE_REWRITER_H_
