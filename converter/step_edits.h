#ifndef ONNX_CONVERT_CONVERTER_STEP_EDITS_H_
#define ONNX_CONVERT_CONVERTER_STEP_EDITS_H_

// Internal to the converter: the edits of one step, and what it touched.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "converter/incremental_validation.h"
#include "converter/op_index.h"
#include "converter/side_by_side.h"
#include "google/protobuf/arena.h"
#include "proto/onnx.pb.h"
#include "schema/inference.h"

namespace onnxconvert::converter {

// What steps took out of the model that inferred types may still view
// (value names of replaced outputs and of removed nodes), kept until the
// conversion ends.
struct Retired {
  std::vector<std::unique_ptr<std::string>> names;
  std::vector<std::unique_ptr<onnx::NodeProto>> nodes;
};

// What a step changed, for validating it.
struct StepChanges {
  // Where the step changed the main graph and subgraphs, node by node; they
  // view the storage below.
  std::vector<TouchedGroup> groups;
  std::vector<const onnx::NodeProto*> nodes;
  std::vector<absl::string_view> names;
  std::vector<char> chars;

  // Initializers the step added to the main graph.
  std::vector<const onnx::TensorProto*> added;
  // Why only a validation of the whole model will do ("" when the touched
  // nodes suffice): a change inside a subgraph or a function, say.
  std::string needs_full;
  // The nodes rewritten in place and validated while the step went on (not
  // among `groups`), if the step validated any early.
  std::unique_ptr<EarlyValidator> early;
  // Whether some node's op type changed.
  bool retyped = false;
};

// The structural edits of one step, applied when the step ends so that the
// node lists are rebuilt once per step, in time linear in their size, and
// the nodes keep their addresses. Also notes what the step touched, for
// its validation.
class StepEdits {
 public:
  explicit StepEdits(const onnx::GraphProto* main) : main_(main) {}
  StepEdits(const StepEdits&) = delete;
  StepEdits& operator=(const StepEdits&) = delete;
  // Frees the nodes inserted by a step that failed before Apply (an arena
  // frees its own).
  ~StepEdits() {
    for (auto& [list, edits] : edits_) {
      if (list->GetArena() != nullptr) continue;
      for (auto* map : {&edits.before, &edits.after}) {
        for (auto& [anchor, nodes] : *map) {
          for (onnx::NodeProto* node : nodes) delete node;
        }
      }
    }
  }

  // Notes that the step changes `site`'s node (or what is around it), before
  // it does: its inputs and outputs as they are now. Once per node and step.
  void Touch(const NodeSite& site) {
    if (touched_log_ != nullptr) touched_log_->insert(site.node);
    if (site.graph == nullptr) {
      NeedFull("a node of a function changed");
      return;
    }
    for (const onnx::AttributeProto& attribute : site.node->attribute()) {
      if (attribute.has_g() || attribute.graphs_size() > 0) {
        NeedFull("a node with subgraphs changed");
        return;
      }
    }
    TouchedSite& touched = touched_sites_.emplace_back();
    touched.node = site.node;
    touched.graph = site.graph;
    touched.list = site.list;
    touched.first_name = name_spans_.size();
    touched.inputs = site.node->input_size();
    touched.outputs = site.node->output_size();
    for (const std::string& input : site.node->input()) KeepName(input);
    for (const std::string& output : site.node->output()) KeepName(output);
  }
  // Adds every node the step touches to `log` (null: none), as it does.
  void LogTouched(absl::flat_hash_set<const onnx::NodeProto*>* log) { touched_log_ = log; }

