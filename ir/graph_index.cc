// GraphIndex: building the index of a graph and its subgraphs, the table of
// values and their uses, the queries, and the messages that name graph
// elements. Edits and ordering are in graph_index_edits.cc, the self-check
// in graph_index_check.cc, ModelIndex and fresh names in model_index.cc.

#include "ir/graph_index.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ir/graph_index_internal.h"

namespace onnxconvert {
namespace {

using Kind = ValueSource::Kind;
using graph_index_internal::kLive;
using graph_index_internal::kHasSubgraphs;
using graph_index_internal::kHasInsertionsBefore;
using graph_index_internal::kHasInsertionsAfter;
using graph_index_internal::kHasInsertions;
using graph_index_internal::RoomFor;

}  // namespace

// Copies of names that live as long as the index; string_views into it stay
// valid however the maps holding them grow.
class NameArena {
 public:
  // A copy of `text`.
  absl::string_view Store(absl::string_view text) {
    if (text.empty()) return absl::string_view();
    if (text.size() > left_) Grow(text.size());
    char* at = cursor_;
    std::memcpy(at, text.data(), text.size());
    cursor_ += text.size();
    left_ -= text.size();
    return absl::string_view(at, text.size());
  }

 private:
  static constexpr size_t kFirstBlock = 256;
  static constexpr size_t kLargestBlock = size_t{1} << 20;

  void Grow(size_t need) {
    const size_t size = std::max(need, next_block_);
    next_block_ = std::min(next_block_ * 2, kLargestBlock);
    blocks_.emplace_back(new char[size]);
    cursor_ = blocks_.back().get();
    left_ = size;
  }

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cursor_ = nullptr;
  size_t left_ = 0;
  size_t next_block_ = kFirstBlock;
};

// ---------------------------------------------------------------------------
// Building.

GraphIndex::GraphIndex(onnx::GraphProto* graph, onnx::FunctionProto* function, GraphIndex* parent,
                       NodeId owner, int depth, NamePool* names)
    : graph_(graph),
      function_(function),
      parent_(parent),
      owner_(owner),
      depth_(depth),
      names_(names),
      arena_(std::make_unique<NameArena>()),
      value_ids_(0, ValueNameHash{&values_}, ValueNameEq{&values_}) {}

GraphIndex::~GraphIndex() = default;

absl::StatusOr<std::unique_ptr<GraphIndex>> GraphIndex::Build(onnx::GraphProto* graph) {
  if (graph == nullptr) return absl::InvalidArgumentError("GraphIndex::Build: no graph");
  return BuildRoot(graph, nullptr, "main", nullptr, nullptr);
}

absl::StatusOr<std::unique_ptr<const GraphIndex>> GraphIndex::Build(
    const onnx::GraphProto& graph) {
  // Read-only: nothing reachable from a const index writes to the graph.
  OC_ASSIGN_OR_RETURN(std::unique_ptr<GraphIndex> index,
                      Build(const_cast<onnx::GraphProto*>(&graph)));
  return std::unique_ptr<const GraphIndex>(std::move(index));
}

absl::StatusOr<std::unique_ptr<GraphIndex>> GraphIndex::BuildRoot(onnx::GraphProto* graph,
                                                                  onnx::FunctionProto* function,
                                                                  std::string path,
                                                                  GraphIndex* lookup_parent,
                                                                  NamePool* names) {
  std::unique_ptr<GraphIndex> index(
      new GraphIndex(graph, function, lookup_parent, kNoNode, 0, names));
  index->root_path_ = std::move(path);
  if (names == nullptr) {
    index->owned_names_ = std::make_unique<NamePool>();
    index->names_ = index->owned_names_.get();
    index->names_->AddRoot(index.get());
  }
  OC_RETURN_IF_ERROR(index->IndexInterface());
  OC_RETURN_IF_ERROR(index->IndexNodes());
  index->IndexGraphOutputs();
  return index;
}

absl::Status GraphIndex::IndexInterface() {
  if (function_ != nullptr) {
    for (int i = 0; i < function_->input_size(); ++i) {
      OC_RETURN_IF_ERROR(DefineInterfaceValue(function_->input(i), {Kind::kGraphInput, i, -1}));
    }
    return absl::OkStatus();
  }
  for (int i = 0; i < graph_->input_size(); ++i) {
    OC_RETURN_IF_ERROR(DefineInterfaceValue(graph_->input(i).name(), {Kind::kGraphInput, i, -1}));
  }
  for (int i = 0; i < graph_->initializer_size(); ++i) {
    OC_RETURN_IF_ERROR(
        DefineInterfaceValue(graph_->initializer(i).name(), {Kind::kInitializer, i, -1}));
  }
  for (int i = 0; i < graph_->sparse_initializer_size(); ++i) {
    OC_RETURN_IF_ERROR(DefineInterfaceValue(graph_->sparse_initializer(i).values().name(),
                                            {Kind::kSparseInitializer, i, -1}));
  }
  return absl::OkStatus();
}

absl::Status GraphIndex::DefineInterfaceValue(absl::string_view name, ValueSource source) {
  if (name.empty()) return absl::OkStatus();
  const ValueId value = Intern(name);
  const ValueSource existing = values_[value].source;
  if (!existing.is_defined()) {
    SetSource(value, source);
    return absl::OkStatus();
  }
  // An initializer may give a graph input its default value.
  const bool default_of_input =
      existing.kind == Kind::kGraphInput &&
      (source.kind == Kind::kInitializer || source.kind == Kind::kSparseInitializer);
  if (default_of_input) return absl::OkStatus();
  return Error(absl::StatusCode::kInvalidArgument,
               absl::StrCat("value '", name, "' is produced twice: by ", Describe(existing),
                            " and by ", Describe(source)));
}

absl::Status GraphIndex::IndexNodes() {
  const int count = nodes().size();
  const size_t room = RoomFor(count);
  node_flags_.reserve(room);
  node_op_.reserve(room);
  input_begin_.reserve(room + 1);
  output_begin_.reserve(room + 1);
  input_values_.reserve(2 * room);
  input_use_positions_.reserve(2 * room);
  output_values_.reserve(room);
  values_.reserve(values_.size() + room);
  value_ids_.reserve(values_.size() + room);
  for (NodeId id = 0; id < count; ++id) {
    OC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<GraphIndex>> subgraphs, BuildSubgraphs(id));
    OC_RETURN_IF_ERROR(RegisterNode(id, std::move(subgraphs)));
  }
  committed_count_ = count;
  order_may_change_ = false;  // attaching subgraphs is no edit
  return absl::OkStatus();
}

