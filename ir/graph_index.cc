#include "ir/graph_index.h"

#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"

namespace onnxconvert {
namespace {

// Subgraphs nested deeper than this are not descended into.
constexpr int kMaxDepth = 64;

std::string CanonicalDomain(absl::string_view domain) {
  return domain == "ai.onnx" ? "" : std::string(domain);
}

std::string OpKey(absl::string_view domain, absl::string_view op_type) {
  return absl::StrCat(CanonicalDomain(domain), "\x1f", op_type);
}

std::string NodeLabel(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? absl::StrCat(node.op_type(), " node #", index)
                             : absl::StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

template <typename Fn>
void ForEachSubgraph(const onnx::NodeProto& node, Fn fn) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g()) fn(attribute, attribute.g());
    for (const onnx::GraphProto& graph : attribute.graphs()) fn(attribute, graph);
  }
}

// Adds to `free` the names `graph` uses that neither it nor `bound` define.
void CollectFreeNames(const onnx::GraphProto& graph, absl::flat_hash_set<std::string> bound,
                      int depth, absl::flat_hash_set<std::string>& seen,
                      std::vector<std::string>& free) {
  for (const auto& input : graph.input()) bound.insert(input.name());
  for (const auto& tensor : graph.initializer()) bound.insert(tensor.name());
  for (const auto& sparse : graph.sparse_initializer()) bound.insert(sparse.values().name());
  auto use = [&](const std::string& name) {
    if (name.empty() || bound.contains(name) || !seen.insert(name).second) return;
    free.push_back(name);
  };
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) use(input);
    if (depth < kMaxDepth) {
      ForEachSubgraph(node, [&](const onnx::AttributeProto&, const onnx::GraphProto& sub) {
        std::vector<std::string> inner;
        absl::flat_hash_set<std::string> inner_seen;
        CollectFreeNames(sub, {}, depth + 1, inner_seen, inner);
        for (const std::string& name : inner) use(name);
      });
    }
    for (const std::string& output : node.output()) {
      if (!output.empty()) bound.insert(output);
    }
  }
  for (const auto& output : graph.output()) use(output.name());
}

}  // namespace

std::vector<std::string> FreeNames(const onnx::GraphProto& graph) {
  absl::flat_hash_set<std::string> seen;
  std::vector<std::string> free;
  CollectFreeNames(graph, {}, 0, seen, free);
  return free;
}

std::string GraphIndex::Describe(const ValueSource& source) const {
  switch (source.kind) {
    case ValueSource::kGraphInput: return absl::StrCat("graph input #", source.index);
    case ValueSource::kInitializer: return absl::StrCat("initializer #", source.index);
    case ValueSource::kSparseInitializer:
      return absl::StrCat("sparse initializer #", source.index);
    case ValueSource::kNodeOutput:
      return NodeLabel(graph_->node(source.index), source.index);
  }
  return "?";
}

absl::Status GraphIndex::Define(const std::string& name, ValueSource source) {
  if (name.empty()) return absl::OkStatus();
  auto [it, inserted] = producers_.try_emplace(name, source);
  if (inserted) return absl::OkStatus();
  // An initializer may also be listed as a graph input (IR < 4 requires it).
  bool input_and_initializer =
      (it->second.kind == ValueSource::kGraphInput && source.kind == ValueSource::kInitializer) ||
      (it->second.kind == ValueSource::kInitializer && source.kind == ValueSource::kGraphInput);
  if (input_and_initializer) {
    if (source.kind == ValueSource::kGraphInput) it->second = source;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("value '", name, "' is defined twice: by ",
                                                 Describe(it->second), " and by ",
                                                 Describe(source)));
}

void GraphIndex::ComputeOuterReferences(int node_index) {
  const onnx::NodeProto& node = graph_->node(node_index);
  absl::flat_hash_set<std::string> seen;
  std::vector<std::string> names;
  ForEachSubgraph(node, [&](const onnx::AttributeProto&, const onnx::GraphProto& sub) {
    for (std::string& name : FreeNames(sub)) {
      if (seen.insert(name).second) names.push_back(std::move(name));
    }
  });
  if (names.empty()) return;
  for (const std::string& name : names) consumers_[name].push_back({node_index, -1});
  outer_references_[node_index] = std::move(names);
}