  // Makes room for `more` nodes to be touched; once many are, starts
  // validating early the nodes rewritten in place, if armed.
  void Reserve(size_t more) {
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

  // Lets this step validate early the nodes it rewrites in place, once it
  // has many to touch: `make` starts the validator, `wiring` checks each
  // node's wiring against `base`, the inference before the step.
  void ArmEarly(std::function<std::unique_ptr<EarlyValidator>()> make,
                IncrementalValidator* wiring, const schema::GraphTypes* base) {
    make_early_ = std::move(make);
    wiring_ = wiring;
    base_ = base;
  }

  // Notes that the step is done with `site`'s node: if the node was
  // rewritten in place, it goes to the early validator.
  void Finished(const NodeSite& site) {
    if (early_ == nullptr || !needs_full_.empty() || touched_sites_.empty()) return;
    TouchedSite& touched = touched_sites_.back();
    if (touched.node != site.node || site.graph != main_) return;
    if (auto list = edits_.find(site.list); list != edits_.end()) {
      const ListEdits& edits = list->second;
      if (edits.before.contains(site.node) || edits.after.contains(site.node) ||
          edits.removed.contains(site.node)) {
        return;  // validated with what was inserted around it, after the step
      }
    }
    absl::string_view names[kMaxEarlyNames];
    size_t count = static_cast<size_t>(touched.inputs + touched.outputs);
    if (count > kMaxEarlyNames) return;
    for (size_t i = 0; i < count; ++i) names[i] = KeptName(touched.first_name + i);
    const onnx::NodeProto* node = site.node;
    TouchedGroup group{main_, absl::MakeConstSpan(&node, 1),
                       absl::MakeConstSpan(names, touched.inputs),
                       absl::MakeConstSpan(names + touched.inputs, touched.outputs)};
    if (!wiring_->CheckWiringNow(group, *base_).ok()) return;  // left to the step's validation
    early_->AddNode(node);
    touched.early = true;
  }
  // Notes that only a validation of the whole model will do, and why.
  void NeedFull(absl::string_view why) {
    if (needs_full_.empty()) needs_full_ = std::string(why);
  }
  // How many structural edits (insertions, removals, retypings, subgraphs,
  // initializers, retired names) the step has made so far.
  int64_t edits_made() const { return edits_made_; }
  // Adds `tensor` to `graph`'s initializers.
  const onnx::TensorProto* AddInitializer(onnx::GraphProto& graph, onnx::TensorProto tensor) {
    ++edits_made_;
    onnx::TensorProto* stored = graph.add_initializer();
    *stored = std::move(tensor);
    if (&graph == main_) {
      added_initializers_.push_back(stored);
      if (wiring_ != nullptr) wiring_->NoteInitializer(*stored);
      if (early_ != nullptr) early_->AddInitializer(stored);
    } else {
      NeedFull("a subgraph got a constant");
    }
    return stored;
  }

  onnx::NodeProto* InsertBefore(const NodeSite& anchor, onnx::NodeProto node) {
    return Insert(anchor, std::move(node), edits_[anchor.list].before[anchor.node]);
  }
  onnx::NodeProto* InsertAfter(const NodeSite& anchor, onnx::NodeProto node) {
    return Insert(anchor, std::move(node), edits_[anchor.list].after[anchor.node]);
  }
  // Drops the anchor node itself (it was replaced by inserted ones).
  void Remove(const NodeSite& anchor) {
    ++edits_made_;
    edits_[anchor.list].removed.insert(anchor.node);
    forgotten_[OpKeyOf(*anchor.node)].insert(anchor.node);
  }
  // The nodes standing where `site`'s node stood so far this step: those
  // inserted before it, the node itself unless removed, those inserted
  // after it, in order (for the report's before/after text).
  std::vector<const onnx::NodeProto*> Around(const NodeSite& site) const {
    std::vector<const onnx::NodeProto*> nodes;
    auto list = edits_.find(site.list);
    const ListEdits* edits = list == edits_.end() ? nullptr : &list->second;
    auto append = [&](const absl::flat_hash_map<const onnx::NodeProto*,
                                                std::vector<onnx::NodeProto*>>& slots) {
      auto found = slots.find(site.node);
      if (found == slots.end()) return;
      nodes.insert(nodes.end(), found->second.begin(), found->second.end());
    };
    if (edits != nullptr) append(edits->before);
    if (edits == nullptr || !edits->removed.contains(site.node)) nodes.push_back(site.node);
    if (edits != nullptr) append(edits->after);
    return nodes;
  }
  // Records that `site`'s node has a new op type; `old_key` was its OpKeyOf.
  void Retyped(const NodeSite& site, const std::string& old_key) {
    ++edits_made_;
    forgotten_[old_key].insert(site.node);
    retyped_.push_back(site);
  }
  // Tracks the nodes of a subgraph an adapter built inside `parent`.
  void TrackSubgraph(onnx::GraphProto& graph, const std::string& path,
                     const onnx::GraphProto* parent) {
    ++edits_made_;
    subgraphs_.push_back({&graph, path, parent});
    NeedFull("a subgraph was built");
  }
  // Keeps a retired value name alive: inferred types view such strings.
  void Retire(std::string* name) {
    ++edits_made_;
    retired_.emplace_back(name);
  }

  // Rebuilds the edited node lists and brings `index` up to date; returns
  // what the step changed.
  StepChanges Apply(OpIndex& index, Retired& retired) {
    StepChanges changes = Collect();
    for (auto& [list, edits] : edits_) Rebuild(*list, edits, retired);
    for (const auto& [op, nodes] : forgotten_) index.Forget(op, nodes);
    for (NodeSite& site : added_) index.Add(site, 0, /*recurse=*/true);
    // A retyped node's subgraphs are indexed already.
    for (NodeSite& site : retyped_) index.Add(site, 0, /*recurse=*/false);
    for (auto& [graph, path, parent] : subgraphs_) index.AddShallow(*graph, std::move(path), parent);
    for (auto& name : retired_) retired.names.push_back(std::move(name));
    edits_.clear();
    forgotten_.clear();
    added_.clear();
    retyped_.clear();
    subgraphs_.clear();
    retired_.clear();
    touched_sites_.clear();
    name_spans_.clear();
    chars_.clear();
    added_initializers_.clear();
    needs_full_.clear();
    return changes;
  }

 private:
  // A node noted by Touch, with its inputs and outputs before the step.
  struct TouchedSite {
    onnx::NodeProto* node;
    const onnx::GraphProto* graph;
    NodeList* list;
    size_t first_name;  // in name_spans_: the inputs, then the outputs
    int inputs;
    int outputs;
    bool early = false;  // validated early, on its own
  };

  // A node with more inputs and outputs than this is validated after the
  // step, not early.
  static constexpr size_t kMaxEarlyNames = 64;

  // Copies `name` into the step's buffer of names.
  void KeepName(absl::string_view name) {
    name_spans_.emplace_back(chars_.size(), name.size());
    chars_.insert(chars_.end(), name.begin(), name.end());
  }
  // The `i`th name kept, viewing the buffer (until it grows).
  absl::string_view KeptName(size_t i) const {
    return absl::string_view(chars_.data() + name_spans_[i].first, name_spans_[i].second);
  }

  // The touched nodes with what was inserted around them, before the node
  // lists are rebuilt (which retires removed nodes).
  StepChanges Collect() {
    StepChanges changes;
    changes.needs_full = needs_full_;
    changes.retyped = !retyped_.empty();
    changes.added = std::move(added_initializers_);
    changes.early = std::move(early_);
    make_early_ = nullptr;
    touchable_ = 0;
    if (!changes.needs_full.empty()) return changes;
    size_t anchors = 0;
    // The nodes of each group, in order, as [begin, end) in changes.nodes.
    std::vector<std::pair<size_t, size_t>> extents;
    extents.reserve(touched_sites_.size());
    changes.nodes.reserve(touched_sites_.size());
    for (TouchedSite& touched : touched_sites_) {
      const onnx::NodeProto* anchor = touched.node;
      size_t begin = changes.nodes.size();
      if (touched.early) {
        extents.emplace_back(begin, begin);
        continue;
      }
      auto list = edits_.find(touched.list);
      ListEdits* edits = list == edits_.end() ? nullptr : &list->second;
      auto add_inserted = [&](auto& map) {
        auto it = map.find(anchor);
        if (it == map.end()) return;
        ++anchors;
        changes.nodes.insert(changes.nodes.end(), it->second.begin(), it->second.end());
      };
      if (edits != nullptr) add_inserted(edits->before);
      if (edits == nullptr || !edits->removed.contains(anchor)) changes.nodes.push_back(anchor);
      if (edits != nullptr) add_inserted(edits->after);
      extents.emplace_back(begin, changes.nodes.size());
    }
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
           names.subspan(touched.first_name + touched.inputs, touched.outputs)});
    }
    // Insertions around a node no one noted would go unchecked.
    size_t inserted_around = 0;
    size_t removed = 0;
    for (const auto& [list, edits] : edits_) {
      inserted_around += edits.before.size() + edits.after.size();
      removed += edits.removed.size();
    }
    if (removed > 0) {
      absl::flat_hash_set<const onnx::NodeProto*> touched;
      for (const TouchedSite& site : touched_sites_) touched.insert(site.node);
      for (const auto& [list, edits] : edits_) {
        for (const onnx::NodeProto* node : edits.removed) {
          if (!touched.contains(node)) changes.needs_full = "a node was removed unnoted";
        }
      }
    }
    if (inserted_around != anchors) changes.needs_full = "nodes were inserted unnoted";
    return changes;
  }

  struct ListEdits {
    absl::flat_hash_map<const onnx::NodeProto*, std::vector<onnx::NodeProto*>> before;
    absl::flat_hash_map<const onnx::NodeProto*, std::vector<onnx::NodeProto*>> after;
    absl::flat_hash_set<const onnx::NodeProto*> removed;
  };

  onnx::NodeProto* Insert(const NodeSite& anchor, onnx::NodeProto node,
                          std::vector<onnx::NodeProto*>& slot) {
    ++edits_made_;
    // On the list's arena, if it has one: Rebuild moves nodes by address.
    auto* stored = google::protobuf::Arena::CreateMessage<onnx::NodeProto>(
        anchor.list->GetArena());
    *stored = std::move(node);
    slot.push_back(stored);
    added_.push_back({stored, anchor.graph, anchor.list, anchor.path});
    return stored;
  }

  // Rebuilds `list` with `edits`, every node keeping its address; removed
  // nodes go to `retired` (on an arena, the arena keeps them).
  static void Rebuild(NodeList& list, ListEdits& edits, Retired& retired) {
    // The list and its nodes share one arena or none, so the unsafe-arena
    // moves neither copy nor leak.
    const bool on_arena = list.GetArena() != nullptr;
    std::vector<onnx::NodeProto*> old(list.size());
    list.UnsafeArenaExtractSubrange(0, list.size(), old.data());
    auto add = [&](onnx::NodeProto* node) { list.UnsafeArenaAddAllocated(node); };
    auto add_all = [&](auto& map, const onnx::NodeProto* anchor) {
      auto it = map.find(anchor);
      if (it == map.end()) return;
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

  absl::flat_hash_map<NodeList*, ListEdits> edits_;
  std::map<std::string, absl::flat_hash_set<const onnx::NodeProto*>> forgotten_;
  std::vector<NodeSite> added_;    // inserted nodes
  std::vector<NodeSite> retyped_;  // nodes whose op type changed
  struct Subgraph {
    onnx::GraphProto* graph;
    std::string path;
    const onnx::GraphProto* parent;
  };
  std::vector<Subgraph> subgraphs_;
  std::vector<std::unique_ptr<std::string>> retired_;
  absl::flat_hash_set<const onnx::NodeProto*>* touched_log_ = nullptr;
  const onnx::GraphProto* main_;
  std::vector<TouchedSite> touched_sites_;
  std::vector<std::pair<size_t, size_t>> name_spans_;  // (offset, size) in chars_
  std::vector<char> chars_;
  // Early validation: armed for the step, started once it touches enough.
  std::function<std::unique_ptr<EarlyValidator>()> make_early_;
  IncrementalValidator* wiring_ = nullptr;
  const schema::GraphTypes* base_ = nullptr;
  std::unique_ptr<EarlyValidator> early_;
  size_t touchable_ = 0;
  std::vector<const onnx::TensorProto*> added_initializers_;
  std::string needs_full_;
  int64_t edits_made_ = 0;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_STEP_EDITS_H_
