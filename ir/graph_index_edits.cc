// GraphIndex edits (inserting, replacing and removing nodes, rewiring
// inputs and outputs, initializers) and ordering: the stable topological
// order, cycle errors, and committing the order back to the graph.

#include "ir/graph_index.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ir/graph_index_internal.h"

namespace onnxconvert {
namespace {

using Kind = ValueSource::Kind;
using graph_index_internal::kHasSubgraphs;
using graph_index_internal::kHasInsertionsBefore;
using graph_index_internal::kHasInsertionsAfter;
using graph_index_internal::kHasInsertions;
using graph_index_internal::RoomFor;

// Steps of a cycle spelled out in an error; longer cycles are cut short.
constexpr int kMaxCycleStepsShown = 16;

}  // namespace

// ---------------------------------------------------------------------------
// Edits.

absl::Status GraphIndex::CheckKnown(NodeId node) const {
  if (node >= 0 && node < node_count()) return absl::OkStatus();
  return Error(absl::StatusCode::kInvalidArgument,
               absl::StrCat("node id ", node, " is not a node of this graph"));
}

absl::Status GraphIndex::CheckLive(NodeId node) const {
  if (IsLive(node)) return absl::OkStatus();
  return Error(absl::StatusCode::kInvalidArgument,
               absl::StrCat("node id ", node, " is not a live node of this graph"));
}

absl::Status GraphIndex::CheckNewOutputs(absl::Span<const onnx::NodeProto> nodes,
                                         NodeId replaced) const {
  auto label = [&](int k) {
    const onnx::NodeProto& node = nodes[k];
    return node.name().empty()
               ? absl::StrCat("new node #", k, " (", node.op_type(), ")")
               : absl::StrCat("new node '", node.name(), "' (", node.op_type(), ")");
  };
  absl::flat_hash_map<absl::string_view, int> batch_producers;
  for (int k = 0; k < static_cast<int>(nodes.size()); ++k) {
    for (const std::string& name : nodes[k].output()) {
      if (name.empty()) continue;
      auto [it, inserted] = batch_producers.try_emplace(name, k);
      if (!inserted) {
        return Error(absl::StatusCode::kInvalidArgument,
                     absl::StrCat("value '", name, "' is produced twice: by ", label(it->second),
                                  " and by ", label(k)));
      }
      const ValueId value = Find(name);
      if (value == kNoValue) continue;
      const ValueSource& source = values_[value].source;
      const bool replaced_output = source.kind == Kind::kNodeOutput && source.index == replaced;
      if (source.is_defined() && !replaced_output) {
        return Error(absl::StatusCode::kAlreadyExists,
                     absl::StrCat("value '", name, "' is produced twice: by ", Describe(source),
                                  " and by ", label(k)));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GraphIndex::PreparedNodes> GraphIndex::PrepareNodes(
    std::vector<onnx::NodeProto> new_nodes, NodeId replaced) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto>& list = nodes();
  if (list.size() != node_count()) {
    return Error(absl::StatusCode::kFailedPrecondition,
                 "the node list was changed behind the index's back");
  }
  OC_RETURN_IF_ERROR(CheckNewOutputs(new_nodes, replaced));
  PreparedNodes prepared;
  prepared.first = list.size();
  const int count = static_cast<int>(new_nodes.size());
  for (onnx::NodeProto& node : new_nodes) *list.Add() = std::move(node);
  for (int k = 0; k < count; ++k) {
    absl::StatusOr<std::vector<std::unique_ptr<GraphIndex>>> subgraphs =
        BuildSubgraphs(prepared.first + k);
    if (!subgraphs.ok()) {
      prepared.subgraphs.clear();
      list.DeleteSubrange(prepared.first, count);
      return subgraphs.status();
    }
    prepared.subgraphs.push_back(*std::move(subgraphs));
  }
  return prepared;
}

absl::StatusOr<std::vector<NodeId>> GraphIndex::RegisterPrepared(PreparedNodes prepared,
                                                                 NodeId before, bool place) {
  std::vector<NodeId> ids;
  ids.reserve(prepared.subgraphs.size());
  for (size_t k = 0; k < prepared.subgraphs.size(); ++k) {
    const NodeId id = prepared.first + static_cast<NodeId>(k);
    // Outputs were checked by CheckNewOutputs; this cannot fail.
    OC_RETURN_IF_ERROR(RegisterNode(id, std::move(prepared.subgraphs[k])));
    if (place) InsertBefore(id, before);
    LogNode(id);
    names_->Note(node(id).name());
    ids.push_back(id);
  }
  if (!ids.empty()) order_may_change_ = true;
  return ids;
}

absl::StatusOr<std::vector<NodeId>> GraphIndex::InsertNodes(std::vector<onnx::NodeProto> nodes,
                                                            NodeId before) {
  if (before != kNoNode) OC_RETURN_IF_ERROR(CheckKnown(before));
  OC_ASSIGN_OR_RETURN(PreparedNodes prepared, PrepareNodes(std::move(nodes), kNoNode));
  return RegisterPrepared(std::move(prepared), before);
}

absl::StatusOr<std::vector<NodeId>> GraphIndex::InsertNodesAfter(NodeId after,
                                                                 std::vector<onnx::NodeProto> nodes) {
  OC_RETURN_IF_ERROR(CheckKnown(after));
  OC_ASSIGN_OR_RETURN(PreparedNodes prepared, PrepareNodes(std::move(nodes), kNoNode));
  OC_ASSIGN_OR_RETURN(std::vector<NodeId> ids, RegisterPrepared(std::move(prepared), kNoNode,
                                                                /*place=*/false));
  std::vector<NodeId>& slot = inserted_after_[after];
  slot.insert(slot.end(), ids.begin(), ids.end());
  node_flags_[after] |= kHasInsertionsAfter;
  return ids;
}

absl::StatusOr<std::vector<NodeId>> GraphIndex::ReplaceNode(NodeId node,
                                                            std::vector<onnx::NodeProto> nodes) {
  OC_RETURN_IF_ERROR(CheckLive(node));
  OC_ASSIGN_OR_RETURN(PreparedNodes prepared, PrepareNodes(std::move(nodes), node));
  Unindex(node);
  // The dead node keeps its place as an anchor for what replaces it.
  return RegisterPrepared(std::move(prepared), node);
}

absl::Status GraphIndex::RemoveNode(NodeId node) {
  OC_RETURN_IF_ERROR(CheckLive(node));
  Unindex(node);
  return absl::OkStatus();
}

void GraphIndex::LogNode(NodeId id) {
  if (edit_log_ == nullptr) return;
  for (int i = input_begin_[id]; i < input_begin_[id + 1]; ++i) LogValue(input_values_[i]);
  for (int i = output_begin_[id]; i < output_begin_[id + 1]; ++i) LogValue(output_values_[i]);
}

void GraphIndex::Unindex(NodeId node) {
  LogNode(node);
  for (int i = output_begin_[node]; i < output_begin_[node + 1]; ++i) {
    if (output_values_[i] == kNoValue) continue;
    SetSource(output_values_[i], ValueSource{});
    output_values_[i] = kNoValue;
  }
  for (int i = input_begin_[node]; i < input_begin_[node + 1]; ++i) {
    if (input_values_[i] == kNoValue) continue;
    RemoveUse(input_values_[i], input_use_positions_[i]);
    input_values_[i] = kNoValue;
  }
  if (node_flags_[node] & kHasSubgraphs) {
    auto children = subgraphs_.find(node);
    for (const std::unique_ptr<GraphIndex>& child : children->second) {
      child->reports_to_parent_ = false;
    }
    if (auto uses = subgraph_uses_.find(node); uses != subgraph_uses_.end()) {
      const std::map<ValueId, SubgraphUse> removed = std::move(uses->second);
      subgraph_uses_.erase(uses);
      for (const auto& [value, use] : removed) RemoveUse(value, use.use_position);
    }
    subgraphs_.erase(children);
  }
  node_flags_[node] &= kHasInsertions;
  --live_count_;
  order_may_change_ = true;
}

bool GraphIndex::IndexedWith(NodeId id, const onnx::NodeProto& node) const {
  if (input_count(id) != node.input_size() || output_count(id) != node.output_size()) {
    return false;
  }
  auto same = [&](ValueId value, const std::string& name) {
    return value == kNoValue ? name.empty() : values_[value].name == name;
  };
  for (int slot = 0; slot < node.input_size(); ++slot) {
    if (!same(input_values_[input_begin_[id] + slot], node.input(slot))) return false;
  }
  for (int slot = 0; slot < node.output_size(); ++slot) {
    if (!same(output_values_[output_begin_[id] + slot], node.output(slot))) return false;
  }
  return true;
}

absl::Status GraphIndex::SetInput(NodeId node, int slot, absl::string_view value) {
  OC_RETURN_IF_ERROR(CheckLive(node));
  if (slot < 0 || slot >= input_count(node)) {
    return Error(absl::StatusCode::kOutOfRange,
                 absl::StrCat(NodeLabel(node), " has ", input_count(node), " inputs, not slot ",
                              slot));
  }
  const ValueId before = input_values_[input_begin_[node] + slot];
  SetInputValue(node, slot, value);
  const ValueId after = input_values_[input_begin_[node] + slot];
  LogValue(before);
  LogValue(after);
  if (move_log_ != nullptr) move_log_->emplace_back(before, after);
  order_may_change_ = true;
  return absl::OkStatus();
}

void GraphIndex::SetInputValue(NodeId node, int slot, absl::string_view value) {
  if (value.empty()) {
    const int at = input_begin_[node] + slot;
    if (input_values_[at] != kNoValue) RemoveUse(input_values_[at], input_use_positions_[at]);
    nodes().Mutable(node)->set_input(slot, "");
    input_values_[at] = kNoValue;
    input_use_positions_[at] = -1;
    return;
  }
  // Interned first: `value` may view the string being replaced.
  SetInputValue(node, slot, Intern(value));
}

void GraphIndex::SetInputValue(NodeId node, int slot, ValueId value) {
  const int at = input_begin_[node] + slot;
  if (input_values_[at] != kNoValue) RemoveUse(input_values_[at], input_use_positions_[at]);
  const absl::string_view name = values_[value].name;
  nodes().Mutable(node)->set_input(slot, name.data(), name.size());
  input_values_[at] = value;
  input_use_positions_[at] = AddUse(value, ValueUse::Input(node, slot));
}

void GraphIndex::SetGraphOutput(int position, absl::string_view value) {
  const std::string name(value);
  const ValueId old = Find(graph_output_name(position));
  if (old != kNoValue) RemoveUse(old, graph_output_use_positions_[position]);
  if (function_ != nullptr) {
    function_->set_output(position, name);
  } else {
    graph_->mutable_output(position)->set_name(name);
  }
  graph_output_use_positions_[position] = AddUse(Intern(name), ValueUse::GraphOutput(position));
}

absl::Status GraphIndex::RenameUses(absl::string_view from, absl::string_view to) {
  if (to.empty()) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("cannot rename the uses of '", from, "' to an empty name"));
  }
  const std::string from_name(from);
  const std::string to_name(to);
  if (from_name == to_name) return absl::OkStatus();
  // Only a subgraph can refuse the rename.
  if (!subgraphs_.empty()) OC_RETURN_IF_ERROR(CheckRenameInSubgraphs(from_name, to_name));
  const ValueId from_value = Find(from_name);
  if (from_value != kNoValue) {
    RenameUsesOf(from_value, from_name, to_name, /*graph_outputs=*/false);
  }
  // `to` has a number once a use moved to it (none: nothing moved).
  const ValueId to_value = Find(to_name);
  LogValue(from_value);
  LogValue(to_value);
  if (move_log_ != nullptr && from_value != kNoValue) {
    move_log_->emplace_back(from_value, to_value);
  }
  return absl::OkStatus();
}

absl::Status GraphIndex::CheckRenameInSubgraphs(absl::string_view from,
                                                absl::string_view to) const {
  const ValueId value = Find(from);
  if (value == kNoValue) return absl::OkStatus();
  for (const ValueUse& use : values_[value].uses) {
    if (!use.is_subgraph()) continue;
    for (const std::unique_ptr<GraphIndex>& child : subgraphs_.at(use.node)) {
      const ValueId inner = child->Find(from);
      if (inner == kNoValue || !IsFree(child->values_[inner])) continue;
      const ValueId target = child->Find(to);
      if (target != kNoValue && child->values_[target].source.is_defined()) {
        return child->Error(absl::StatusCode::kFailedPrecondition,
                            absl::StrCat("cannot rename the uses of '", from, "' to '", to,
                                         "': this graph defines its own '", to, "'"));
      }
      OC_RETURN_IF_ERROR(child->CheckRenameInSubgraphs(from, to));
    }
  }
  return absl::OkStatus();
}

void GraphIndex::RenameUsesOf(ValueId value, absl::string_view from, absl::string_view to,
                              bool graph_outputs) {
  // Renaming edits this list; walk a copy.
  const absl::InlinedVector<ValueUse, 4> uses(values_[value].uses.begin(),
                                              values_[value].uses.end());
  ValueId target = kNoValue;  // interned at the first input moved
  for (const ValueUse& use : uses) {
    if (use.is_input()) {
      if (target == kNoValue) target = Intern(to);
      SetInputValue(use.node, use.slot, target);
    } else if (use.is_subgraph()) {
      for (const std::unique_ptr<GraphIndex>& child : subgraphs_.at(use.node)) {
        const ValueId inner = child->Find(from);
        if (inner != kNoValue && IsFree(child->values_[inner])) {
          child->RenameUsesOf(inner, from, to, /*graph_outputs=*/true);
        }
      }
    } else if (graph_outputs) {
      SetGraphOutput(use.slot, to);
    }
  }
  order_may_change_ = true;
}

absl::Status GraphIndex::AddInitializer(onnx::TensorProto tensor) {
  if (function_ != nullptr) {
    return Error(absl::StatusCode::kFailedPrecondition,
                 "a function has no initializers; insert a Constant node instead");
  }
  if (tensor.name().empty()) {
    return Error(absl::StatusCode::kInvalidArgument, "an initializer needs a name");
  }
  const ValueId existing = Find(tensor.name());
  if (existing != kNoValue && values_[existing].source.is_defined()) {
    return Error(absl::StatusCode::kAlreadyExists,
                 absl::StrCat("cannot add initializer '", tensor.name(), "': already produced by ",
                              Describe(values_[existing].source)));
  }
  const int index = graph_->initializer_size();
  onnx::TensorProto* added = graph_->add_initializer();
  *added = std::move(tensor);
  const ValueId value = Intern(added->name());
  SetSource(value, ValueSource{Kind::kInitializer, index, -1});
  LogValue(value);
  return absl::OkStatus();
}

void GraphIndex::InsertBefore(NodeId node, NodeId anchor) {
  inserted_before_[anchor].push_back(node);
  if (anchor != kNoNode) node_flags_[anchor] |= kHasInsertionsBefore;
}

// ---------------------------------------------------------------------------
// Order.

absl::Status GraphIndex::CheckInputsDefined(NodeId node) const {
  auto check = [&](ValueId value) -> absl::Status {
    if (values_[value].source.is_defined() || IsVisibleOutside(value)) return absl::OkStatus();
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat(NodeLabel(node), " uses '", values_[value].name,
                              "', which nothing defines",
                              parent_ != nullptr ? " here or in an enclosing graph" : ""));
  };
  for (int i = input_begin_[node]; i < input_begin_[node + 1]; ++i) {
    if (input_values_[i] != kNoValue) OC_RETURN_IF_ERROR(check(input_values_[i]));
  }
  if ((node_flags_[node] & kHasSubgraphs) == 0) return absl::OkStatus();
  auto uses = subgraph_uses_.find(node);
  if (uses == subgraph_uses_.end()) return absl::OkStatus();
  for (const auto& [value, use] : uses->second) OC_RETURN_IF_ERROR(check(value));
  return absl::OkStatus();
}

template <typename Fn>
void GraphIndex::ForEachDependency(NodeId node, Fn&& fn) const {
  auto depend = [&](ValueId value) {
    const ValueSource& source = values_[value].source;
    if (source.kind == Kind::kNodeOutput) fn(source.index, value);
  };
  for (int i = input_begin_[node]; i < input_begin_[node + 1]; ++i) {
    if (input_values_[i] != kNoValue) depend(input_values_[i]);
  }
  if ((node_flags_[node] & kHasSubgraphs) == 0) return;
  auto uses = subgraph_uses_.find(node);
  if (uses == subgraph_uses_.end()) return;
  for (const auto& [value, use] : uses->second) depend(value);
}

absl::Status GraphIndex::CheckGraphOutputsDefined() const {
  for (int i = 0; i < graph_output_count(); ++i) {
    const ValueId value = Find(graph_output_name(i));
    if (value == kNoValue || values_[value].source.is_defined() || IsVisibleOutside(value)) {
      continue;
    }
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("graph output #", i, " '", values_[value].name,
                              "' is not defined by any node, input or initializer"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NodeId>> GraphIndex::StableOrder(
    absl::Span<const NodeId> sequence) const {
  const int total = node_count();
  // Edges producer -> consumer, as CSR: dependents of p in [begin[p], begin[p+1]).
  std::vector<int32_t> waiting(total, 0);
  std::vector<int32_t> begin(total + 1, 0);
  for (NodeId node : sequence) {
    OC_RETURN_IF_ERROR(CheckInputsDefined(node));
    ForEachDependency(node, [&](NodeId producer, ValueId) {
      ++waiting[node];
      ++begin[producer + 1];
    });
  }
  OC_RETURN_IF_ERROR(CheckGraphOutputsDefined());
  for (int i = 0; i < total; ++i) begin[i + 1] += begin[i];
  std::vector<NodeId> dependents(begin[total]);
  std::vector<int32_t> fill(begin.begin(), begin.end() - 1);
  for (NodeId node : sequence) {
    ForEachDependency(node, [&](NodeId producer, ValueId) { dependents[fill[producer]++] = node; });
  }

  // Kahn's algorithm, taking nodes in sequence order: a node whose producers
  // are all out is emitted when reached; one reached earlier than its last
  // producer is emitted right after that producer. A valid sequence comes
  // out unchanged.
  std::vector<uint8_t> reached(total, 0);
  std::vector<uint8_t> emitted(total, 0);
  std::vector<NodeId> order;
  order.reserve(sequence.size());
  std::vector<NodeId> ready;
  for (NodeId node : sequence) {
    reached[node] = 1;
    if (waiting[node] != 0) continue;
    ready.assign(1, node);
    for (size_t r = 0; r < ready.size(); ++r) {
      const NodeId next = ready[r];
      emitted[next] = 1;
      order.push_back(next);
      for (int e = begin[next]; e < begin[next + 1]; ++e) {
        const NodeId dependent = dependents[e];
        if (--waiting[dependent] == 0 && reached[dependent]) ready.push_back(dependent);
      }
    }
  }
  if (order.size() != sequence.size()) return CycleError(sequence, emitted);
  return order;
}

absl::Status GraphIndex::CycleError(absl::Span<const NodeId> sequence,
                                    const std::vector<uint8_t>& emitted) const {
  // Each node left out waits for a producer also left out. Following those
  // links from any of them must come back to a node already on the path.
  NodeId current = kNoNode;
  for (NodeId node : sequence) {
    if (!emitted[node]) {
      current = node;
      break;
    }
  }
  std::vector<int32_t> on_path(node_count(), -1);
  std::vector<std::pair<NodeId, ValueId>> path;  // a node and the value it waits for
  while (current != kNoNode && on_path[current] < 0) {
    on_path[current] = static_cast<int32_t>(path.size());
    NodeId producer = kNoNode;
    ValueId via = kNoValue;
    ForEachDependency(current, [&](NodeId candidate, ValueId value) {
      if (producer == kNoNode && !emitted[candidate]) {
        producer = candidate;
        via = value;
      }
    });
    path.push_back({current, via});
    current = producer;
  }
  if (current == kNoNode) {
    return Error(absl::StatusCode::kInternal, "the nodes have no valid order");
  }
  const std::vector<std::pair<NodeId, ValueId>> cycle(path.begin() + on_path[current],
                                                       path.end());
  std::string message = absl::StrCat("the nodes form a cycle: ", NodeLabel(cycle[0].first));
  const int shown = std::min<int>(cycle.size(), kMaxCycleStepsShown);
  for (int i = 0; i < shown; ++i) {
    const NodeId producer = cycle[(i + 1) % cycle.size()].first;
    absl::StrAppend(&message, i == 0 ? "" : ", which", " uses '", values_[cycle[i].second].name,
                    "' from ", NodeLabel(producer));
  }
  if (shown < static_cast<int>(cycle.size())) {
    absl::StrAppend(&message, ", ... (", cycle.size(), " nodes in all)");
  }
  return Error(absl::StatusCode::kInvalidArgument, message);
}

absl::StatusOr<std::vector<NodeId>> GraphIndex::TopologicalOrder() const {
  return StableOrder(LiveNodes());
}

absl::Status GraphIndex::CheckOrder() const {
  std::vector<uint8_t> seen(node_count(), 0);
  for (NodeId node : LiveNodes()) {
    OC_RETURN_IF_ERROR(CheckInputsDefined(node));
    absl::Status status;
    ForEachDependency(node, [&](NodeId producer, ValueId value) {
      if (!status.ok() || seen[producer]) return;
      status = Error(absl::StatusCode::kInvalidArgument,
                     producer == node
                         ? absl::StrCat(NodeLabel(node), " uses its own output '",
                                        values_[value].name, "'")
                         : absl::StrCat(NodeLabel(node), " uses '", values_[value].name,
                                        "' before it is defined: ", NodeLabel(producer),
                                        " produces it later"));
    });
    OC_RETURN_IF_ERROR(status);
    seen[node] = 1;
  }
  return CheckGraphOutputsDefined();
}

absl::Status GraphIndex::Commit(std::vector<NodeId>* new_ids) {
  if (!order_may_change_) {
    if (new_ids != nullptr) {
      new_ids->resize(node_count());
      for (NodeId node = 0; node < node_count(); ++node) (*new_ids)[node] = node;
    }
    return absl::OkStatus();
  }
  if (nodes().size() != node_count()) {
    return Error(absl::StatusCode::kFailedPrecondition,
                 "the node list was changed behind the index's back");
  }
  OC_ASSIGN_OR_RETURN(const std::vector<NodeId> order, StableOrder(LiveNodes()));
  Renumber(order, new_ids);
  return absl::OkStatus();
}

void GraphIndex::Renumber(absl::Span<const NodeId> order, std::vector<NodeId>* new_ids) {
  std::vector<NodeId> new_id(node_count(), kNoNode);
  for (int k = 0; k < static_cast<int>(order.size()); ++k) new_id[order[k]] = k;
  ReorderNodeList(order, new_id);
  RenumberNodeArrays(order);
  RenumberOwners(new_id);
  RebuildUses();
  for (std::vector<NodeId>& members : op_nodes_) members.clear();
  for (NodeId node = 0; node < node_count(); ++node) op_nodes_[node_op_[node]].push_back(node);
  live_count_ = committed_count_ = node_count();
  inserted_before_.clear();
  inserted_after_.clear();
  order_may_change_ = false;
  if (new_ids != nullptr) *new_ids = std::move(new_id);
}

void GraphIndex::ReorderNodeList(absl::Span<const NodeId> order,
                                 const std::vector<NodeId>& new_id) {
  // Live nodes in order, then the dead ones, which go.
  google::protobuf::RepeatedPtrField<onnx::NodeProto>& list = nodes();
  const std::vector<onnx::NodeProto*> old(list.pointer_begin(), list.pointer_end());
  auto slots = list.pointer_begin();
  int write = 0;
  for (NodeId node : order) slots[write++] = old[node];
  for (NodeId node = 0; node < static_cast<NodeId>(old.size()); ++node) {
    if (new_id[node] == kNoNode) slots[write++] = old[node];
  }
  list.DeleteSubrange(static_cast<int>(order.size()), list.size() - static_cast<int>(order.size()));
}

void GraphIndex::RenumberNodeArrays(absl::Span<const NodeId> order) {
  const size_t room = RoomFor(order.size());
  std::vector<uint8_t> flags;
  std::vector<int32_t> ops;
  std::vector<int32_t> input_begin = {0};
  std::vector<int32_t> output_begin = {0};
  std::vector<ValueId> input_values;
  std::vector<ValueId> output_values;
  flags.reserve(room);
  ops.reserve(room);
  input_begin.reserve(room + 1);
  output_begin.reserve(room + 1);
  input_values.reserve(input_values_.size() + room);
  output_values.reserve(output_values_.size() + room);
  for (NodeId node : order) {
    flags.push_back(node_flags_[node] & ~kHasInsertions);
    ops.push_back(node_op_[node]);
    input_values.insert(input_values.end(), input_values_.begin() + input_begin_[node],
                        input_values_.begin() + input_begin_[node + 1]);
    output_values.insert(output_values.end(), output_values_.begin() + output_begin_[node],
                         output_values_.begin() + output_begin_[node + 1]);
    input_begin.push_back(static_cast<int32_t>(input_values.size()));
    output_begin.push_back(static_cast<int32_t>(output_values.size()));
  }
  node_flags_ = std::move(flags);
  node_op_ = std::move(ops);
  input_begin_ = std::move(input_begin);
  output_begin_ = std::move(output_begin);
  input_values_ = std::move(input_values);
  output_values_ = std::move(output_values);
  input_use_positions_.reserve(input_values_.capacity());
  input_use_positions_.assign(input_values_.size(), -1);
}

void GraphIndex::RenumberOwners(const std::vector<NodeId>& new_id) {
  for (NodeId node = 0; node < node_count(); ++node) {
    for (int i = output_begin_[node]; i < output_begin_[node + 1]; ++i) {
      if (output_values_[i] != kNoValue) values_[output_values_[i]].source.index = node;
    }
  }
  std::map<NodeId, std::vector<std::unique_ptr<GraphIndex>>> subgraphs;
  for (auto& [node, children] : subgraphs_) {
    for (const std::unique_ptr<GraphIndex>& child : children) child->owner_ = new_id[node];
    subgraphs.emplace(new_id[node], std::move(children));
  }
  subgraphs_ = std::move(subgraphs);
  absl::flat_hash_map<NodeId, std::map<ValueId, SubgraphUse>> subgraph_uses;
  subgraph_uses.reserve(subgraph_uses_.size());
  for (auto& [node, uses] : subgraph_uses_) subgraph_uses.emplace(new_id[node], std::move(uses));
  subgraph_uses_ = std::move(subgraph_uses);
}

void GraphIndex::RebuildUses() {
  // In graph order, as Build lists them. Which values are free is unchanged.
  for (ValueRecord& record : values_) record.uses.resize(0);
  auto push = [&](ValueId value, ValueUse use) {
    values_[value].uses.push_back(use);
    return static_cast<int32_t>(values_[value].uses.size()) - 1;
  };
  for (NodeId node = 0; node < node_count(); ++node) {
    for (int i = input_begin_[node]; i < input_begin_[node + 1]; ++i) {
      if (input_values_[i] == kNoValue) continue;
      input_use_positions_[i] =
          push(input_values_[i], ValueUse::Input(node, i - input_begin_[node]));
    }
    if ((node_flags_[node] & kHasSubgraphs) == 0) continue;
    auto uses = subgraph_uses_.find(node);
    if (uses == subgraph_uses_.end()) continue;
    for (auto& [value, use] : uses->second) {
      use.use_position = push(value, ValueUse::Subgraph(node));
    }
  }
  for (int i = 0; i < graph_output_count(); ++i) {
    const ValueId value = Find(graph_output_name(i));
    if (value != kNoValue) graph_output_use_positions_[i] = push(value, ValueUse::GraphOutput(i));
  }
}

}  // namespace onnxconvert