absl::StatusOr<std::unique_ptr<GraphIndex>> GraphIndex::Build(const onnx::GraphProto& graph,
                                                              const GraphIndex* parent) {
  std::unique_ptr<GraphIndex> index(new GraphIndex(graph, parent));
  for (int i = 0; i < graph.input_size(); ++i) {
    OC_RETURN_IF_ERROR(index->Define(graph.input(i).name(), {ValueSource::kGraphInput, i, 0}));
  }
  for (int i = 0; i < graph.initializer_size(); ++i) {
    OC_RETURN_IF_ERROR(
        index->Define(graph.initializer(i).name(), {ValueSource::kInitializer, i, 0}));
  }
  for (int i = 0; i < graph.sparse_initializer_size(); ++i) {
    OC_RETURN_IF_ERROR(index->Define(graph.sparse_initializer(i).values().name(),
                                     {ValueSource::kSparseInitializer, i, 0}));
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto& node = graph.node(n);
    for (int slot = 0; slot < node.output_size(); ++slot) {
      OC_RETURN_IF_ERROR(index->Define(node.output(slot), {ValueSource::kNodeOutput, n, slot}));
    }
    for (int slot = 0; slot < node.input_size(); ++slot) {
      if (!node.input(slot).empty()) index->consumers_[node.input(slot)].push_back({n, slot});
    }
    index->nodes_by_op_[OpKey(node.domain(), node.op_type())].push_back(n);
    index->ComputeOuterReferences(n);
  }
  for (int i = 0; i < graph.output_size(); ++i) {
    index->consumers_[graph.output(i).name()].push_back({ValueUse::kGraphOutput, i});
  }
  return index;
}

const ValueSource* GraphIndex::Producer(absl::string_view name) const {
  auto it = producers_.find(name);
  return it == producers_.end() ? nullptr : &it->second;
}

bool GraphIndex::IsVisible(absl::string_view name) const {
  for (const GraphIndex* scope = this; scope != nullptr; scope = scope->parent_) {
    if (scope->Producer(name) != nullptr) return true;
  }
  return false;
}

absl::Span<const ValueUse> GraphIndex::Consumers(absl::string_view name) const {
  auto it = consumers_.find(name);
  if (it == consumers_.end()) return {};
  return it->second;
}

absl::Span<const int> GraphIndex::NodesOf(absl::string_view domain,
                                          absl::string_view op_type) const {
  auto it = nodes_by_op_.find(OpKey(domain, op_type));
  if (it == nodes_by_op_.end()) return {};
  return it->second;
}

absl::Span<const std::string> GraphIndex::OuterReferences(int node) const {
  auto it = outer_references_.find(node);
  if (it == outer_references_.end()) return {};
  return it->second;
}

absl::StatusOr<std::vector<int>> GraphIndex::TopologicalOrder() const {
  const int count = graph_->node_size();
  std::vector<int> waiting(count, 0);
  std::vector<std::vector<int>> dependents(count);
  auto depend = [&](int node, const std::string& name) -> absl::Status {
    const ValueSource* source = Producer(name);
    if (source == nullptr) {
      if (parent_ != nullptr && parent_->IsVisible(name)) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(graph_->node(node), node), " uses '", name, "', which nothing defines"));
    }
    if (source->kind == ValueSource::kNodeOutput) {
      ++waiting[node];
      dependents[source->index].push_back(node);
    }
    return absl::OkStatus();
  };
  for (int n = 0; n < count; ++n) {
    for (const std::string& input : graph_->node(n).input()) {
      if (!input.empty()) OC_RETURN_IF_ERROR(depend(n, input));
    }
    for (const std::string& name : OuterReferences(n)) OC_RETURN_IF_ERROR(depend(n, name));
  }
  std::vector<int> order;
  order.reserve(count);
  std::deque<int> ready;
  for (int n = 0; n < count; ++n) {
    if (waiting[n] == 0) ready.push_back(n);
  }
  while (!ready.empty()) {
    int n = ready.front();
    ready.pop_front();
    order.push_back(n);
    for (int dependent : dependents[n]) {
      if (--waiting[dependent] == 0) ready.push_back(dependent);
    }
  }
  if (static_cast<int>(order.size()) == count) return order;
  std::vector<std::string> stuck;
  for (int n = 0; n < count && stuck.size() < 8; ++n) {
    if (waiting[n] > 0) stuck.push_back(NodeLabel(graph_->node(n), n));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("the graph has a cycle through ", absl::StrJoin(stuck, ", ")));
}

NameGenerator::NameGenerator(const onnx::ModelProto& model) {
  onnx::ModelProto& mutable_model = const_cast<onnx::ModelProto&>(model);
  ForEachGraph(mutable_model, [this](const GraphSite& site) {
    const onnx::GraphProto& graph = *site.graph;
    for (const auto& value : graph.input()) used_.insert(value.name());
    for (const auto& value : graph.output()) used_.insert(value.name());
    for (const auto& value : graph.value_info()) used_.insert(value.name());
    for (const auto& tensor : graph.initializer()) used_.insert(tensor.name());
    for (const auto& node : graph.node()) {
      used_.insert(node.name());
      for (const auto& name : node.input()) used_.insert(name);
      for (const auto& name : node.output()) used_.insert(name);
    }
  });
  for (const onnx::FunctionProto& function : model.functions()) {
    for (const auto& node : function.node()) {
      used_.insert(node.name());
      for (const auto& name : node.output()) used_.insert(name);
    }
  }
}