void GraphIndex::IndexGraphOutputs() {
  const int count = graph_output_count();
  graph_output_use_positions_.assign(count, -1);
  for (int i = 0; i < count; ++i) {
    const std::string& name = graph_output_name(i);
    if (name.empty()) continue;
    graph_output_use_positions_[i] = AddUse(Intern(name), ValueUse::GraphOutput(i));
  }
}

absl::StatusOr<std::vector<std::unique_ptr<GraphIndex>>> GraphIndex::BuildSubgraphs(NodeId id) {
  std::vector<std::unique_ptr<GraphIndex>> subgraphs;
  auto add = [&](onnx::GraphProto* subgraph, const std::string& attribute,
                 int position) -> absl::Status {
    std::unique_ptr<GraphIndex> child(
        new GraphIndex(subgraph, nullptr, this, id, depth_ + 1, names_));
    child->owner_attribute_ = attribute;
    child->owner_graph_position_ = position;
    if (child->depth_ > kMaxGraphDepth) {
      return child->Error(absl::StatusCode::kInvalidArgument,
                          absl::StrCat("subgraphs nest deeper than ", kMaxGraphDepth,
                                       " levels"));
    }
    OC_RETURN_IF_ERROR(child->IndexInterface());
    OC_RETURN_IF_ERROR(child->IndexNodes());
    child->IndexGraphOutputs();
    subgraphs.push_back(std::move(child));
    return absl::OkStatus();
  };
  // Subgraphs are held as mutable for editing; building only reads them (a
  // mutable_g() would write a has-bit, even on a read-only model).
  for (const onnx::AttributeProto& attribute : nodes().Get(id).attribute()) {
    if (attribute.has_g()) {
      OC_RETURN_IF_ERROR(
          add(const_cast<onnx::GraphProto*>(&attribute.g()), attribute.name(), -1));
    }
    for (int i = 0; i < attribute.graphs_size(); ++i) {
      OC_RETURN_IF_ERROR(
          add(const_cast<onnx::GraphProto*>(&attribute.graphs(i)), attribute.name(), i));
    }
  }
  return subgraphs;
}

