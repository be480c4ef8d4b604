#include "ir/graph_index_rewriter.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace onnxconvert::ir {

const onnx::TypeProto* GraphIndexRewriter::Scope::TypeOf(absl::string_view value) const {
  if (!types_) return nullptr;
  const GraphIndex* scope = graph_.DefiningScope(value);
  return scope == nullptr ? nullptr : types_(*scope, value);
}

const onnx::TensorProto* GraphIndexRewriter::Scope::ConstantOf(absl::string_view name) const {
  return graph_.FindInitializer(name);
}

std::optional<bool> GraphIndexRewriter::Scope::ValueUsed(absl::string_view value) const {
  if (graph_.function() != nullptr) return std::nullopt;
  return !graph_.Consumers(value).empty();
}

absl::Status GraphIndexRewriter::Scope::AddNamedConstant(onnx::TensorProto value) {
  if (graph_.graph() == nullptr) {
    return absl::FailedPreconditionError("a function body holds no constants");
  }
  named_.push_back(std::move(value));
  return absl::OkStatus();
}

std::string GraphIndexRewriter::Scope::FreshName(absl::string_view hint) {
  return graph_.FreshName(hint);
}

absl::StatusOr<std::string> GraphIndexRewriter::Scope::AddConstant(onnx::TensorProto&& value) {
  std::string name = FreshName(value.name().empty() ? "const" : value.name());
  value.set_name(name);
  absl::Status added = graph_.AddInitializer(std::move(value));
  if (!added.ok()) return added;
  return name;
}

GraphIndexRewriter::GraphIndexRewriter(GraphIndex& graph, NodeId anchor, TypeLookup types)
    : graph_(graph),
      anchor_(anchor),
      first_anchor_(anchor),
      site_(SiteOf(graph, anchor)),
      indexed_(Snapshot(graph.node(anchor))),
      scope_(graph, std::move(types)),
      rewriter_(edits_, site_, scope_) {}

NodeSite GraphIndexRewriter::SiteOf(GraphIndex& graph, NodeId anchor) {
  onnx::NodeProto* node = graph.mutable_node(anchor);
  // The batch keys its edits by the list holding the anchor.
  auto* graph_proto = const_cast<onnx::GraphProto*>(graph.graph());
  NodeList* list = graph_proto != nullptr
                       ? graph_proto->mutable_node()
                       : const_cast<onnx::FunctionProto*>(graph.function())->mutable_node();
  return {node, graph_proto, list, {}};
}

GraphIndexRewriter::Indexed GraphIndexRewriter::Snapshot(const onnx::NodeProto& node) {
  return {node.domain(), node.op_type()};
}

absl::Status GraphIndexRewriter::Sync() {
  const onnx::NodeProto& node = graph_.node(anchor_);
  if (!edits_.built_subgraphs() && node.domain() == indexed_.domain &&
      node.op_type() == indexed_.op_type && graph_.IndexedWith(anchor_, node)) {
    return absl::OkStatus();
  }
  Indexed now = Snapshot(node);
  absl::StatusOr<std::vector<NodeId>> ids = graph_.ReplaceNode(anchor_, {node});
  if (!ids.ok()) return ids.status();
  anchor_ = ids->front();
  indexed_ = std::move(now);
  return absl::OkStatus();
}

void GraphIndexRewriter::EraseNode(NodeId id) {
  const onnx::NodeProto& node = graph_.node(id);
  erased_ids_.push_back({&node, id});
  rewriter_.EraseNode(node);
}

NodeId GraphIndexRewriter::IdOf(const onnx::NodeProto& node) const {
  for (const auto& [erased, id] : erased_ids_) {
    if (erased == &node) return id;
  }
  for (const std::string& output : node.output()) {
    if (output.empty()) continue;
    ValueSource source = graph_.Producer(output);
    if (source.kind == ValueSource::Kind::kNodeOutput && &graph_.node(source.index) == &node) {
      return source.index;
    }
    break;
  }
  for (NodeId id = 0; id < graph_.node_count(); ++id) {
    if (&graph_.node(id) == &node && graph_.IsLive(id)) return id;
  }
  return kNoNode;
}

absl::Status GraphIndexRewriter::Apply() {
  std::vector<NodeId> erased;
  for (const onnx::NodeProto* node : edits_.Removed()) {
    if (node == site_.node) continue;
    NodeId id = IdOf(*node);
    if (id == kNoNode) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", node->name(), "' to erase is not a node of the graph"));
    }
    erased.push_back(id);
  }
  std::vector<onnx::NodeProto> before = edits_.TakeInserted(site_, /*after=*/false);
  std::vector<onnx::NodeProto> after = edits_.TakeInserted(site_, /*after=*/true);
  for (NodeId id : erased) OC_RETURN_IF_ERROR(graph_.RemoveNode(id));
  OC_RETURN_IF_ERROR(edits_.IsRemoved(site_) ? graph_.RemoveNode(anchor_) : Sync());
  for (onnx::TensorProto& constant : scope_.TakeNamed()) {
    OC_RETURN_IF_ERROR(graph_.AddInitializer(std::move(constant)));
  }
  if (!before.empty()) OC_RETURN_IF_ERROR(graph_.InsertNodes(std::move(before), anchor_).status());
  // After the anchor as first met: an anchor re-indexed by Sync sits just
  // before it.
  if (!after.empty()) {
    OC_RETURN_IF_ERROR(graph_.InsertNodesAfter(first_anchor_, std::move(after)).status());
  }
  for (const auto& [from, to] : edits_.TakeRenames()) {
    OC_RETURN_IF_ERROR(graph_.RenameUses(from, to));
  }
  return absl::OkStatus();
}

absl::Status GraphIndexRewriter::Finish() {
  absl::Status status = Apply();
  if (status.ok()) return status;
  const onnx::NodeProto& first = graph_.node(first_anchor_);
  return absl::Status(status.code(), absl::StrCat("rewriting node '", first.name(), "' (",
                                                  first.op_type(), "): ", status.message()));
}

}  // namespace onnxconvert::ir
