#include "ir/graph_index_rewriter.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onnxconvert::ir {

GraphIndexRewriter::GraphIndexRewriter(GraphIndex& graph, NodeId anchor, TypeLookup types)
    : graph_(graph),
      anchor_(anchor),
      first_anchor_(anchor),
      types_(std::move(types)),
      indexed_(Snapshot(graph.node(anchor))) {}

GraphIndexRewriter::Indexed GraphIndexRewriter::Snapshot(const onnx::NodeProto& node) {
  return {node.domain(), node.op_type(), {node.input().begin(), node.input().end()},
          {node.output().begin(), node.output().end()}};
}

onnx::NodeProto& GraphIndexRewriter::anchor() { return *graph_.mutable_node(anchor_); }

const onnx::TypeProto* GraphIndexRewriter::TypeOf(absl::string_view value) const {
  if (!types_) return nullptr;
  const GraphIndex* scope = graph_.DefiningScope(value);
  return scope == nullptr ? nullptr : types_(*scope, value);
}

const onnx::TensorProto* GraphIndexRewriter::ConstantOf(absl::string_view name) const {
  return graph_.FindInitializer(name);
}

std::optional<bool> GraphIndexRewriter::ValueUsed(absl::string_view value) const {
  if (graph_.function() != nullptr) return std::nullopt;
  return !graph_.Consumers(value).empty();
}

std::string GraphIndexRewriter::FreshName(absl::string_view hint) {
  return graph_.FreshName(hint);
}

absl::StatusOr<std::string> GraphIndexRewriter::AddConstant(onnx::TensorProto value) {
  std::string name = FreshName(value.name().empty() ? "const" : value.name());
  value.set_name(name);
  absl::Status added = graph_.AddInitializer(std::move(value));
  if (!added.ok()) return added;
  return name;
}

onnx::NodeProto* GraphIndexRewriter::InsertBefore(onnx::NodeProto node) {
  before_.push_back(std::make_unique<onnx::NodeProto>(std::move(node)));
  return before_.back().get();
}

onnx::NodeProto* GraphIndexRewriter::InsertAfter(onnx::NodeProto node) {
  after_.push_back(std::make_unique<onnx::NodeProto>(std::move(node)));
  return after_.back().get();
}

std::string GraphIndexRewriter::DetachOutput(int i) {
  onnx::NodeProto& node = anchor();
  std::string fresh = FreshName(node.output(i));
  node.set_output(i, fresh);
  return fresh;
}

void GraphIndexRewriter::RemoveAnchor() { removed_ = true; }

void GraphIndexRewriter::TrackSubgraph(onnx::GraphProto&) { subgraphs_changed_ = true; }

absl::Status GraphIndexRewriter::Sync() {
  const onnx::NodeProto& node = graph_.node(anchor_);
  Indexed now = Snapshot(node);
  if (!subgraphs_changed_ && now.domain == indexed_.domain && now.op_type == indexed_.op_type &&
      now.inputs == indexed_.inputs && now.outputs == indexed_.outputs) {
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<NodeId>> ids = graph_.ReplaceNode(anchor_, {node});
  if (!ids.ok()) return ids.status();
  anchor_ = ids->front();
  indexed_ = std::move(now);
  subgraphs_changed_ = false;
  return absl::OkStatus();
}

namespace {

// The nodes of `pending`, moved out.
std::vector<onnx::NodeProto> Take(std::vector<std::unique_ptr<onnx::NodeProto>>& pending) {
  std::vector<onnx::NodeProto> nodes;
  nodes.reserve(pending.size());
  for (std::unique_ptr<onnx::NodeProto>& node : pending) nodes.push_back(std::move(*node));
  pending.clear();
  return nodes;
}

}  // namespace

absl::Status GraphIndexRewriter::Finish() {
  absl::Status status =
      removed_ ? graph_.RemoveNode(anchor_) : Sync();
  if (status.ok() && !before_.empty()) status = graph_.InsertNodes(Take(before_), anchor_).status();
  // After the anchor as first met: an anchor re-indexed by Sync sits just
  // before it.
  if (status.ok() && !after_.empty()) {
    status = graph_.InsertNodesAfter(first_anchor_, Take(after_)).status();
  }
  if (status.ok()) return status;
  const onnx::NodeProto& first = graph_.node(first_anchor_);
  return absl::Status(status.code(), absl::StrCat("rewriting node '", first.name(), "' (",
                                                  first.op_type(), "): ", status.message()));
}

}  // namespace onnxconvert::ir
