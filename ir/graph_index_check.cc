// GraphIndex::CheckConsistency: whether the index still agrees with the
// graph it indexes (for tests and debugging after edits).

#include "ir/graph_index.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ir/graph_index_internal.h"

namespace onnxconvert {
namespace {

using Kind = ValueSource::Kind;
using graph_index_internal::kHasSubgraphs;

}  // namespace

// ---------------------------------------------------------------------------
// Self-check.

absl::Status GraphIndex::CheckConsistency() const {
  if (nodes().size() != node_count() ||
      static_cast<int>(input_begin_.size()) != node_count() + 1 ||
      static_cast<int>(output_begin_.size()) != node_count() + 1 ||
      static_cast<int>(node_op_.size()) != node_count() ||
      static_cast<int>(graph_output_use_positions_.size()) != graph_output_count() ||
      value_ids_.size() != values_.size()) {
    return OutOfStep("table sizes");
  }
  OC_RETURN_IF_ERROR(CheckLiveOrder());
  for (NodeId node = 0; node < node_count(); ++node) OC_RETURN_IF_ERROR(CheckNode(node));
  for (ValueId value = 0; value < static_cast<ValueId>(values_.size()); ++value) {
    OC_RETURN_IF_ERROR(CheckValue(value));
  }
  for (int i = 0; i < graph_output_count(); ++i) {
    const std::string& name = graph_output_name(i);
    if (name.empty()) continue;
    const ValueId value = Find(name);
    if (value == kNoValue || !HasUseAt(value, graph_output_use_positions_[i],
                                       ValueUse::GraphOutput(i))) {
      return OutOfStep(absl::StrCat("graph output #", i));
    }
  }
  return absl::OkStatus();
}

absl::Status GraphIndex::OutOfStep(absl::string_view what) const {
  return Error(absl::StatusCode::kInternal, absl::StrCat("index out of step: ", what));
}

bool GraphIndex::HasUseAt(ValueId value, int32_t position, ValueUse use) const {
  const auto& uses = values_[value].uses;
  return position >= 0 && position < static_cast<int32_t>(uses.size()) && uses[position] == use;
}

absl::Status GraphIndex::CheckLiveOrder() const {
  std::vector<uint8_t> listed(node_count(), 0);
  int live = 0;
  for (NodeId node : LiveNodes()) {
    if (!IsLive(node) || listed[node]++) return OutOfStep(absl::StrCat("order lists ", node));
    ++live;
  }
  for (NodeId node = 0; node < node_count(); ++node) {
    if (IsLive(node) && !listed[node]) return OutOfStep(absl::StrCat("order misses ", node));
  }
  return live == live_count_ ? absl::OkStatus() : OutOfStep("live node count");
}

absl::Status GraphIndex::CheckNode(NodeId node) const {
  if (!IsLive(node)) {
    if (subgraphs_.contains(node) || subgraph_uses_.contains(node)) {
      return OutOfStep(absl::StrCat("dead node ", node, " keeps subgraphs"));
    }
    return absl::OkStatus();
  }
  const onnx::NodeProto& proto = nodes().Get(node);
  const std::string label = NodeLabel(node);
  if (proto.input_size() != input_count(node) || proto.output_size() != output_count(node)) {
    return OutOfStep(absl::StrCat(label, ": input or output count"));
  }
  for (int slot = 0; slot < proto.input_size(); ++slot) {
    const int at = input_begin_[node] + slot;
    const ValueId value = input_values_[at];
    if (value != Find(proto.input(slot)) ||
        (value != kNoValue &&
         !HasUseAt(value, input_use_positions_[at], ValueUse::Input(node, slot)))) {
      return OutOfStep(absl::StrCat(label, ": input ", slot));
    }
  }
  for (int slot = 0; slot < proto.output_size(); ++slot) {
    const ValueId value = output_values_[output_begin_[node] + slot];
    if (value != Find(proto.output(slot)) ||
        (value != kNoValue &&
         !(values_[value].source == ValueSource{Kind::kNodeOutput, node, slot}))) {
      return OutOfStep(absl::StrCat(label, ": output ", slot));
    }
  }
  const std::vector<NodeId>& members = op_nodes_[node_op_[node]];
  if (!std::binary_search(members.begin(), members.end(), node) ||
      op_ids_.at(OpKeyView{CanonicalDomain(proto.domain()), proto.op_type()}) !=
          node_op_[node]) {
    return OutOfStep(absl::StrCat(label, ": operator"));
  }
  return CheckSubgraphsOf(node);
}

absl::Status GraphIndex::CheckSubgraphsOf(NodeId node) const {
  const std::string label = NodeLabel(node);
  std::vector<const onnx::GraphProto*> attribute_graphs;
  for (const onnx::AttributeProto& attribute : nodes().Get(node).attribute()) {
    if (attribute.has_g()) attribute_graphs.push_back(&attribute.g());
    for (const onnx::GraphProto& graph : attribute.graphs()) attribute_graphs.push_back(&graph);
  }
  const std::vector<const GraphIndex*> children = Subgraphs(node);
  if (children.size() != attribute_graphs.size() ||
      ((node_flags_[node] & kHasSubgraphs) != 0) != !children.empty()) {
    return OutOfStep(absl::StrCat(label, ": subgraph count"));
  }
  // Each name free in k of the subgraphs is one use, counted k times.
  absl::flat_hash_map<absl::string_view, int32_t> free_counts;
  for (size_t k = 0; k < children.size(); ++k) {
    const GraphIndex& child = *children[k];
    if (child.graph_ != attribute_graphs[k] || child.parent_ != this || child.owner_ != node ||
        !child.reports_to_parent_ || child.depth_ != depth_ + 1) {
      return OutOfStep(absl::StrCat(label, ": link of subgraph ", k));
    }
    for (absl::string_view name : child.FreeNames()) ++free_counts[name];
  }
  auto uses = subgraph_uses_.find(node);
  const size_t recorded = uses == subgraph_uses_.end() ? 0 : uses->second.size();
  if (recorded != free_counts.size()) return OutOfStep(absl::StrCat(label, ": subgraph uses"));
  if (recorded == 0) return absl::OkStatus();
  for (const auto& [value, use] : uses->second) {
    auto count = free_counts.find(values_[value].name);
    if (count == free_counts.end() || count->second != use.graphs ||
        !HasUseAt(value, use.use_position, ValueUse::Subgraph(node))) {
      return OutOfStep(absl::StrCat(label, ": subgraph use of '", values_[value].name, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status GraphIndex::CheckValue(ValueId value) const {
  const ValueRecord& record = values_[value];
  if (Find(record.name) != value) return OutOfStep(absl::StrCat("name of '", record.name, "'"));
  if (!SourceMatches(value)) return OutOfStep(absl::StrCat("source of '", record.name, "'"));
  for (int32_t position = 0; position < static_cast<int32_t>(record.uses.size()); ++position) {
    if (!UsePointsBack(value, position)) {
      return OutOfStep(absl::StrCat("use #", position, " of '", record.name, "'"));
    }
  }
  return absl::OkStatus();
}

bool GraphIndex::SourceMatches(ValueId value) const {
  const ValueSource& source = values_[value].source;
  const absl::string_view name = values_[value].name;
  switch (source.kind) {
    case Kind::kUndefined:
      return true;
    case Kind::kGraphInput:
      return function_ != nullptr ? function_->input(source.index) == name
                                  : graph_->input(source.index).name() == name;
    case Kind::kInitializer:
      return graph_ != nullptr && graph_->initializer(source.index).name() == name;
    case Kind::kSparseInitializer:
      return graph_ != nullptr &&
             graph_->sparse_initializer(source.index).values().name() == name;
    case Kind::kNodeOutput:
      return IsLive(source.index) && source.slot < output_count(source.index) &&
             output_values_[output_begin_[source.index] + source.slot] == value;
    case Kind::kOuterScope:
      return false;  // never stored
  }
  return false;
}

bool GraphIndex::UsePointsBack(ValueId value, int32_t position) const {
  const ValueUse& use = values_[value].uses[position];
  if (use.is_input()) {
    const int at = input_begin_[use.node] + use.slot;
    return IsLive(use.node) && use.slot < input_count(use.node) && input_values_[at] == value &&
           input_use_positions_[at] == position;
  }
  if (use.is_subgraph()) {
    auto uses = subgraph_uses_.find(use.node);
    if (!IsLive(use.node) || uses == subgraph_uses_.end()) return false;
    auto it = uses->second.find(value);
    return it != uses->second.end() && it->second.use_position == position;
  }
  return use.slot < graph_output_count() && graph_output_name(use.slot) == values_[value].name &&
         graph_output_use_positions_[use.slot] == position;
}

}  // namespace onnxconvert
