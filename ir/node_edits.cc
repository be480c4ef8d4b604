#include "ir/node_edits.h"

#include <utility>

#include "google/protobuf/arena.h"

namespace onnxconvert::ir {

NodeEdits::~NodeEdits() {
  for (auto& [list, edits] : edits_) {
    if (list->GetArena() != nullptr) continue;
    for (Slots* slots : {&edits.before, &edits.after}) {
      for (auto& [anchor, nodes] : *slots) {
        for (onnx::NodeProto* node : nodes) delete node;
      }
    }
  }
}

void NodeEdits::Remove(const NodeSite& anchor) {
  ++edits_made_;
  if (!edits_[anchor.list].removed.insert(anchor.node).second) return;
  removed_.push_back(anchor.node);
  removed_keys_.push_back(OpKeyOf(*anchor.node));
}

void NodeEdits::RenameUses(const NodeSite& site, std::string from, std::string to) {
  ++edits_made_;
  renames_.push_back({site.list, std::move(from), std::move(to)});
}

std::vector<std::pair<std::string, std::string>> NodeEdits::TakeRenames() {
  std::vector<std::pair<std::string, std::string>> renames;
  renames.reserve(renames_.size());
  for (Rename& rename : renames_) renames.emplace_back(std::move(rename.from), std::move(rename.to));
  renames_.clear();
  return renames;
}

void NodeEdits::Retyped(const NodeSite& site, const std::string& old_key) {
  ++edits_made_;
  forgotten_[old_key].insert(site.node);
  retyped_.push_back(site);
}

void NodeEdits::TrackSubgraph(onnx::GraphProto& graph, std::string path,
                              const onnx::GraphProto* parent) {
  ++edits_made_;
  subgraphs_.push_back({&graph, std::move(path), parent});
}

void NodeEdits::Retire(std::string* name) {
  ++edits_made_;
  retired_.emplace_back(name);
}

const onnx::TensorProto* NodeEdits::AddInitializer(onnx::GraphProto& graph,
                                                   onnx::TensorProto tensor) {
  ++edits_made_;
  onnx::TensorProto* stored = graph.add_initializer();
  *stored = std::move(tensor);
  return stored;
}

const NodeEdits::ListEdits* NodeEdits::EditsOf(const NodeSite& site) const {
  auto it = edits_.find(site.list);
  return it == edits_.end() ? nullptr : &it->second;
}

int NodeEdits::AppendAround(const NodeSite& site,
                            std::vector<const onnx::NodeProto*>& nodes) const {
  const ListEdits* edits = EditsOf(site);
  int sides = 0;
  auto append = [&](const Slots& slots) {
    auto found = slots.find(site.node);
    if (found == slots.end()) return;
    ++sides;
    nodes.insert(nodes.end(), found->second.begin(), found->second.end());
  };
  if (edits != nullptr) append(edits->before);
  if (edits == nullptr || !edits->removed.contains(site.node)) nodes.push_back(site.node);
  if (edits != nullptr) append(edits->after);
  return sides;
}

std::vector<const onnx::NodeProto*> NodeEdits::Around(const NodeSite& site) const {
  std::vector<const onnx::NodeProto*> nodes;
  AppendAround(site, nodes);
  return nodes;
}

bool NodeEdits::EditedAround(const NodeSite& site) const {
  const ListEdits* edits = EditsOf(site);
  return edits != nullptr &&
         (edits->before.contains(site.node) || edits->after.contains(site.node) ||
          edits->removed.contains(site.node));
}

bool NodeEdits::IsRemoved(const NodeSite& site) const {
  const ListEdits* edits = EditsOf(site);
  return edits != nullptr && edits->removed.contains(site.node);
}

size_t NodeEdits::sides_inserted() const {
  size_t sides = 0;
  for (const auto& [list, edits] : edits_) sides += edits.before.size() + edits.after.size();
  return sides;
}


std::vector<onnx::NodeProto> NodeEdits::TakeInserted(const NodeSite& anchor, bool after) {
  std::vector<onnx::NodeProto> nodes;
  auto list = edits_.find(anchor.list);
  if (list == edits_.end()) return nodes;
  Slots& slots = after ? list->second.after : list->second.before;
  auto slot = slots.find(anchor.node);
  if (slot == slots.end()) return nodes;
  const bool on_arena = anchor.list->GetArena() != nullptr;
  absl::flat_hash_set<const onnx::NodeProto*> taken(slot->second.begin(), slot->second.end());
  nodes.reserve(slot->second.size());
  for (onnx::NodeProto* node : slot->second) {
    nodes.push_back(std::move(*node));
    if (!on_arena) delete node;
  }
  slots.erase(slot);
  std::erase_if(added_, [&](const NodeSite& site) { return taken.contains(site.node); });
  return nodes;
}

onnx::NodeProto* NodeEdits::Insert(const NodeSite& anchor, onnx::NodeProto node,
                                   std::vector<onnx::NodeProto*>& slot) {
  ++edits_made_;
  // On the list's arena, if it has one: Rebuild moves nodes by address.
  auto* stored = google::protobuf::Arena::CreateMessage<onnx::NodeProto>(anchor.list->GetArena());
  *stored = std::move(node);
  slot.push_back(stored);
  added_.push_back({stored, anchor.graph, anchor.list, anchor.path});
  return stored;
}

void NodeEdits::Apply(OpIndex& index, Retired& retired) {
  for (auto& [list, edits] : edits_) Rebuild(*list, edits, retired);
  for (const Rename& rename : renames_) RenameIn(*rename.list, rename.from, rename.to, retired);
  for (size_t i = 0; i < removed_.size(); ++i) forgotten_[removed_keys_[i]].insert(removed_[i]);
  for (const auto& [op, nodes] : forgotten_) index.Forget(op, nodes);
  for (NodeSite& site : added_) index.Add(site, 0, /*recurse=*/true);
  // A retyped node's subgraphs are indexed already.
  for (NodeSite& site : retyped_) index.Add(site, 0, /*recurse=*/false);
  for (auto& [graph, path, parent] : subgraphs_) index.AddShallow(*graph, std::move(path), parent);
  for (auto& name : retired_) retired.names.push_back(std::move(name));
  edits_.clear();
  removed_.clear();
  removed_keys_.clear();
  renames_.clear();
  forgotten_.clear();
  added_.clear();
  retyped_.clear();
  subgraphs_.clear();
  retired_.clear();
}

void NodeEdits::Rebuild(NodeList& list, ListEdits& edits, Retired& retired) {
  // The list and its nodes share one arena or none, so the unsafe-arena
  // moves neither copy nor leak.
  const bool on_arena = list.GetArena() != nullptr;
  std::vector<onnx::NodeProto*> old(list.size());
  list.UnsafeArenaExtractSubrange(0, list.size(), old.data());
  auto add = [&](onnx::NodeProto* node) { list.UnsafeArenaAddAllocated(node); };
  auto add_all = [&](const Slots& slots, const onnx::NodeProto* anchor) {
    auto it = slots.find(anchor);
    if (it == slots.end()) return;
    for (onnx::NodeProto* node : it->second) add(node);
  };
  for (onnx::NodeProto* node : old) {
    add_all(edits.before, node);
    if (!edits.removed.contains(node)) {
      add(node);
    } else if (!on_arena) {
      retired.nodes.emplace_back(node);
    }
    add_all(edits.after, node);
  }
}

namespace {

// Makes `names[i]` read `to`, handing the old string to `retired` (views of
// it stay valid).
void Replace(google::protobuf::RepeatedPtrField<std::string>& names, int i, const std::string& to,
             Retired& retired) {
  names.AddAllocated(new std::string(to));
  names.SwapElements(i, names.size() - 1);
  retired.names.emplace_back(names.ReleaseLast());
}

// Whether `graph` defines `name` itself (an input, an initializer or a node
// output), hiding the enclosing graph's.
bool Defines(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (input.name() == name) return true;
  }
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (tensor.name() == name) return true;
  }
  for (const onnx::SparseTensorProto& tensor : graph.sparse_initializer()) {
    if (tensor.values().name() == name) return true;
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) {
      if (output == name) return true;
    }
  }
  return false;
}

}  // namespace

void NodeEdits::RenameIn(NodeList& nodes, const std::string& from, const std::string& to,
                         Retired& retired) {
  for (onnx::NodeProto& node : nodes) {
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i) == from) Replace(*node.mutable_input(), i, to, retired);
    }
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) RenameInSubgraph(*attribute.mutable_g(), from, to, retired);
      for (onnx::GraphProto& graph : *attribute.mutable_graphs()) {
        RenameInSubgraph(graph, from, to, retired);
      }
    }
  }
}

void NodeEdits::RenameInSubgraph(onnx::GraphProto& graph, const std::string& from,
                                 const std::string& to, Retired& retired) {
  if (Defines(graph, from)) return;
  RenameIn(*graph.mutable_node(), from, to, retired);
  for (onnx::ValueInfoProto& output : *graph.mutable_output()) {
    if (output.name() == from) output.set_name(to);
  }
}

}  // namespace onnxconvert::ir
