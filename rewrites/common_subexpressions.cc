// common-subexpressions: two deterministic nodes of one graph with the same
// op, inputs and attributes compute the same values; the uses of the later
// one's outputs move to the earlier one's and the later one goes (its
// outputs must not be graph outputs). Nodes with subgraphs and
// non-deterministic ones (Random*, Dropout in training) are never merged.
// Initializers holding the same tensor (type, dims and data) are shared the
// same way; the copy left unused is pruned.

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "base/op_key.h"
#include "base/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "eval/evaluator.h"
#include "ir/graph_index_rewriter.h"
#include "rewrites/pass.h"

namespace onnxconvert::rewrites {
namespace {

// What identifies a node's computation: domain, op, inputs, attributes and
// the number of outputs; "" for a node that must not be merged.
std::string NodeKey(const onnx::NodeProto& node) {
  if (HasSubgraphs(node) || !eval::IsDeterministic(node.domain(), node.op_type())) return "";
  std::string key = absl::StrCat(OpKey(node.domain(), node.op_type()), kKeySeparator,
                                 node.output_size(), kKeySeparator);
  for (const std::string& input : node.input()) absl::StrAppend(&key, input, "\x1e");
  absl::StrAppend(&key, kKeySeparator);
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    key += attribute.SerializeAsString();
  }
  return key;
}

// A hash of the data `tensor` holds (raw bytes hashed in place; typed
// fields through a transient serialization of the tensor without them
// named), for finding initializers that may be equal.
size_t TensorFingerprint(const onnx::TensorProto& tensor) {
  if (tensor.has_raw_data()) return absl::HashOf(absl::string_view(tensor.raw_data()));
  onnx::TensorProto unnamed = tensor;
  unnamed.clear_name();
  unnamed.clear_doc_string();
  return absl::HashOf(unnamed.SerializeAsString());
}

// Compares tensors field by field, names and doc strings aside (nothing
// copied). Not thread-safe: one per pass run.
class TensorComparer {
 public:
  TensorComparer() {
    const google::protobuf::Descriptor* descriptor = onnx::TensorProto::descriptor();
    differencer_.IgnoreField(descriptor->FindFieldByName("name"));
    differencer_.IgnoreField(descriptor->FindFieldByName("doc_string"));
  }
  // Whether `a` and `b` hold the same tensor.
  bool Same(const onnx::TensorProto& a, const onnx::TensorProto& b) {
    return differencer_.Compare(a, b);
  }

