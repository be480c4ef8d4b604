#include "ir/graph_index.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/memory/memory.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace onnxconvert {
namespace {

using Kind = ValueSource::Kind;

// Bits of GraphIndex::node_flags_.
constexpr uint8_t kLive = 1;
constexpr uint8_t kHasSubgraphs = 2;
constexpr uint8_t kHasInsertionsBefore = 4;  // a key of inserted_before_
constexpr uint8_t kHasInsertionsAfter = 8;   // a key of inserted_after_
constexpr uint8_t kHasInsertions = kHasInsertionsBefore | kHasInsertionsAfter;

// Steps of a cycle spelled out in an error; longer cycles are cut short.
constexpr int kMaxCycleStepsShown = 16;

// Capacity for the per-node arrays of `nodes` nodes, leaving room for the
// nodes of later edits: reserved pages cost nothing until used, while
// growing a full vector copies it.
size_t RoomFor(size_t nodes) { return nodes + nodes / 8 + 16; }

// "" and "ai.onnx" name the same domain.
absl::string_view CanonicalDomain(absl::string_view domain) {
  return domain == "ai.onnx" ? absl::string_view() : domain;
}

// Fresh names are "<prefix>__<n>".
constexpr absl::string_view kFreshSeparator = "__";

// True for names of the form "<anything>__<digits>", the only ones a fresh
// name can collide with.
bool EndsInNumber(absl::string_view name) {
  size_t digits = 0;
  while (digits < name.size() && absl::ascii_isdigit(name[name.size() - 1 - digits])) ++digits;
  return digits > 0 && absl::EndsWith(name.substr(0, name.size() - digits), kFreshSeparator);
}

// Calls `note` with every name used in `model`: values, nodes, graph and
// function interfaces, at any depth (iteratively: no recursion limit).
template <typename Fn>
void ForEachNameIn(const onnx::ModelProto& model, Fn note) {
  std::vector<const onnx::GraphProto*> graphs;
  auto add_nodes = [&](const auto& nodes) {
    for (const onnx::NodeProto& node : nodes) {
      note(node.name());
      for (const std::string& name : node.input()) note(name);
      for (const std::string& name : node.output()) note(name);
      for (const onnx::AttributeProto& attribute : node.attribute()) {
        if (attribute.has_g()) graphs.push_back(&attribute.g());
        for (const onnx::GraphProto& graph : attribute.graphs()) graphs.push_back(&graph);
      }
    }
  };
  if (model.has_graph()) graphs.push_back(&model.graph());
  for (const onnx::TrainingInfoProto& info : model.training_info()) {
    if (info.has_initialization()) graphs.push_back(&info.initialization());
    if (info.has_algorithm()) graphs.push_back(&info.algorithm());
  }
  for (const onnx::FunctionProto& function : model.functions()) {
    for (const std::string& name : function.input()) note(name);
    for (const std::string& name : function.output()) note(name);
    add_nodes(function.node());
  }
  while (!graphs.empty()) {
    const onnx::GraphProto& graph = *graphs.back();
    graphs.pop_back();
    for (const onnx::ValueInfoProto& value : graph.input()) note(value.name());
    for (const onnx::ValueInfoProto& value : graph.output()) note(value.name());
    for (const onnx::ValueInfoProto& value : graph.value_info()) note(value.name());
    for (const onnx::TensorProto& tensor : graph.initializer()) note(tensor.name());
    for (const onnx::SparseTensorProto& sparse : graph.sparse_initializer()) {
      note(sparse.values().name());
    }
    add_nodes(graph.node());
  }
}

std::string FunctionPath(const onnx::FunctionProto& function) {
  return absl::StrCat("function '", function.domain(), function.domain().empty() ? "" : ":",
                      function.name(), function.overload().empty() ? "" : "@",
                      function.overload(), "'");
}

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

// The names in use across the graphs of a model, collected on the first
// request for a fresh name and kept up to date by edits from then on. Only
// names ending in "__<digits>" are kept: no other name can equal a fresh one.
class NamePool {
 public:
  // Adds a graph tree whose names count as used.
  void AddRoot(const GraphIndex* root) {
    if (root != nullptr) roots_.push_back(root);
  }
  // Adds a model whose names count as used.
  void AddModel(const onnx::ModelProto* model) { models_.push_back(model); }
  // Records `name` as used (once the names are collected).
  void Note(absl::string_view name) {
    if (collected_ && EndsInNumber(name)) taken_.insert(std::string(name));
  }
  // A name "<prefix>__<n>" not used yet, reserved.
  std::string Fresh(absl::string_view prefix) {
    Collect();
    int64_t& next = next_suffix_.try_emplace(prefix, 0).first->second;
    while (true) {
      std::string candidate = absl::StrCat(prefix, kFreshSeparator, next++);
      if (taken_.insert(candidate).second) return candidate;
    }
  }