absl::Status GraphIndex::RegisterNode(NodeId id,
                                      std::vector<std::unique_ptr<GraphIndex>> subgraphs) {
  const onnx::NodeProto& node = nodes().Get(id);
  node_flags_.push_back(subgraphs.empty() ? kLive : kLive | kHasSubgraphs);
  const int32_t op = OpIdFor(node.domain(), node.op_type());
  node_op_.push_back(op);
  op_nodes_[op].push_back(id);
  absl::Status status = IndexNodeOutputs(id, node);
  IndexNodeInputs(id, node);
  ++live_count_;
  if (!subgraphs.empty()) AttachSubgraphs(id, std::move(subgraphs));
  return status;
}

absl::Status GraphIndex::IndexNodeOutputs(NodeId id, const onnx::NodeProto& node) {
  absl::Status status;
  for (int slot = 0; slot < node.output_size(); ++slot) {
    const std::string& name = node.output(slot);
    ValueId value = kNoValue;
    if (!name.empty()) {  // "" is an omitted optional output
      value = Intern(name);
      const ValueSource source{Kind::kNodeOutput, id, slot};
      const ValueSource existing = values_[value].source;
      if (existing.is_defined()) {
        status.Update(Error(absl::StatusCode::kInvalidArgument,
                            absl::StrCat("value '", name, "' is produced twice: by ",
                                         Describe(existing), " and by ", Describe(source))));
        value = kNoValue;
      } else {
        SetSource(value, source);
      }
    }
    output_values_.push_back(value);
  }
  output_begin_.push_back(static_cast<int32_t>(output_values_.size()));
  return status;
}

void GraphIndex::IndexNodeInputs(NodeId id, const onnx::NodeProto& node) {
  for (int slot = 0; slot < node.input_size(); ++slot) {
    const std::string& name = node.input(slot);
    if (name.empty()) {  // an omitted optional input
      input_values_.push_back(kNoValue);
      input_use_positions_.push_back(-1);
      continue;
    }
    ValueId value = RecentOutput(id, name);
    if (value == kNoValue) value = Intern(name);
    input_values_.push_back(value);
    input_use_positions_.push_back(AddUse(value, ValueUse::Input(id, slot)));
  }
  input_begin_.push_back(static_cast<int32_t>(input_values_.size()));
}

GraphIndex::ValueId GraphIndex::RecentOutput(NodeId id, absl::string_view name) const {
  // Most inputs were made a node or two before: looking there first spares
  // a hash probe that misses the cache in large graphs.
  constexpr int kNodesBack = 4;
  const int first = output_begin_[std::max(0, id - kNodesBack)];
  for (int i = output_begin_[id] - 1; i >= first; --i) {
    const ValueId value = output_values_[i];
    if (value != kNoValue && values_[value].name == name) return value;
  }
  return kNoValue;
}

void GraphIndex::AttachSubgraphs(NodeId id, std::vector<std::unique_ptr<GraphIndex>> subgraphs) {
  for (const std::unique_ptr<GraphIndex>& child : subgraphs) {
    for (const ValueRecord& record : child->values_) {
      if (IsFree(record)) OnSubgraphUse(id, record.name, /*used=*/true);
    }
    child->reports_to_parent_ = true;
  }
  subgraphs_[id] = std::move(subgraphs);
}

int32_t GraphIndex::OpIdFor(absl::string_view domain, absl::string_view op_type) {
  const OpKeyView key{CanonicalDomain(domain), op_type};
  if (auto it = op_ids_.find(key); it != op_ids_.end()) return it->second;
  const int32_t op = static_cast<int32_t>(op_nodes_.size());
  op_ids_.emplace(OpKey{std::string(key.domain), std::string(op_type)}, op);
  op_nodes_.emplace_back();
  return op;
}

// ---------------------------------------------------------------------------
// Values and uses.

GraphIndex::ValueId GraphIndex::Intern(absl::string_view name) {
  auto it = value_ids_.lazy_emplace(name, [&](const auto& construct) {
    const absl::string_view stored = arena_->Store(name);
    const ValueId id = static_cast<ValueId>(values_.size());
    values_.push_back(ValueRecord{stored, ValueSource{}, {}});
    construct(id);
    names_->Note(stored);
  });
  return *it;
}

GraphIndex::ValueId GraphIndex::Find(absl::string_view name) const {
  if (name.empty()) return kNoValue;
  auto it = value_ids_.find(name);
  return it == value_ids_.end() ? kNoValue : *it;
}

bool GraphIndex::IsFree(const ValueRecord& record) {
  return !record.source.is_defined() && !record.uses.empty();
}