 private:
  google::protobuf::util::MessageDifferencer differencer_;
};

// Moves the uses of every output of node `later` to the outputs of
// `earlier` and removes it; false when an output is a graph output.
absl::StatusOr<bool> Merge(GraphIndex& graph, NodeId earlier, NodeId later) {
  const onnx::NodeProto& kept = graph.node(earlier);
  const onnx::NodeProto& gone = graph.node(later);
  for (const std::string& output : gone.output()) {
    if (!output.empty() && IsGraphOutput(graph, output)) return false;
  }
  for (int i = 0; i < gone.output_size(); ++i) {
    if (gone.output(i).empty()) continue;
    if (kept.output(i).empty()) return false;  // the earlier node does not compute it
  }
  ir::GraphIndexRewriter rewrite(graph, later);
  ir::Rewriter& r = rewrite.rewriter();
  r.RemoveAnchor();
  for (int i = 0; i < gone.output_size(); ++i) {
    if (!gone.output(i).empty()) r.ReplaceAllUses(gone.output(i), kept.output(i));
  }
  OC_RETURN_IF_ERROR(rewrite.Finish());
  return true;
}

// Merge, counted in `stats` and recorded for the report when it merges.
absl::StatusOr<bool> MergeCounted(const PassContext& context, GraphIndex& graph,
                                  NodeId kept, NodeId gone, PassStats& stats) {
  const bool recorded = stats.WantsRecord(context.options());
  RewriteRecord record;
  if (recorded) {
    record = {graph.path(), "merge", NodesText({&graph.node(kept), &graph.node(gone)}),
              NodesText({&graph.node(kept)})};
  }
  OC_ASSIGN_OR_RETURN(bool merged, Merge(graph, kept, gone));
  if (!merged) return false;
  if (recorded) stats.Record(context.options(), std::move(record));
  ++stats.matches;
  ++stats.nodes_removed;
  return true;
}

// Whether another node may compute what node `id` does: one without
// inputs, or another node of its op reading its first input there. Most
// nodes of a large graph fail this without a key being built.
bool MayRepeat(const GraphIndex& graph, NodeId id) {
  const onnx::NodeProto& node = graph.node(id);
  if (node.input_size() == 0 || node.input(0).empty()) return true;
  // A node's output: its readers by the index's ids, not by its name.
  const ValueSource source = graph.InputProducer(id, 0);
  const absl::Span<const ValueUse> uses = source.kind == ValueSource::Kind::kNodeOutput
                                              ? graph.OutputConsumers(source.index, source.slot)
                                              : graph.Consumers(node.input(0));
  for (const ValueUse& use : uses) {
    if (use.is_input() && use.slot == 0 && use.node != id &&
        graph.node(use.node).op_type() == node.op_type()) {
      return true;
    }
  }
  return false;
}

// MergeNodes on the nodes of the focus only: a node merges into the
// first node (in the order MergeNodes visits them) with its key, found
// among the other users of its first input or, without inputs, the nodes
// of its op.
absl::StatusOr<bool> MergeFocused(const PassContext& context, GraphIndex& graph,
                                  PassStats& stats) {
  Focus& focus = context.focus();
  const std::vector<NodeId> order = graph.LiveNodes();
  std::vector<int32_t> position(graph.node_count(), -1);
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int32_t>(i);
  bool changed = false;
  for (NodeId id : order) {
    if (!graph.IsLive(id) || !focus.Visit(id)) continue;
    const onnx::NodeProto& node = graph.node(id);
    std::string key = NodeKey(node);
    if (key.empty()) continue;
    std::vector<NodeId> candidates;
    if (node.input_size() == 0 || node.input(0).empty()) {
      candidates = graph.NodesOf(node.domain(), node.op_type());
    } else {
      for (const ValueUse& use : graph.Consumers(node.input(0))) {
        if (use.is_input() && use.slot == 0) candidates.push_back(use.node);
      }
    }
    NodeId earliest = kNoNode;
    for (NodeId other : candidates) {
      if (other == id || other >= static_cast<NodeId>(position.size()) ||
          position[other] < 0 || position[other] > position[id] || !graph.IsLive(other)) {
        continue;
      }
      if (earliest != kNoNode && position[other] > position[earliest]) continue;
      const onnx::NodeProto& candidate = graph.node(other);
      if (candidate.op_type() != node.op_type() || NodeKey(candidate) != key) continue;
      earliest = other;
    }
    std::vector<std::pair<NodeId, NodeId>> merges;  // earlier, later
    if (earliest != kNoNode) {
      merges.emplace_back(earliest, id);
    } else {
      // The first of its key: the later ones (unchanged, so not in the
      // focus) merge into it.
      std::vector<NodeId> later;
      for (NodeId other : candidates) {
        if (other != id && other < static_cast<NodeId>(position.size()) &&
            position[other] > position[id] && graph.IsLive(other) &&
            graph.node(other).op_type() == node.op_type() && NodeKey(graph.node(other)) == key) {
          later.push_back(other);
        }
      }
      absl::c_sort(later, [&](NodeId a, NodeId b) { return position[a] < position[b]; });
      for (NodeId other : later) merges.emplace_back(id, other);
    }
    for (const auto& [kept, gone] : merges) {
      OC_ASSIGN_OR_RETURN(bool merged, MergeCounted(context, graph, kept, gone, stats));
      changed |= merged;
    }
  }
  return changed;
}

absl::StatusOr<bool> MergeNodes(const PassContext& context, GraphIndex& graph,
                                PassStats& stats) {
  Focus& focus = context.focus();
  if (!focus.all()) return MergeFocused(context, graph, stats);
  absl::flat_hash_map<std::string, NodeId> first;
  bool changed = false;
  for (NodeId id : graph.LiveNodes()) {
    if (!MayRepeat(graph, id)) continue;
    // Keys read the inputs as they are now: merges upstream have renamed
    // them already (graph order).
    std::string key = NodeKey(graph.node(id));
    if (key.empty()) continue;
    auto [it, inserted] = first.try_emplace(std::move(key), id);
    if (inserted) continue;
    OC_ASSIGN_OR_RETURN(bool merged, MergeCounted(context, graph, it->second, id, stats));
    changed |= merged;
  }
  return changed;
}

// Moves the uses of initializer `copy` to `kept`, through a rewrite of a
// node reading it (anchors are nodes; the uses moved are all of them).
absl::Status ShareInitializer(GraphIndex& graph, const std::string& copy,
                              const std::string& kept) {
  const absl::Span<const ValueUse> uses = graph.Consumers(copy);
  auto reader = absl::c_find_if(uses, [](const ValueUse& use) { return !use.is_graph_output(); });
  if (reader == uses.end()) return absl::OkStatus();
  ir::GraphIndexRewriter rewrite(graph, reader->node);
  rewrite.rewriter().ReplaceAllUses(copy, kept);
  return rewrite.Finish();
}

absl::StatusOr<bool> ShareInitializers(const PassContext& context, GraphIndex& graph,
                                       PassStats& stats) {
  const onnx::GraphProto* proto = graph.graph();
  if (proto == nullptr || proto->initializer_size() < 2) return false;
  // Sharing becomes possible only where an initializer was added or
  // gained a use since the last run.
  if (!context.focus().all() &&
      absl::c_none_of(context.focus().touched(), [&](GraphIndex::ValueId value) {
        return graph.FindInitializer(graph.ValueName(value)) != nullptr;
      })) {
    return false;
  }
  // Only tensors alike in type, dims and size are compared byte for byte.
  // Groups keep the order of their first tensor in the graph, so the
  // report's records come out in the same order on every run.
  using Shape = std::tuple<int32_t, std::string, size_t>;
  absl::flat_hash_map<Shape, size_t> group_of;
  std::vector<std::vector<const onnx::TensorProto*>> alike;
  for (const onnx::TensorProto& tensor : proto->initializer()) {
    // A graph input's default is no constant; an unused copy is left to
    // the prune.
    if (graph.FindInitializer(tensor.name()) != &tensor) continue;
    if (graph.Consumers(tensor.name()).empty()) continue;
    std::string dims;
    for (int64_t dim : tensor.dims()) absl::StrAppend(&dims, dim, ",");
    auto [group, added] = group_of.try_emplace(
        {tensor.data_type(), dims, tensor.ByteSizeLong() - tensor.name().size()}, alike.size());
    if (added) alike.emplace_back();
    alike[group->second].push_back(&tensor);
  }
  bool changed = false;
  for (const std::vector<const onnx::TensorProto*>& tensors : alike) {
    if (tensors.size() < 2) continue;
    // The first tensors of each content, by fingerprint.
    absl::flat_hash_map<size_t, std::vector<const onnx::TensorProto*>> first;
    TensorComparer comparer;
    for (const onnx::TensorProto* tensor : tensors) {
      std::vector<const onnx::TensorProto*>& seen = first[TensorFingerprint(*tensor)];
      auto same = absl::c_find_if(
          seen, [&](const onnx::TensorProto* other) { return comparer.Same(*other, *tensor); });
      if (same == seen.end()) {
        seen.push_back(tensor);
        continue;
      }
      if (IsGraphOutput(graph, tensor->name())) continue;
      stats.Record(context.options(),
                   {graph.path(), "share", InitializerText(*tensor) + "\n",
                    InitializerText(**same) + "\n"});
      OC_RETURN_IF_ERROR(ShareInitializer(graph, tensor->name(), (*same)->name()));
      ++stats.matches;
      changed = true;
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> CommonSubexpressions(const PassContext& context, GraphIndex& graph,
                                          PassStats& stats) {
  OC_ASSIGN_OR_RETURN(bool shared, ShareInitializers(context, graph, stats));
  OC_ASSIGN_OR_RETURN(bool merged, MergeNodes(context, graph, stats));
  return shared || merged;
}

}  // namespace onnxconvert::rewrites
