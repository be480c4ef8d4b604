#include "converter/step_touches.h"

#include <utility>

namespace onnxconvert::converter {

void StepTouches::Reserve(size_t more) {
  touched_sites_.reserve(touched_sites_.size() + more);
  name_spans_.reserve(name_spans_.size() + 2 * more);
  touchable_ += more;
  if (make_early_ && early_ == nullptr && touchable_ >= kSideBySideNodes) {
    early_ = make_early_();
    for (const onnx::TensorProto* tensor : added_initializers_) early_->AddInitializer(tensor);
    if (!early_->ok()) early_.reset();
    make_early_ = nullptr;
  }
}

void StepTouches::ValidateEarly(TouchedSite& touched) {
  absl::string_view names[kMaxEarlyNames];
  size_t count = static_cast<size_t>(touched.inputs + touched.outputs);
  if (count > kMaxEarlyNames) return;
  for (size_t i = 0; i < count; ++i) names[i] = KeptName(touched.first_name + i);
  const onnx::NodeProto* node = touched.node;
  TouchedGroup group{main_, absl::MakeConstSpan(&node, 1),
                     absl::MakeConstSpan(names, touched.inputs),
                     absl::MakeConstSpan(names + touched.inputs, touched.outputs)};
  if (!wiring_->CheckWiringNow(group, *base_).ok()) return;  // left to the step's validation
  early_->AddNode(node);
  touched.early = true;
}

const onnx::TensorProto* StepTouches::AddInitializer(onnx::GraphProto& graph,
                                                     onnx::TensorProto tensor) {
  const onnx::TensorProto* stored = edits_.AddInitializer(graph, std::move(tensor));
  if (&graph == main_) {
    added_initializers_.push_back(stored);
    if (wiring_ != nullptr) wiring_->NoteInitializer(*stored);
    if (early_ != nullptr) early_->AddInitializer(stored);
  } else {
    subgraph_initializers_.push_back({&graph, stored});
  }
  return stored;
}

void StepTouches::AddConstantNode(const ir::NodeSite& site, std::string name,
                                  onnx::TensorProto tensor) {
  onnx::NodeProto node;
  node.set_op_type("Constant");
  node.add_output(std::move(name));
  onnx::AttributeProto& value = *node.add_attribute();
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  tensor.clear_name();
  *value.mutable_t() = std::move(tensor);
  edits_.InsertBefore(site, std::move(node));
}

std::string StepTouches::NeedsFull() const {
  if (!needs_full_.empty()) return needs_full_;
  return edits_.built_subgraphs() ? "a subgraph was built" : "";
}

StepChanges StepTouches::Collect() {
  StepChanges changes;
  changes.needs_full = NeedsFull();
  changes.retyped = edits_.retyped();
  changes.added = std::move(added_initializers_);
  changes.added_to_subgraphs = std::move(subgraph_initializers_);
  changes.early = std::move(early_);
  make_early_ = nullptr;
  touchable_ = 0;
  changes.functions_changed = !function_sites_.empty();
  if (changes.needs_full.empty()) CollectGroups(changes);
  touched_sites_.clear();
  function_sites_.clear();
  name_spans_.clear();
  chars_.clear();
  added_initializers_.clear();
  subgraph_initializers_.clear();
  needs_full_.clear();
  return changes;
}

void StepTouches::CollectGroups(StepChanges& changes) {
  size_t sides = 0;
  // The nodes of each group, in order, as [begin, end) in changes.nodes.
  std::vector<std::pair<size_t, size_t>> extents;
  extents.reserve(touched_sites_.size());
  changes.nodes.reserve(touched_sites_.size());
  for (const TouchedSite& touched : touched_sites_) {
    size_t begin = changes.nodes.size();
    if (!touched.early) sides += edits_.AppendAround(SiteOf(touched), changes.nodes);
    extents.emplace_back(begin, changes.nodes.size());
  }
  std::vector<const onnx::NodeProto*> in_functions;
  for (const ir::NodeSite& site : function_sites_) sides += edits_.AppendAround(site, in_functions);
  // Views, made once the storage no longer grows (moving a vector keeps
  // its buffer).
  changes.names.reserve(name_spans_.size());
  for (size_t i = 0; i < name_spans_.size(); ++i) changes.names.push_back(KeptName(i));
  changes.chars = std::move(chars_);
  absl::Span<const onnx::NodeProto* const> nodes(changes.nodes);
  absl::Span<const absl::string_view> names(changes.names);
  changes.groups.reserve(touched_sites_.size());
  for (size_t i = 0; i < touched_sites_.size(); ++i) {
    const TouchedSite& touched = touched_sites_[i];
    if (touched.early) continue;
    changes.groups.push_back(
        {touched.graph, nodes.subspan(extents[i].first, extents[i].second - extents[i].first),
         names.subspan(touched.first_name, touched.inputs),
         names.subspan(touched.first_name + touched.inputs, touched.outputs), touched.rebound});
  }
  // Insertions around a node no one noted would go unchecked.
  std::vector<const onnx::NodeProto*> removed = edits_.Removed();
  if (!removed.empty()) {
    absl::flat_hash_set<const onnx::NodeProto*> touched;
    for (const TouchedSite& site : touched_sites_) touched.insert(site.node);
    for (const ir::NodeSite& site : function_sites_) touched.insert(site.node);
    for (const onnx::NodeProto* node : removed) {
      if (!touched.contains(node)) changes.needs_full = "a node was removed unnoted";
    }
  }
  if (edits_.sides_inserted() != sides) changes.needs_full = "nodes were inserted unnoted";
}

}  // namespace onnxconvert::converter