int32_t GraphIndex::AddUse(ValueId value, ValueUse use) {
  ValueRecord& record = values_[value];
  const bool was_free = IsFree(record);
  record.uses.push_back(use);
  const int32_t position = static_cast<int32_t>(record.uses.size()) - 1;
  if (!was_free && IsFree(record)) ReportFreeChange(value, true);
  return position;
}

void GraphIndex::RemoveUse(ValueId value, int32_t position) {
  ValueRecord& record = values_[value];
  const bool was_free = IsFree(record);
  const ValueUse moved = record.uses.back();
  record.uses[position] = moved;
  record.uses.pop_back();
  if (position < static_cast<int32_t>(record.uses.size())) {
    SetUsePosition(value, moved, position);
  }
  if (was_free && !IsFree(values_[value])) ReportFreeChange(value, false);
}

void GraphIndex::SetUsePosition(ValueId value, ValueUse use, int32_t position) {
  if (use.is_input()) {
    input_use_positions_[input_begin_[use.node] + use.slot] = position;
  } else if (use.is_subgraph()) {
    auto node_uses = subgraph_uses_.find(use.node);
    if (node_uses == subgraph_uses_.end()) return;
    auto it = node_uses->second.find(value);
    if (it != node_uses->second.end()) it->second.use_position = position;
  } else {
    graph_output_use_positions_[use.slot] = position;
  }
}

void GraphIndex::SetSource(ValueId value, ValueSource source) {
  const bool was_free = IsFree(values_[value]);
  values_[value].source = source;
  const bool free = IsFree(values_[value]);
  if (was_free != free) ReportFreeChange(value, free);
}

void GraphIndex::ReportFreeChange(ValueId value, bool free) {
  if (reports_to_parent_) parent_->OnSubgraphUse(owner_, values_[value].name, free);
}

void GraphIndex::OnSubgraphUse(NodeId node, absl::string_view name, bool used) {
  // A new use may come from a node placed later; Commit checks the order.
  order_may_change_ = true;
  if (used) {
    const ValueId value = Intern(name);
    if (subgraph_uses_[node][value].graphs++ > 0) return;
    const int32_t position = AddUse(value, ValueUse::Subgraph(node));
    subgraph_uses_[node][value].use_position = position;
    return;
  }
  const ValueId value = Find(name);
  auto node_uses = subgraph_uses_.find(node);
  if (value == kNoValue || node_uses == subgraph_uses_.end()) return;
  auto it = node_uses->second.find(value);
  if (it == node_uses->second.end() || --it->second.graphs > 0) return;
  const int32_t position = it->second.use_position;
  node_uses->second.erase(it);
  if (node_uses->second.empty()) subgraph_uses_.erase(node_uses);
  RemoveUse(value, position);
}

bool GraphIndex::IsVisibleOutside(ValueId value) const {
  return parent_ != nullptr && parent_->DefiningScope(values_[value].name) != nullptr;
}

// ---------------------------------------------------------------------------
// Queries.

bool GraphIndex::IsLive(NodeId node) const {
  return node >= 0 && node < node_count() && (node_flags_[node] & kLive) != 0;
}

const onnx::NodeProto& GraphIndex::node(NodeId node) const { return nodes().Get(node); }

onnx::NodeProto* GraphIndex::mutable_node(NodeId node) { return nodes().Mutable(node); }

std::vector<NodeId> GraphIndex::LiveNodes() const {
  std::vector<NodeId> order;
  order.reserve(live_count_);
  for (NodeId node = 0; node < committed_count_; ++node) {
    if (node_flags_[node] & kHasInsertions) {
      AppendWithInsertions(node, order);
    } else if (node_flags_[node] & kLive) {
      order.push_back(node);
    }
  }
  AppendWithInsertions(kNoNode, order);
  return order;
}

const std::vector<NodeId>* GraphIndex::InsertedAround(NodeId anchor, bool after) const {
  if (anchor != kNoNode &&
      !(node_flags_[anchor] & (after ? kHasInsertionsAfter : kHasInsertionsBefore))) {
    return nullptr;
  }
  const auto& inserted = after ? inserted_after_ : inserted_before_;
  auto it = inserted.find(anchor);
  return it == inserted.end() ? nullptr : &it->second;
}