std::string NameGenerator::FreshName(absl::string_view prefix) {
  std::string base(prefix);
  int64_t& next = next_suffix_[base];
  while (true) {
    std::string candidate = absl::StrCat(base, "__", next++);
    if (used_.insert(candidate).second) return candidate;
  }
}

namespace {

void VisitGraph(onnx::GraphProto& graph, const std::string& path, int depth,
                const std::function<void(const GraphSite&)>& fn) {
  fn({&graph, path, depth});
  if (depth >= kMaxDepth) return;
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      std::string owner = absl::StrCat(" of '", node.name(), "' (", node.op_type(), ")");
      if (attribute.has_g()) {
        VisitGraph(*attribute.mutable_g(), absl::StrCat(path, "/", attribute.name(), owner),
                   depth + 1, fn);
      }
      for (int i = 0; i < attribute.graphs_size(); ++i) {
        VisitGraph(*attribute.mutable_graphs(i),
                   absl::StrCat(path, "/", attribute.name(), "[", i, "]", owner), depth + 1, fn);
      }
    }
  }
}

}  // namespace

void ForEachGraph(onnx::ModelProto& model, const std::function<void(const GraphSite&)>& fn) {
  if (model.has_graph()) VisitGraph(*model.mutable_graph(), "main", 0, fn);
  for (int i = 0; i < model.training_info_size(); ++i) {
    onnx::TrainingInfoProto* info = model.mutable_training_info(i);
    if (info->has_initialization()) {
      VisitGraph(*info->mutable_initialization(), absl::StrCat("training[", i, "]/initialization"),
                 0, fn);
    }
    if (info->has_algorithm()) {
      VisitGraph(*info->mutable_algorithm(), absl::StrCat("training[", i, "]/algorithm"), 0, fn);
    }
  }
}

void GraphEditor::Replace(int index, std::vector<onnx::NodeProto> nodes) {
  replacements_[index] = std::move(nodes);
}

void GraphEditor::InsertBefore(int index, onnx::NodeProto node) {
  insertions_[index].push_back(std::move(node));
}

void GraphEditor::AddInitializer(onnx::TensorProto tensor) {
  initializers_.push_back(std::move(tensor));
}

void GraphEditor::RenameUses(absl::string_view from, absl::string_view to) {
  renames_[std::string(from)] = std::string(to);
}

bool GraphEditor::HasEdits() const {
  return !replacements_.empty() || !insertions_.empty() || !initializers_.empty() ||
         !renames_.empty();
}

void GraphEditor::Commit() {
  if (!replacements_.empty() || !insertions_.empty()) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> old_nodes;
    old_nodes.Swap(graph_->mutable_node());
    graph_->mutable_node()->Reserve(old_nodes.size());
    for (int i = 0; i < old_nodes.size(); ++i) {
      if (auto it = insertions_.find(i); it != insertions_.end()) {
        for (onnx::NodeProto& node : it->second) *graph_->add_node() = std::move(node);
      }
      auto it = replacements_.find(i);
      if (it == replacements_.end()) {
        *graph_->add_node() = std::move(*old_nodes.Mutable(i));
        continue;
      }
      for (onnx::NodeProto& node : it->second) *graph_->add_node() = std::move(node);
    }
    // Insertions before the end.
    if (auto it = insertions_.find(old_nodes.size()); it != insertions_.end()) {
      for (onnx::NodeProto& node : it->second) *graph_->add_node() = std::move(node);
    }
  }
  for (onnx::TensorProto& tensor : initializers_) *graph_->add_initializer() = std::move(tensor);
  if (!renames_.empty()) {
    for (onnx::NodeProto& node : *graph_->mutable_node()) {
      for (std::string& input : *node.mutable_input()) {
        if (auto it = renames_.find(input); it != renames_.end()) input = it->second;
      }
    }
    for (onnx::ValueInfoProto& output : *graph_->mutable_output()) {
      if (auto it = renames_.find(output.name()); it != renames_.end()) {
        output.set_name(it->second);
      }
    }
  }
  replacements_.clear();
  insertions_.clear();
  initializers_.clear();
  renames_.clear();
}

}  // namespace onnxconvert