  // Collects the names in use, once.
  void Collect() {
    if (collected_) return;
    collected_ = true;
    for (const GraphIndex* root : roots_) {
      for (const GraphIndex* graph : root->GraphsInTree()) {
        for (const GraphIndex::ValueRecord& record : graph->values_) Note(record.name);
        for (const onnx::NodeProto& node : graph->nodes()) Note(node.name());
        if (graph->graph_ == nullptr) continue;
        for (const onnx::ValueInfoProto& info : graph->graph_->value_info()) Note(info.name());
      }
    }
    for (const onnx::ModelProto* model : models_) {
      ForEachNameIn(*model, [this](absl::string_view name) { Note(name); });
    }
  }

 private:
  std::vector<const GraphIndex*> roots_;
  std::vector<const onnx::ModelProto*> models_;
  bool collected_ = false;
  absl::flat_hash_set<std::string> taken_;
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
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
  std::vector<GraphIndex*> result;
  for (const GraphIndex* graph : std::as_const(*this).GraphsInTree()) {
    result.push_back(const_cast<GraphIndex*>(graph));
  }
  return result;
}

ValueSource GraphIndex::Producer(absl::string_view name) const {
  const ValueId value = Find(name);
  if (value != kNoValue && values_[value].source.is_defined()) return values_[value].source;
  if (parent_ != nullptr && parent_->DefiningScope(name) != nullptr) {
    return ValueSource{Kind::kOuterScope, -1, -1};
  }
  return ValueSource{};
}

const GraphIndex* GraphIndex::DefiningScope(absl::string_view name) const {
  for (const GraphIndex* scope = this; scope != nullptr; scope = scope->parent_) {
    const ValueId value = scope->Find(name);
    if (value != kNoValue && scope->values_[value].source.is_defined()) return scope;
  }
  return nullptr;
}

absl::Span<const ValueUse> GraphIndex::Consumers(absl::string_view name) const {
  const ValueId value = Find(name);
  if (value == kNoValue) return {};
  return absl::MakeConstSpan(values_[value].uses.data(), values_[value].uses.size());
}

ValueSource GraphIndex::InputProducer(NodeId id, int slot) const {
  if (id < 0 || id + 1 >= static_cast<NodeId>(input_begin_.size()) || slot < 0 ||
      slot >= input_count(id)) {
    return ValueSource{};
  }
  const ValueId value = input_values_[input_begin_[id] + slot];
  if (value == kNoValue) return ValueSource{};
  if (values_[value].source.is_defined()) return values_[value].source;
  return Producer(values_[value].name);
}

absl::Span<const ValueUse> GraphIndex::OutputConsumers(NodeId id, int slot) const {
  if (id < 0 || id + 1 >= static_cast<NodeId>(output_begin_.size()) || slot < 0 ||
      slot >= output_count(id)) {
    return {};
  }
  const ValueId value = output_values_[output_begin_[id] + slot];
  if (value == kNoValue) return {};
  return absl::MakeConstSpan(values_[value].uses.data(), values_[value].uses.size());
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
  const onnx::NodeProto& proto = node(id);
  for (const std::string& name : proto.input()) LogName(name);
  for (const std::string& name : proto.output()) LogName(name);
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

absl::Status GraphIndex::SetInput(NodeId node, int slot, absl::string_view value) {
  OC_RETURN_IF_ERROR(CheckLive(node));
  if (slot < 0 || slot >= input_count(node)) {
    return Error(absl::StatusCode::kOutOfRange,
                 absl::StrCat(NodeLabel(node), " has ", input_count(node), " inputs, not slot ",
                              slot));
  }
  if (edit_log_ != nullptr) {
    LogName(this->node(node).input(slot));
    LogName(value);
  }
  SetInputValue(node, slot, value);
  order_may_change_ = true;
  return absl::OkStatus();
}

void GraphIndex::SetInputValue(NodeId node, int slot, absl::string_view value) {
  const std::string name(value);  // `value` may view the string being replaced
  const int at = input_begin_[node] + slot;
  if (input_values_[at] != kNoValue) RemoveUse(input_values_[at], input_use_positions_[at]);
  nodes().Mutable(node)->set_input(slot, name);
  if (name.empty()) {
    input_values_[at] = kNoValue;
    input_use_positions_[at] = -1;
    return;
  }
  const ValueId id = Intern(name);
  input_values_[at] = id;
  input_use_positions_[at] = AddUse(id, ValueUse::Input(node, slot));
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
  OC_RETURN_IF_ERROR(CheckRenameInSubgraphs(from_name, to_name));
  LogName(from_name);
  LogName(to_name);
  RenameUsesOf(from_name, to_name, /*graph_outputs=*/false);
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

void GraphIndex::RenameUsesOf(absl::string_view from, absl::string_view to, bool graph_outputs) {
  const ValueId value = Find(from);
  if (value == kNoValue) return;
  // Renaming edits this list; walk a copy.
  const std::vector<ValueUse> uses(values_[value].uses.begin(), values_[value].uses.end());
  for (const ValueUse& use : uses) {
    if (use.is_input()) {
      SetInputValue(use.node, use.slot, to);
    } else if (use.is_subgraph()) {
      for (const std::unique_ptr<GraphIndex>& child : subgraphs_.at(use.node)) {
        const ValueId inner = child->Find(from);
        if (inner != kNoValue && IsFree(child->values_[inner])) {
          child->RenameUsesOf(from, to, /*graph_outputs=*/true);
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
  LogName(tensor.name());
  const ValueId existing = Find(tensor.name());
  if (existing != kNoValue && values_[existing].source.is_defined()) {
    return Error(absl::StatusCode::kAlreadyExists,
                 absl::StrCat("cannot add initializer '", tensor.name(), "': already produced by ",
                              Describe(values_[existing].source)));
  }
  const int index = graph_->initializer_size();
  onnx::TensorProto* added = graph_->add_initializer();
  *added = std::move(tensor);
  SetSource(Intern(added->name()), ValueSource{Kind::kInitializer, index, -1});
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

// ---------------------------------------------------------------------------
// ModelIndex.

ModelIndex::ModelIndex() : names_(std::make_unique<NamePool>()) {}

ModelIndex::~ModelIndex() = default;

absl::StatusOr<std::unique_ptr<ModelIndex>> ModelIndex::Build(onnx::ModelProto* model) {
  if (model == nullptr) return absl::InvalidArgumentError("ModelIndex::Build: no model");
  return BuildMutable(model);
}

absl::StatusOr<std::unique_ptr<const ModelIndex>> ModelIndex::Build(
    const onnx::ModelProto& model) {
  // Read-only: nothing reachable from a const index writes to the model.
  OC_ASSIGN_OR_RETURN(std::unique_ptr<ModelIndex> index,
                      BuildMutable(const_cast<onnx::ModelProto*>(&model)));
  return std::unique_ptr<const ModelIndex>(std::move(index));
}

absl::StatusOr<std::unique_ptr<ModelIndex>> ModelIndex::BuildMutable(onnx::ModelProto* model) {
  // Graphs are held as mutable for editing; building only reads them (the
  // mutable_ accessors of singular fields would write has-bits).
  auto held = [](const onnx::GraphProto& graph) { return const_cast<onnx::GraphProto*>(&graph); };
  std::unique_ptr<ModelIndex> index(new ModelIndex());
  NamePool* names = index->names_.get();
  if (model->has_graph()) {
    OC_ASSIGN_OR_RETURN(index->main_, GraphIndex::BuildRoot(held(model->graph()), nullptr,
                                                            "main", nullptr, names));
    names->AddRoot(index->main_.get());
  }
  for (int i = 0; i < model->training_info_size(); ++i) {
    const onnx::TrainingInfoProto& info = model->training_info(i);
    const std::string prefix = absl::StrCat("training_info[", i, "]/");
    std::unique_ptr<GraphIndex> initialization;
    std::unique_ptr<GraphIndex> algorithm;
    if (info.has_initialization()) {
      OC_ASSIGN_OR_RETURN(initialization,
                          GraphIndex::BuildRoot(held(info.initialization()), nullptr,
                                                prefix + "initialization", nullptr, names));
    }
    if (info.has_algorithm()) {
      // The algorithm runs together with the main graph and may use its values.
      OC_ASSIGN_OR_RETURN(algorithm,
                          GraphIndex::BuildRoot(held(info.algorithm()), nullptr,
                                                prefix + "algorithm", index->main_.get(), names));
    }
    names->AddRoot(initialization.get());
    names->AddRoot(algorithm.get());
    index->training_.push_back(std::move(initialization));
    index->training_.push_back(std::move(algorithm));
  }
  for (int i = 0; i < model->functions_size(); ++i) {
    const onnx::FunctionProto& function = model->functions(i);
    OC_ASSIGN_OR_RETURN(
        std::unique_ptr<GraphIndex> graph,
        GraphIndex::BuildRoot(nullptr, const_cast<onnx::FunctionProto*>(&function),
                              FunctionPath(function), nullptr, names));
    names->AddRoot(graph.get());
    index->functions_.push_back(std::move(graph));
  }
  return index;
}

std::vector<const GraphIndex*> ModelIndex::Graphs() const {
  std::vector<const GraphIndex*> graphs;
  auto add_tree = [&](const GraphIndex* root) {
    if (root == nullptr) return;
    for (const GraphIndex* graph : root->GraphsInTree()) graphs.push_back(graph);
  };
  add_tree(main_.get());
  for (const std::unique_ptr<GraphIndex>& root : training_) add_tree(root.get());
  for (const std::unique_ptr<GraphIndex>& root : functions_) add_tree(root.get());
  return graphs;
}

std::vector<GraphIndex*> ModelIndex::Graphs() {
  std::vector<GraphIndex*> graphs;
  for (const GraphIndex* graph : std::as_const(*this).Graphs()) {
    graphs.push_back(const_cast<GraphIndex*>(graph));
  }
  return graphs;
}

const GraphIndex* ModelIndex::FindGraph(absl::string_view path) const {
  for (const GraphIndex* graph : Graphs()) {
    if (graph->path() == path) return graph;
  }
  return nullptr;
}

std::string ModelIndex::FreshName(absl::string_view prefix) { return names_->Fresh(prefix); }

absl::Status ModelIndex::Commit() {
  for (GraphIndex* graph : Graphs()) OC_RETURN_IF_ERROR(graph->Commit());
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// NameGenerator.

NameGenerator::NameGenerator(const onnx::ModelProto& model)
    : pool_(std::make_unique<NamePool>()) {
  pool_->AddModel(&model);
  pool_->Collect();  // now: `model` need not outlive the generator
}

NameGenerator::~NameGenerator() = default;

std::string NameGenerator::FreshName(absl::string_view prefix) {
  if (observer_) observer_(prefix);
  return pool_->Fresh(prefix);
}

void NameGenerator::Reserve(absl::string_view name) { pool_->Note(name); }

}  // namespace onnxconvert