void GraphIndex::AppendWithInsertions(NodeId root, std::vector<NodeId>& order) const {
  // Depth-first, without recursion (insertions may chain): each node after
  // the nodes inserted before it and before those inserted after it.
  enum class Phase { kBefore, kAfter };
  struct Frame {
    NodeId node;
    Phase phase = Phase::kBefore;
    const std::vector<NodeId>* nodes = nullptr;
    size_t next = 0;
  };
  std::vector<Frame> stack = {{root, Phase::kBefore, InsertedAround(root, false)}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.nodes != nullptr && top.next < top.nodes->size()) {
      const NodeId child = (*top.nodes)[top.next++];
      stack.push_back({child, Phase::kBefore, InsertedAround(child, false)});
      continue;
    }
    if (top.phase == Phase::kBefore) {
      if (top.node != kNoNode && (node_flags_[top.node] & kLive)) order.push_back(top.node);
      top.phase = Phase::kAfter;
      top.nodes = top.node == kNoNode ? nullptr : InsertedAround(top.node, true);
      top.next = 0;
      continue;
    }
    stack.pop_back();
  }
}

std::vector<NodeId> GraphIndex::NodesOf(absl::string_view domain,
                                        absl::string_view op_type) const {
  std::vector<NodeId> result;
  auto it = op_ids_.find(OpKeyView{CanonicalDomain(domain), op_type});
  if (it == op_ids_.end()) return result;
  for (NodeId node : op_nodes_[it->second]) {
    if (IsLive(node)) result.push_back(node);
  }
  return result;
}

std::vector<const GraphIndex*> GraphIndex::Subgraphs(NodeId node) const {
  std::vector<const GraphIndex*> result;
  auto it = subgraphs_.find(node);
  if (it == subgraphs_.end()) return result;
  for (const std::unique_ptr<GraphIndex>& child : it->second) result.push_back(child.get());
  return result;
}

std::vector<GraphIndex*> GraphIndex::Subgraphs(NodeId node) {
  std::vector<GraphIndex*> result;
  auto it = subgraphs_.find(node);
  if (it == subgraphs_.end()) return result;
  for (const std::unique_ptr<GraphIndex>& child : it->second) result.push_back(child.get());
  return result;
}

std::vector<absl::string_view> GraphIndex::OuterReferences(NodeId node) const {
  std::vector<absl::string_view> names;
  auto it = subgraph_uses_.find(node);
  if (it == subgraph_uses_.end()) return names;
  for (const auto& [value, use] : it->second) names.push_back(values_[value].name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<const GraphIndex*> GraphIndex::GraphsInTree() const {
  std::vector<const GraphIndex*> result;
  std::vector<const GraphIndex*> stack = {this};
  while (!stack.empty()) {
    const GraphIndex* graph = stack.back();
    stack.pop_back();
    result.push_back(graph);
    for (auto node = graph->subgraphs_.rbegin(); node != graph->subgraphs_.rend(); ++node) {
      for (auto child = node->second.rbegin(); child != node->second.rend(); ++child) {
        stack.push_back(child->get());
      }
    }
  }
  return result;
}

std::vector<GraphIndex*> GraphIndex::GraphsInTree() {
  return graph_index_internal::Editable(std::as_const(*this).GraphsInTree());
}

ValueSource GraphIndex::Producer(absl::string_view name) const {
  const ValueId value = Find(name);
  if (value != kNoValue && values_[value].source.is_defined()) return values_[value].source;
  if (parent_ != nullptr && parent_->DefiningScope(name) != nullptr) {
    return ValueSource{Kind::kOuterScope, -1, -1};
  }
  return ValueSource{};
}

ValueSource GraphIndex::ProducerOf(ValueId value) const {
  if (value == kNoValue) return ValueSource{};
  if (values_[value].source.is_defined()) return values_[value].source;
  return Producer(values_[value].name);
}

absl::Span<const ValueUse> GraphIndex::ConsumersOf(ValueId value) const {
  if (value == kNoValue) return {};
  return absl::MakeConstSpan(values_[value].uses.data(), values_[value].uses.size());
}

const GraphIndex* GraphIndex::DefiningScope(absl::string_view name) const {
  for (const GraphIndex* scope = this; scope != nullptr; scope = scope->parent_) {
    const ValueId value = scope->Find(name);
    if (value != kNoValue && scope->values_[value].source.is_defined()) return scope;
  }
  return nullptr;
}

absl::Span<const ValueUse> GraphIndex::Consumers(absl::string_view name) const {
  return ConsumersOf(Find(name));
}

ValueSource GraphIndex::InputProducer(NodeId id, int slot) const {
  if (id < 0 || id + 1 >= static_cast<NodeId>(input_begin_.size()) || slot < 0 ||
      slot >= input_count(id)) {
    return ValueSource{};
  }
  return ProducerOf(input_values_[input_begin_[id] + slot]);
}

absl::Span<const ValueUse> GraphIndex::OutputConsumers(NodeId id, int slot) const {
  if (id < 0 || id + 1 >= static_cast<NodeId>(output_begin_.size()) || slot < 0 ||
      slot >= output_count(id)) {
    return {};
  }
  return ConsumersOf(output_values_[output_begin_[id] + slot]);
}

bool GraphIndex::IsGraphOutputOf(NodeId id, int slot) const {
  for (const ValueUse& use : OutputConsumers(id, slot)) {
    if (use.is_graph_output()) return true;
  }
  return false;
}

const onnx::TensorProto* GraphIndex::FindInitializer(absl::string_view name) const {
  const GraphIndex* scope = DefiningScope(name);
  if (scope == nullptr || scope->graph_ == nullptr) return nullptr;
  const ValueSource& source = scope->values_[scope->Find(name)].source;
  if (source.kind != Kind::kInitializer) return nullptr;
  return &scope->graph_->initializer(source.index);
}

std::vector<absl::string_view> GraphIndex::FreeNames() const {
  std::vector<absl::string_view> names;
  for (const ValueRecord& record : values_) {
    if (IsFree(record)) names.push_back(record.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<absl::string_view> GraphIndex::ValueNames() const {
  std::vector<absl::string_view> names;
  for (const ValueRecord& record : values_) {
    if (record.source.is_defined() || !record.uses.empty()) names.push_back(record.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string GraphIndex::FreshName(absl::string_view prefix) { return names_->Fresh(prefix); }

// ---------------------------------------------------------------------------
// Messages and access.

std::string GraphIndex::path() const {
  std::vector<const GraphIndex*> chain;  // subgraphs from this one outwards
  const GraphIndex* root = this;
  while (root->owner_ != kNoNode) {
    chain.push_back(root);
    root = root->parent_;
  }
  std::string path = root->root_path_;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const GraphIndex& child = **it;
    const onnx::NodeProto& owner = child.parent_->node(child.owner_);
    absl::StrAppend(&path, "/", child.owner_attribute_);
    if (child.owner_graph_position_ >= 0) {
      absl::StrAppend(&path, "[", child.owner_graph_position_, "]");
    }
    if (owner.name().empty()) {
      absl::StrAppend(&path, " of ", owner.op_type(), " #", child.owner_);
    } else {
      absl::StrAppend(&path, " of '", owner.name(), "'");
    }
  }
  return path;
}

std::string GraphIndex::NodeLabel(NodeId node) const {
  const onnx::NodeProto& proto = nodes().Get(node);
  const std::string op =
      CanonicalDomain(proto.domain()).empty()
          ? proto.op_type()
          : absl::StrCat(proto.domain(), ":", proto.op_type());
  return proto.name().empty() ? absl::StrCat("node #", node, " (", op, ")")
                              : absl::StrCat("node '", proto.name(), "' (", op, ")");
}

std::string GraphIndex::Describe(const ValueSource& source) const {
  switch (source.kind) {
    case Kind::kUndefined:
      return "nothing";
    case Kind::kGraphInput:
      return absl::StrCat(function_ != nullptr ? "function input #" : "graph input #",
                          source.index);
    case Kind::kInitializer:
      return absl::StrCat("initializer #", source.index);
    case Kind::kSparseInitializer:
      return absl::StrCat("sparse initializer #", source.index);
    case Kind::kNodeOutput:
      return absl::StrCat(NodeLabel(source.index), " output ", source.slot);
    case Kind::kOuterScope:
      return "an enclosing graph";
  }
  return "?";
}

absl::Status GraphIndex::Error(absl::StatusCode code, absl::string_view message) const {
  return absl::Status(code, absl::StrCat(path(), ": ", message));
}

google::protobuf::RepeatedPtrField<onnx::NodeProto>& GraphIndex::nodes() const {
  return function_ != nullptr ? *function_->mutable_node() : *graph_->mutable_node();
}

int GraphIndex::graph_output_count() const {
  return function_ != nullptr ? function_->output_size() : graph_->output_size();
}

const std::string& GraphIndex::graph_output_name(int position) const {
  return function_ != nullptr ? function_->output(position) : graph_->output(position).name();
}

}  // namespace onnxconvert
