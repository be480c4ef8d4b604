#include "converter/converter.h"

#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "adapters/rewrites.h"
#include "converter/expand.h"
#include "converter/incremental_validation.h"
#include "converter/side_by_side.h"
#include "ir/graph_index.h"
#include "ir/json_writer.h"
#include "ir/status_macros.h"
#include "schema/checker.h"
#include "schema/inference.h"
#include "schema/registry.h"
#include "schema/type_strings.h"

namespace onnxconvert::converter {
namespace {

using schema::OpSchema;
using schema::Registry;

constexpr int kMaxDepth = 64;
// How many nodes ahead a walk over a large graph fetches.
constexpr int kLookahead = 8;

using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

// A node of ai.onnx somewhere in the model.
struct NodeSite {
  onnx::NodeProto* node;
  onnx::GraphProto* graph;  // null inside functions
  NodeList* list;           // the node list that holds the node
  absl::string_view path;   // of the graph; OpIndex keeps the string
};

// The index key of an operator: its canonical domain and its name.
std::string Key(absl::string_view domain, absl::string_view op) {
  return absl::StrCat(domain, "\x1f", op);
}

// The mutable object behind `message`, reached without a mutable accessor
// (which would write has-bits while other threads read the model).
template <typename T>
T* Mutable(const T& message) {
  return const_cast<T*>(&message);
}

// Every ai.onnx node of the model by op type, collected once and kept up to
// date as steps insert, replace and remove nodes.
class OpIndex {
 public:
  // Indexes the nodes of `domains` (canonical names); the others are only
  // counted. Only reads `model` while it is built.
  OpIndex(onnx::ModelProto& model, absl::flat_hash_set<std::string> domains)
      : domains_(std::move(domains)) {
    if (model.has_graph()) AddGraph(*Mutable(model.graph()), "main", 0);
    for (const onnx::FunctionProto& function : model.functions()) {
      absl::string_view path =
          Intern(absl::StrCat("function '", function.domain(), ".", function.name(), "'"));
      for (const onnx::NodeProto& node : function.node()) {
        Add({Mutable(node), nullptr, Mutable(function.node()), path}, 0, true);
      }
    }
  }

  absl::Span<const NodeSite> NodesOf(absl::string_view domain, absl::string_view op) const {
    auto it = by_op_.find(Key(domain, op));
    if (it == by_op_.end()) return {};
    return it->second;
  }
  const std::map<std::string, int>& others() const { return others_; }

  // Adds `site` (and, when `recurse`, the nodes of its subgraphs).
  void Add(const NodeSite& site, int depth, bool recurse) {
    onnx::NodeProto& node = *site.node;
    absl::string_view domain = Registry::CanonicalDomain(node.domain());
    if (domain != last_domain_) {
      last_domain_ = std::string(domain);
      last_indexed_ = domains_.contains(domain);
    }
    if (last_indexed_) {
      SitesOf(domain, node.op_type()).push_back(site);
    } else {
      ++others_[absl::StrCat(domain.empty() ? "ai.onnx" : domain, ".", node.op_type())];
    }
    if (!recurse || depth >= kMaxDepth) return;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (!attribute.has_g() && attribute.graphs_size() == 0) continue;
      std::string owner = absl::StrCat(" of '", node.name(), "' (", node.op_type(), ")");
      if (attribute.has_g()) {
        parents_[&attribute.g()] = site.graph;
        AddGraph(*Mutable(attribute.g()), absl::StrCat(site.path, "/", attribute.name(), owner),
                 depth + 1);
      }
      for (int i = 0; i < attribute.graphs_size(); ++i) {
        parents_[&attribute.graphs(i)] = site.graph;
        AddGraph(*Mutable(attribute.graphs(i)),
                 absl::StrCat(site.path, "/", attribute.name(), "[", i, "]", owner), depth + 1);
      }
    }
  }

  // The graph enclosing subgraph `graph`, or null (a top-level graph or a
  // function).
  const onnx::GraphProto* ParentOf(const onnx::GraphProto* graph) const {
    auto it = parents_.find(graph);
    return it == parents_.end() ? nullptr : it->second;
  }

  // Adds the nodes of `graph`, not those of its subgraphs; `parent`
  // encloses it.
  void AddShallow(onnx::GraphProto& graph, std::string path, const onnx::GraphProto* parent) {
    parents_[&graph] = parent;
    absl::string_view interned = Intern(std::move(path));
    for (onnx::NodeProto& node : *graph.mutable_node()) {
      Add({&node, &graph, graph.mutable_node(), interned}, 0, false);
    }
  }

  // Forgets `nodes`, listed under `key` (KeyOf their domain and op).
  void Forget(absl::string_view key, const absl::flat_hash_set<const onnx::NodeProto*>& nodes) {
    auto it = by_op_.find(key);
    if (it == by_op_.end()) return;
    std::erase_if(it->second, [&](const NodeSite& site) { return nodes.contains(site.node); });
  }

 private:
  void AddGraph(onnx::GraphProto& graph, std::string path, int depth) {
    absl::string_view interned = Intern(std::move(path));
    const NodeList& nodes = graph.node();
    for (int i = 0; i < nodes.size(); ++i) {
      // Large graphs miss the cache on every node: fetch the nodes ahead,
      // then their op types.
      if (i + 2 * kLookahead < nodes.size()) __builtin_prefetch(&nodes[i + 2 * kLookahead]);
      if (i + kLookahead < nodes.size()) {
        __builtin_prefetch(nodes[i + kLookahead].op_type().data());
        __builtin_prefetch(&nodes[i + kLookahead].attribute());
      }
      Add({Mutable(nodes[i]), &graph, Mutable(graph.node()), interned}, depth, true);
    }
  }

  // A view of `path` that lives as long as the index.
  absl::string_view Intern(std::string path) {
    paths_.push_back(std::move(path));
    return paths_.back();
  }

  std::deque<std::string> paths_;

  // The sites of op `op` of `domain`, found without building a key string.
  std::vector<NodeSite>& SitesOf(absl::string_view domain, absl::string_view op) {
    char buffer[96];
    absl::string_view key;
    std::string long_key;
    if (domain.size() + op.size() + 1 <= sizeof(buffer)) {
      std::memcpy(buffer, domain.data(), domain.size());
      buffer[domain.size()] = '\x1f';
      std::memcpy(buffer + domain.size() + 1, op.data(), op.size());
      key = absl::string_view(buffer, domain.size() + 1 + op.size());
    } else {
      long_key = Key(domain, op);
      key = long_key;
    }
    auto it = by_op_.find(key);
    if (it == by_op_.end()) it = by_op_.emplace(std::string(key), std::vector<NodeSite>()).first;
    return it->second;
  }

  absl::flat_hash_set<std::string> domains_;
  // Whether the domain of the last node added was indexed: most nodes share
  // one domain.
  std::string last_domain_ = "\x01";
  bool last_indexed_ = false;
  absl::flat_hash_map<std::string, std::vector<NodeSite>> by_op_;
  std::map<std::string, int> others_;
  absl::flat_hash_map<const onnx::GraphProto*, const onnx::GraphProto*> parents_;
};

// The index key of `node` (domain and op type).
std::string KeyOf(const onnx::NodeProto& node) {
  return Key(Registry::CanonicalDomain(node.domain()), node.op_type());
}

// What steps took out of the model that inferred types may still view
// (value names of replaced outputs and of removed nodes), kept until the
// conversion ends.
struct Retired {
  std::vector<std::unique_ptr<std::string>> names;
  std::vector<std::unique_ptr<onnx::NodeProto>> nodes;
};

// What a step changed, for validating it.
struct StepChanges {
  // Where the step changed the main graph, node by node; they view the
  // storage below.
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
  // Frees the nodes inserted by a step that failed before Apply.
  ~StepEdits() {
    for (auto& [list, edits] : edits_) {
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
    if (site.graph != main_) {
      NeedFull(site.graph == nullptr ? "a node of a function changed"
                                     : "a node of a subgraph changed");
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
    touched.list = site.list;
    touched.first_name = name_spans_.size();
    touched.inputs = site.node->input_size();
    touched.outputs = site.node->output_size();
    for (const std::string& input : site.node->input()) KeepName(input);
    for (const std::string& output : site.node->output()) KeepName(output);
  }
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
    for (size_t i = 0; i < count; ++i) {
      auto [offset, size] = name_spans_[touched.first_name + i];
      names[i] = absl::string_view(chars_.data() + offset, size);
    }
    const onnx::NodeProto* node = site.node;
    TouchedGroup group{absl::MakeConstSpan(&node, 1),
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
  // Adds `tensor` to `graph`'s initializers.
  const onnx::TensorProto* AddInitializer(onnx::GraphProto& graph, onnx::TensorProto tensor) {
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
    edits_[anchor.list].removed.insert(anchor.node);
    forgotten_[KeyOf(*anchor.node)].insert(anchor.node);
  }
  // Records that `site`'s node has a new op type; `old_key` was its KeyOf.
  void Retyped(const NodeSite& site, const std::string& old_key) {
    forgotten_[old_key].insert(site.node);
    retyped_.push_back(site);
  }
  // Tracks the nodes of a subgraph an adapter built inside `parent`.
  void TrackSubgraph(onnx::GraphProto& graph, const std::string& path,
                     const onnx::GraphProto* parent) {
    subgraphs_.push_back({&graph, path, parent});
    NeedFull("a subgraph was built");
  }
  // Keeps a retired value name alive: inferred types view such strings.
  void Retire(std::string* name) { retired_.emplace_back(name); }

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

  // The touched nodes with what was inserted around them, before the node
  // lists are rebuilt (which frees removed nodes).
  StepChanges Collect() {
    StepChanges changes;
    changes.needs_full = needs_full_;
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
    // Views, made once the storage no longer grows.
    changes.chars = std::move(chars_);
    changes.names.reserve(name_spans_.size());
    for (auto [offset, size] : name_spans_) {
      changes.names.emplace_back(changes.chars.data() + offset, size);
    }
    absl::Span<const onnx::NodeProto* const> nodes(changes.nodes);
    absl::Span<const absl::string_view> names(changes.names);
    changes.groups.reserve(touched_sites_.size());
    for (size_t i = 0; i < touched_sites_.size(); ++i) {
      const TouchedSite& touched = touched_sites_[i];
      if (touched.early) continue;
      changes.groups.push_back(
          {nodes.subspan(extents[i].first, extents[i].second - extents[i].first),
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
    auto* stored = new onnx::NodeProto(std::move(node));
    slot.push_back(stored);
    added_.push_back({stored, anchor.graph, anchor.list, anchor.path});
    return stored;
  }

  // Rebuilds `list` with `edits`; removed nodes go to `retired`.
  static void Rebuild(NodeList& list, ListEdits& edits, Retired& retired) {
    std::vector<onnx::NodeProto*> old(list.size());
    list.ExtractSubrange(0, list.size(), old.data());
    auto add_all = [&](auto& map, const onnx::NodeProto* anchor) {
      auto it = map.find(anchor);
      if (it == map.end()) return;
      for (onnx::NodeProto* node : it->second) list.AddAllocated(node);
    };
    for (onnx::NodeProto* node : old) {
      add_all(edits.before, node);
      if (edits.removed.contains(node)) {
        retired.nodes.emplace_back(node);
      } else {
        list.AddAllocated(node);
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
};

// The version `imports` gives `domain` (canonical), if any.
std::optional<int64_t> ImportedOpset(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
    absl::string_view domain) {
  for (const auto& opset : imports) {
    if (Registry::CanonicalDomain(opset.domain()) == domain) return opset.version();
  }
  return std::nullopt;
}

void SetImportedOpset(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                      absl::string_view domain, int64_t opset) {
  for (auto& entry : imports) {
    if (Registry::CanonicalDomain(entry.domain()) == domain) entry.set_version(opset);
  }
}

std::string NodeName(const onnx::NodeProto& node) {
  return node.name().empty() ? absl::StrCat("(unnamed ", node.op_type(), ")")
                             : absl::StrCat("'", node.name(), "'");
}

// "step 12 -> 13", or "ai.onnx.ml step 2 -> 1" for another domain.
std::string StepName(absl::string_view domain, int64_t from, int64_t to) {
  return absl::StrCat(domain, domain.empty() ? "" : " ", "step ", from, " -> ", to);
}

absl::Status StepError(absl::StatusCode code, absl::string_view domain, int64_t from, int64_t to,
                       const NodeSite& site, const OpSchema& schema, absl::string_view reason) {
  return absl::Status(code, absl::StrFormat("%s: %s \xE2\x80\xBA node %s (%s): %s",
                                            StepName(domain, from, to), site.path,
                                            NodeName(*site.node), schema.Label(), reason));
}

// The types of every value, looked up by graph and name: inferred when
// first asked for, and replaced by the validation of each changed step.
class TypeTable {
 public:
  using Result = absl::StatusOr<schema::InferenceResult>;

  explicit TypeTable(const onnx::ModelProto& model) : model_(model) {}

  const onnx::TypeProto* TypeOf(const onnx::GraphProto* graph, absl::string_view name) const {
    if (graph == nullptr) return nullptr;
    if (result_ == nullptr) result_ = std::make_unique<Result>(schema::InferModel(model_));
    if (!result_->ok()) return nullptr;
    auto g = (*result_)->graphs.find(graph);
    if (g == (*result_)->graphs.end()) return nullptr;
    auto it = g->second.types.find(name);
    return it == g->second.types.end() ? nullptr : it->second;
  }
  // Uses `result`, inferred (strictly, if `strict`) for the model as it is
  // now.
  void Reset(std::unique_ptr<Result> result, bool strict) {
    result_ = std::move(result);
    strict_ = strict;
  }
  // Forgets the types: the model changed; the next lookup infers again.
  void Invalidate() {
    result_.reset();
    strict_ = false;
  }
  // The strict inference of the model as it is now, or null.
  schema::InferenceResult* strict() {
    return strict_ && result_ != nullptr && result_->ok() ? &**result_ : nullptr;
  }

 private:
  const onnx::ModelProto& model_;
  mutable std::unique_ptr<Result> result_;
  bool strict_ = false;
};


// The constants adapters add: one initializer per distinct small value and
// graph (a thousand Unsqueeze nodes moving axes = [0] to an input share
// one), under fresh names.
class AddedConstants {
 public:
  absl::StatusOr<std::string> Add(onnx::GraphProto* graph, NameGenerator& names,
                                  StepEdits& edits, const onnx::NodeProto& node,
                                  onnx::TensorProto value) {
    if (graph == nullptr) {
      return absl::FailedPreconditionError(
          "a constant input would be needed inside a function body (not supported yet)");
    }
    value.clear_name();
    bool shareable = value.ByteSizeLong() <= kShareableBytes;
    Shared& shared = added_[graph];
    if (shareable) {
      key_.clear();
      value.AppendToString(&key_);  // reuses the buffer
      auto it = shared.find(key_);
      if (it != shared.end()) return it->second;
    }
    std::string name = names.FreshName(node.name().empty() ? node.op_type() : node.name());
    value.set_name(name);
    edits.AddInitializer(*graph, std::move(value));
    if (shareable) shared.emplace(key_, name);
    return name;
  }

 private:
  static constexpr size_t kShareableBytes = 256;
  // Names of the constants added to a graph, by serialized value.
  using Shared = absl::flat_hash_map<std::string, std::string>;
  absl::flat_hash_map<const onnx::GraphProto*, Shared> added_;
  std::string key_;  // scratch
};

// The constants of each graph, by name: initializers and the outputs of
// Constant nodes, collected once per graph when first asked for and
// forgotten when a step changes the graphs.
class ConstantTable {
 public:
  // The constant `name` as seen from `graph`: its own, or an enclosing
  // graph's (the outer scope).
  const onnx::TensorProto* Find(const OpIndex& index, const onnx::GraphProto* graph,
                                absl::string_view name) {
    for (int depth = 0; graph != nullptr && depth <= kMaxDepth; ++depth) {
      auto [it, inserted] = graphs_.try_emplace(graph);
      if (inserted) Collect(*graph, it->second);
      auto found = it->second.find(name);
      if (found != it->second.end()) return found->second;
      graph = index.ParentOf(graph);
    }
    return nullptr;
  }
  void Clear() {
    graphs_.clear();
    owned_.clear();
  }

 private:
  using Constants = absl::flat_hash_map<std::string, const onnx::TensorProto*>;

  void Collect(const onnx::GraphProto& graph, Constants& constants) {
    for (const onnx::TensorProto& tensor : graph.initializer()) {
      constants.try_emplace(tensor.name(), &tensor);
    }
    for (const onnx::NodeProto& node : graph.node()) {
      if (node.op_type() != "Constant" || node.output_size() != 1 ||
          !Registry::CanonicalDomain(node.domain()).empty()) {
        continue;
      }
      if (const onnx::TensorProto* value = ConstantValue(node)) {
        constants.try_emplace(node.output(0), value);
      }
    }
  }

  // The value a Constant node produces, or null (sparse values).
  const onnx::TensorProto* ConstantValue(const onnx::NodeProto& node) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.name() == "value" && attribute.has_t()) return &attribute.t();
      if (std::optional<onnx::TensorProto> tensor = adapters::ShorthandTensor(attribute)) {
        owned_.push_back(*std::move(tensor));
        return &owned_.back();
      }
    }
    return nullptr;
  }

  absl::flat_hash_map<const onnx::GraphProto*, Constants> graphs_;
  std::deque<onnx::TensorProto> owned_;
};

// What one step works with.
struct StepContext {
  OpIndex& index;
  const TypeTable& types;
  NameGenerator& names;
  StepEdits& edits;
  ConstantTable& constants;
  AddedConstants& added;
  absl::string_view domain;  // canonical: "" for ai.onnx
  int64_t from;
  int64_t to;
  bool dry_run;
  bool expand;
  bool allow_casts;
  const std::function<bool()>& should_stop;
  int64_t polled = 0;  // nodes seen since the last poll of should_stop
};

// How many nodes a step converts between polls of should_stop.
constexpr int64_t kStopPollNodes = 256;

// The error of a conversion stopped at a step.
absl::Status Stopped(absl::string_view domain, int64_t from, int64_t to) {
  return absl::CancelledError(
      absl::StrCat(StepName(domain, from, to), ": the conversion was stopped (cancelled or past "
                   "its deadline)"));
}

// The adapter context for converting `site`'s node from `current` to `next`.
adapters::AdapterContext MakeAdapterContext(StepContext& step, const NodeSite& site,
                                            const OpSchema& current, const OpSchema& next,
                                            std::vector<adapters::Change>& changes) {
  adapters::AdapterContext ctx{
      *site.node, current, next,
      [&step, &site](absl::string_view value) { return step.types.TypeOf(site.graph, value); },
      changes,
      [&step, &site](onnx::TensorProto value) {
        return step.added.Add(site.graph, step.names, step.edits, *site.node, std::move(value));
      },
      [&step, &site](absl::string_view name) {
        return step.constants.Find(step.index, site.graph, name);
      }};
  ctx.to_opset = step.to;
  ctx.insert_before = [&step, &site](onnx::NodeProto node) {
    return step.edits.InsertBefore(site, std::move(node));
  };
  ctx.insert_after = [&step, &site](onnx::NodeProto node) {
    return step.edits.InsertAfter(site, std::move(node));
  };
  ctx.fresh_name = [&step](absl::string_view hint) { return step.names.FreshName(hint); };
  ctx.detach_output = [&step, &site](int i) {
    auto* outputs = site.node->mutable_output();
    std::string fresh = step.names.FreshName(outputs->Get(i));
    // The old string object stays alive: inferred types view it.
    outputs->AddAllocated(new std::string(fresh));
    outputs->SwapElements(i, outputs->size() - 1);
    step.edits.Retire(outputs->ReleaseLast());
    return fresh;
  };
  ctx.track_subgraph = [&step, &site](onnx::GraphProto& graph) {
    step.edits.TrackSubgraph(graph, absl::StrCat(site.path, "/", graph.name()), site.graph);
  };
  return ctx;
}

// Runs the rewrite `adapter` on `site`'s node and checks that the node then
// fits the operator version it binds to at the step's target opset (the
// rewrite may have replaced the op).
absl::Status RunRewrite(StepContext& step, const NodeSite& site,
                        const adapters::AdapterEntry& adapter, adapters::AdapterContext& ctx,
                        bool check_types) {
  std::string old_op = site.node->op_type();
  std::string old_domain = site.node->domain();
  OC_RETURN_IF_ERROR(adapter.fn(ctx));
  const OpSchema* bound = Registry::Get().Lookup(step.domain, site.node->op_type(), step.to);
  if (bound == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        adapter.name, " leaves a ", site.node->op_type(), " node, which does not exist at opset ",
        step.to));
  }
  std::string misfit = adapters::NodeFitsVersion(*bound, *site.node);
  if (!misfit.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(adapter.name, " leaves the node unfit: ", misfit));
  }
  if (site.node->op_type() != old_op) {
    step.edits.Retyped(site, Key(Registry::CanonicalDomain(old_domain), old_op));
    return absl::OkStatus();
  }
  // The rewritten node must still use only types its new version allows.
  if (!check_types) return absl::OkStatus();
  absl::Status types = adapters::CheckTypesAllowed(ctx);
  if (!types.ok() && step.allow_casts) return adapters::InsertCasts(ctx);
  return types;
}

// Converts one node of an op that does not exist at the step's target:
// a registered replacement, else the expansion of its function body.
absl::Status ConvertVanishingNode(StepContext& step, const NodeSite& site, const OpSchema& current,
                                  NodeChange& report) {
  const adapters::AdapterEntry* replacement =
      adapters::Rewrites().Find(step.domain, current.name, current.since_version, 0);
  if (replacement != nullptr) {
    report.adapter = replacement->name;
    if (step.dry_run) return absl::OkStatus();
    adapters::AdapterContext ctx = MakeAdapterContext(step, site, current, current,
                                                      report.changes);
    return RunRewrite(step, site, *replacement, ctx, /*check_types=*/false);
  }
  int first = Registry::Get().VersionsOf(step.domain, current.name).front();
  if (current.function_bodies.empty() && current.context_dependent_function_opsets.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(current.name, " does not exist before opset ", first,
                     " and the spec gives no function body to expand it into"));
  }
  if (!step.expand) {
    return absl::FailedPreconditionError(absl::StrCat(
        current.name, " does not exist before opset ", first,
        "; its function body would express it, but expansion is off (--no-expand)"));
  }
  report.adapter = absl::StrCat(current.Label(), ": function body expanded");
  if (step.dry_run) return absl::OkStatus();
  OC_ASSIGN_OR_RETURN(
      Expansion expansion,
      ExpandFunctionNode(
          *site.node, current, step.from, step.to,
          [&](absl::string_view value) { return step.types.TypeOf(site.graph, value); },
          [&](absl::string_view name) { return step.constants.Find(step.index, site.graph, name); },
          [&](absl::string_view hint) { return step.names.FreshName(hint); }));
  if (!expansion.initializers.empty() && site.graph == nullptr) {
    return absl::FailedPreconditionError(
        "the expansion needs constants, which a function body cannot hold (not supported yet)");
  }
  for (onnx::TensorProto& tensor : expansion.initializers) {
    step.edits.AddInitializer(*site.graph, std::move(tensor));
  }
  for (onnx::NodeProto& node : expansion.nodes) step.edits.InsertBefore(site, std::move(node));
  step.edits.Remove(site);
  report.changes.push_back(
      {"function-expanded", absl::StrCat("replaced by ", expansion.nodes.size(), " nodes")});
  return absl::OkStatus();
}

// Whether `change`, of a node of `op` in `graph`, is exactly what `kept`
// records.
bool SameChange(const NodeChange& kept, const NodeChange& change, absl::string_view graph,
                absl::string_view op) {
  return kept.refusal.empty() && change.refusal.empty() && kept.op == op &&
         kept.from_version == change.from_version && kept.to_version == change.to_version &&
         kept.graph == graph && kept.adapter == change.adapter && kept.changes == change.changes;
}

// Counts a node of `op` in `graph` only rebound from version `from` to `to`
// among the step's bumps.
void CountBump(StepReport& report, absl::string_view graph, absl::string_view op, int from,
               int to) {
  for (auto it = report.bumps.rbegin(); it != report.bumps.rend(); ++it) {
    if (it->from_version == from && it->op == op && it->graph == graph) {
      ++it->nodes;
      return;
    }
  }
  report.bumps.push_back({std::string(graph), std::string(op), from, to, 1});
}

absl::StatusOr<StepReport> RunStep(StepContext& step) {
  StepReport report;
  report.domain = std::string(step.domain);
  report.from_opset = step.from;
  report.to_opset = step.to;
  const Registry& registry = Registry::Get();
  // Upgrading k -> k+1 touches ops with a version introduced at k+1;
  // downgrading k -> k-1 touches ops with a version introduced at k.
  int64_t boundary = std::max(step.from, step.to);
  for (const OpSchema* changed : registry.ChangedAt(step.domain, boundary)) {
    absl::Span<const NodeSite> sites = step.index.NodesOf(step.domain, changed->name);
    if (sites.empty()) continue;
    // The versions on both sides of the step are the same for every node.
    const OpSchema* current = registry.Lookup(step.domain, changed->name, step.from);
    const OpSchema* next = registry.Lookup(step.domain, changed->name, step.to);
    if (current == nullptr) continue;  // the op is not valid here anyway
    if (current == next) continue;
    std::optional<adapters::AdapterPlan> plan;
    if (next != nullptr) plan = adapters::PlanAdapter(*current, *next);
    // A node these versions only rebind validates as it did.
    bool validates_alike = next != nullptr && schema::NodeValidationUnchanged(*current, *next);
    // Every node these versions only rebind is counted, not looked at.
    bool count_only = plan.has_value() && plan->rebinds_only &&
                      !adapters::NegativeAxesMatter(*current, *next);
    if (!count_only && !step.dry_run) step.edits.Reserve(sites.size());
    for (const NodeSite& site : sites) {
      if (step.should_stop && (++step.polled % kStopPollNodes) == 0 && step.should_stop()) {
        return Stopped(step.domain, step.from, step.to);
      }
      if (count_only) {
        CountBump(report, site.path, changed->name, current->since_version,
                  next->since_version);
        continue;
      }
      NodeChange change;  // named once it is kept
      change.from_version = current->since_version;
      change.to_version = next != nullptr ? next->since_version : 0;
      absl::Status status;
      bool bumped = false;  // rebound, node unchanged
      if (next == nullptr) {
        if (!step.dry_run) step.edits.Touch(site);
        status = ConvertVanishingNode(step, site, *current, change);
      } else {
        adapters::AdapterContext ctx =
            MakeAdapterContext(step, site, *current, *next, change.changes);
        if (!step.dry_run) status = adapters::ResolveNegativeAxes(ctx);
        // A registered rewrite is used as it is; else the entry is derived.
        std::optional<adapters::AdapterEntry> derived;
        if (plan->rewrite == nullptr) derived = adapters::FindAdapter(*plan, *site.node);
        const adapters::AdapterEntry& adapter = derived ? *derived : *plan->rewrite;
        change.adapter = adapter.name;
        switch (status.ok() ? adapter.kind : adapters::AdapterEntry::kUnsupported) {
          case adapters::AdapterEntry::kUnsupported:
            if (!status.ok()) break;
            status = absl::FailedPreconditionError(adapter.reason);
            break;
          case adapters::AdapterEntry::kCompatible: {
            if (!plan->types_widen) status = adapters::CheckTypesAllowed(ctx);
            bool touched = false;
            if (!status.ok() && step.allow_casts && !step.dry_run) {
              step.edits.Touch(site);
              touched = true;
              status = adapters::InsertCasts(ctx);
            }
            if (!status.ok()) break;
            bumped = change.changes.empty();
            if (!step.dry_run && !touched && (!bumped || !validates_alike)) {
              step.edits.Touch(site);
            }
            if (!bumped) {
              change.changes.push_back(
                  {"version-bump", absl::StrCat(current->Label(), " -> ", next->Label())});
            }
            break;
          }
          case adapters::AdapterEntry::kRewrite:
            if (step.dry_run) break;
            step.edits.Touch(site);
            status = RunRewrite(step, site, adapter, ctx, !plan->types_widen);
            break;
        }
      }
      if (!status.ok()) {
        absl::Status error = StepError(status.code(), step.domain, step.from, step.to, site,
                                       *current, status.message());
        // A dry run goes on, listing every node that cannot be converted.
        if (!step.dry_run || status.code() != absl::StatusCode::kFailedPrecondition) return error;
        change.refusal = std::string(error.message());
      } else if (!step.dry_run) {
        step.edits.Finished(site);
      }
      if (bumped && change.refusal.empty()) {
        CountBump(report, site.path, changed->name, change.from_version, change.to_version);
      } else if (!report.nodes.empty() && SameChange(report.nodes.back(), change, site.path,
                                                     changed->name)) {
        report.nodes.back().alike.push_back(site.node->name());
      } else {
        change.op = std::string(changed->name);
        change.graph = std::string(site.path);
        change.node = site.node->name();
        report.nodes.push_back(std::move(change));
      }
    }
  }
  return report;
}

// Strict inference of the whole model.
absl::StatusOr<schema::InferenceResult> InferStrictly(const onnx::ModelProto& model) {
  schema::InferenceOptions strict;
  strict.strict = true;
  return schema::InferModel(model, strict);
}

// Check and strict inference of the whole model: the inferred types, or the
// first error.
absl::StatusOr<schema::InferenceResult> Validate(const onnx::ModelProto& model) {
  schema::CheckReport report = schema::CheckModel(model);
  OC_RETURN_IF_ERROR(report.status());
  return InferStrictly(model);
}

// The first value of the main graph whose type `incremental` (validated
// node by node) and `full` (the whole model inferred again) disagree on,
// as an error.
absl::Status CompareTypes(const onnx::ModelProto& model, const schema::InferenceResult& incremental,
                          const schema::InferenceResult& full) {
  const auto& mine = incremental.graphs.at(&model.graph()).types;
  for (const auto& [name, type] : full.graphs.at(&model.graph()).types) {
    auto it = mine.find(name);
    if (it == mine.end()) {
      return absl::InternalError(absl::StrCat("value '", name, "' has no type incrementally"));
    }
    if (it->second->SerializeAsString() != type->SerializeAsString()) {
      return absl::InternalError(absl::StrCat("value '", name, "' is {",
                                              it->second->ShortDebugString(),
                                              "} incrementally, {", type->ShortDebugString(),
                                              "} in full"));
    }
  }
  return absl::OkStatus();
}

// Validates the model after a step: the nodes the step touched when that
// is enough to show the whole model valid, else the whole model.
absl::Status ValidateStep(const onnx::ModelProto& model, const StepChanges& changes,
                          const ConvertOptions& options, TypeTable& types,
                          IncrementalValidator& incremental, StepReport& step) {
  std::string name = StepName(step.domain, step.from_opset, step.to_opset);
  schema::InferenceResult* before = types.strict();
  // The nodes validated early, while the step went on.
  absl::Status early = changes.early != nullptr ? changes.early->Finish() : absl::OkStatus();
  if (!options.full_validation && changes.needs_full.empty() && before != nullptr && early.ok()) {
    absl::Status status = incremental.Validate(changes.groups, changes.added, *before);
    if (status.ok()) {
      if (changes.early != nullptr) {
        changes.early->Commit();
        step.nodes_validated += changes.early->nodes();
      }
      step.validation = "incremental";
      for (const TouchedGroup& group : changes.groups) step.nodes_validated += group.nodes.size();
      if (!options.cross_check) return absl::OkStatus();
      absl::StatusOr<schema::InferenceResult> full = Validate(model);
      if (!full.ok()) {
        return absl::InternalError(absl::StrCat(
            name, ": validated node by node, but the whole model does not validate: ",
            full.status().message()));
      }
      absl::Status same = CompareTypes(model, *before, *full);
      if (!same.ok()) return absl::InternalError(absl::StrCat(name, ": ", same.message()));
      return absl::OkStatus();
    }
  }
  incremental.Forget();
  // The previous step's types are stale now: free them first, so that two
  // inference results are never held at once.
  types.Invalidate();
  auto validated = std::make_unique<TypeTable::Result>(Validate(model));
  if (!validated->ok()) {
    return absl::InternalError(absl::StrCat(name, ": the converted model does not validate: ",
                                            validated->status().message()));
  }
  step.validation = "ok";
  step.nodes_validated = (*validated)->nodes_inferred;
  types.Reset(std::move(validated), /*strict=*/true);
  return absl::OkStatus();
}

}  // namespace

int64_t MinIrVersionForOpset(int64_t opset) {
  // (first opset, IR version) of each ONNX release that raised the IR.
  static constexpr std::pair<int64_t, int64_t> kFirstOpsetOfIr[] = {
      {1, 3}, {9, 4}, {10, 5}, {11, 6}, {12, 7}, {15, 8}, {19, 9},
      {21, 10}, {23, 11}, {24, 12}, {25, 13},
  };
  int64_t ir = 3;
  for (auto [first_opset, version] : kFirstOpsetOfIr) {
    if (opset >= first_opset) ir = version;
  }
  return ir;
}

namespace {

// One domain's way from its source opset to its target.
struct Track {
  std::string domain;  // canonical
  int64_t source;
  int64_t target;
};

// The domains to convert: ai.onnx always, ai.onnx.ml when asked for.
absl::StatusOr<std::vector<Track>> PlanTracks(const onnx::ModelProto& model,
                                              const ConvertOptions& options) {
  std::vector<Track> tracks;
  auto add = [&](absl::string_view domain, absl::string_view label, int64_t target,
                 bool required) -> absl::Status {
    std::optional<int64_t> source = ImportedOpset(model.opset_import(), domain);
    if (!source) {
      if (!required) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("the model imports no ", label, " opset to convert from"));
    }
    int64_t newest = Registry::Get().MaxOpset(domain);
    if (target < 1 || target > newest) {
      return absl::InvalidArgumentError(
          absl::StrCat("target opset ", target, domain.empty() ? "" : absl::StrCat(" of ", label),
                       " does not exist (1 to ", newest, ")"));
    }
    tracks.push_back({std::string(domain), *source, target});
    return absl::OkStatus();
  };
  // A model of ai.onnx.ml alone needs no ai.onnx opset when only its
  // ai.onnx.ml opset is converted.
  bool ml_only = options.ml_target_opset.has_value() &&
                 !ImportedOpset(model.opset_import(), "").has_value();
  OC_RETURN_IF_ERROR(add("", "ai.onnx", options.target_opset, /*required=*/!ml_only));
  if (options.ml_target_opset) {
    OC_RETURN_IF_ERROR(add("ai.onnx.ml", "ai.onnx.ml", *options.ml_target_opset,
                           /*required=*/true));
  }
  return tracks;
}

// The domains `tracks` convert, for the index.
absl::flat_hash_set<std::string> DomainsOf(const std::vector<Track>& tracks) {
  absl::flat_hash_set<std::string> domains;
  for (const Track& track : tracks) domains.insert(track.domain);
  return domains;
}

}  // namespace

absl::StatusOr<ConversionResult> ConvertModel(const onnx::ModelProto& model,
                                              const ConvertOptions& options) {
  return ConvertModel(onnx::ModelProto(model), options);
}

absl::StatusOr<ConversionResult> ConvertModel(onnx::ModelProto&& input,
                                              const ConvertOptions& options) {
  ConversionResult result;
  result.model.Swap(&input);
  const onnx::ModelProto& model = result.model;  // as given, until the first step
  OC_ASSIGN_OR_RETURN(std::vector<Track> tracks, PlanTracks(model, options));
  ConversionReport& report = result.report;
  for (const Track& track : tracks) {
    if (track.domain.empty()) {
      report.source_opset = track.source;
      report.target_opset = track.target;
    } else {
      report.source_ml_opset = track.source;
      report.target_ml_opset = track.target;
    }
  }
  report.source_ir_version = model.ir_version();

  // The input is checked, inferred strictly (the types each step's
  // validation then brings up to date) and indexed: side by side in a large
  // model, as all of it only reads the model.
  bool validate = options.validate_each_step && !options.dry_run;
  schema::CheckReport check;
  auto inferred = std::make_unique<TypeTable::Result>(absl::UnknownError("not inferred"));
  std::optional<OpIndex> index;
  std::optional<NameGenerator> names;
  RunSideBySide(
      [&] {
        check = schema::CheckModel(model);
        names.emplace(model);
        index.emplace(result.model, DomainsOf(tracks));
      },
      [&] {
        if (validate) *inferred = InferStrictly(model);
      },
      static_cast<size_t>(model.graph().node_size()) >= kSideBySideNodes);
  if (!check.status().ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the input model is invalid: ", check.status().message()));
  }
  // Types for the adapters, brought up to date by every step's validation.
  TypeTable types(result.model);
  if (validate) {
    if (!inferred->ok()) {
      return absl::InvalidArgumentError(absl::StrCat("the input model does not validate: ",
                                                     inferred->status().message()));
    }
    types.Reset(std::move(inferred), /*strict=*/true);
  }
  StepEdits edits(model.has_graph() ? &model.graph() : nullptr);
  ConstantTable constants;
  AddedConstants added;
  IncrementalValidator incremental(result.model);
  // The opsets a step converts to, for its early validation.
  google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> imports_after;
  Retired retired;
  for (const auto& [op, count] : index->others()) report.untouched_ops.emplace_back(op, count);
  for (const Track& track : tracks) {
    int64_t direction = track.target > track.source ? 1 : -1;
    for (int64_t from = track.source; from != track.target; from += direction) {
      auto start = std::chrono::steady_clock::now();
      int64_t to = from + direction;
      if (options.should_stop && options.should_stop()) return Stopped(track.domain, from, to);
      if (validate && !options.full_validation && types.strict() != nullptr) {
        // The step's rewrites in place are validated while it goes on.
        schema::InferenceResult* before = types.strict();
        auto main = before->graphs.find(&result.model.graph());
        if (main != before->graphs.end()) {
          imports_after = result.model.opset_import();
          SetImportedOpset(imports_after, track.domain, to);
          edits.ArmEarly(
              [&result, &imports_after, before] {
                return std::make_unique<EarlyValidator>(result.model, imports_after, *before);
              },
              &incremental, &main->second);
        }
      }
      StepContext context{*index,       types, *names, edits,          constants,
                          added,        track.domain, from,  to,    options.dry_run,
                          options.expand_functions, options.allow_casts, options.should_stop};
      absl::StatusOr<StepReport> step = RunStep(context);
      if (!step.ok()) return step.status();
      if (!options.dry_run) {
        StepChanges changes = edits.Apply(*index, retired);
        constants.Clear();
        SetImportedOpset(*result.model.mutable_opset_import(), track.domain, to);
        for (auto& function : *result.model.mutable_functions()) {
          SetImportedOpset(*function.mutable_opset_import(), track.domain, to);
        }
        if (step->nodes.empty() && step->bumps.empty()) {
          // No node binds to another operator version: what validated at
          // the previous opset is still valid.
          step->validation = "unchanged";
        } else if (validate) {
          OC_RETURN_IF_ERROR(ValidateStep(result.model, changes, options, types, incremental,
                                          *step));
        } else {
          types.Invalidate();
        }
      }
      step->milliseconds = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - start)
                               .count();
      for (const NodeChange& node : step->nodes) {
        (node.refusal.empty() ? report.nodes_converted : report.nodes_refused) +=
            node.NodeCount();
      }
      for (const VersionBump& bump : step->bumps) report.nodes_converted += bump.nodes;
      report.steps.push_back(*std::move(step));
    }
  }
  int64_t ir = options.ir_version.value_or(
      std::max(report.source_ir_version, MinIrVersionForOpset(report.target_opset)));
  if (!options.dry_run) result.model.set_ir_version(ir);
  report.target_ir_version = ir;
  return result;
}

int StepReport::NodeCount() const {
  int count = 0;
  for (const NodeChange& node : nodes) count += node.NodeCount();
  for (const VersionBump& bump : bumps) count += bump.nodes;
  return count;
}

std::string ConversionReport::ToJson() const {
  JsonWriter json;
  json.BeginObject();
  json.Key("source_opset").Int(source_opset).Key("target_opset").Int(target_opset);
  if (source_ml_opset) {
    json.Key("source_ml_opset").Int(*source_ml_opset).Key("target_ml_opset").Int(*target_ml_opset);
  }
  json.Key("source_ir_version").Int(source_ir_version);
  json.Key("target_ir_version").Int(target_ir_version);
  json.Key("nodes_converted").Int(nodes_converted);
  if (nodes_refused > 0) json.Key("nodes_refused").Int(nodes_refused);
  json.Key("steps").BeginArray();
  for (const StepReport& step : steps) {
    json.BeginObject();
    if (!step.domain.empty()) json.Key("domain").String(step.domain);
    json.Key("from").Int(step.from_opset).Key("to").Int(step.to_opset);
    json.Key("validation").String(step.validation);
    json.Key("nodes_validated").Int(step.nodes_validated);
    json.Key("milliseconds").Double(step.milliseconds);
    json.Key("bumps").BeginArray();
    for (const VersionBump& bump : step.bumps) {
      json.BeginObject().Key("graph").String(bump.graph).Key("op").String(bump.op);
      json.Key("from_version").Int(bump.from_version).Key("to_version").Int(bump.to_version);
      json.Key("nodes").Int(bump.nodes).EndObject();
    }
    json.EndArray();
    json.Key("nodes").BeginArray();
    for (const NodeChange& node : step.nodes) {
      json.BeginObject().Key("graph").String(node.graph).Key("node").String(node.node);
      if (!node.alike.empty()) {
        json.Key("alike").BeginArray();
        for (const std::string& name : node.alike) json.String(name);
        json.EndArray();
      }
      json.Key("op").String(node.op).Key("from_version").Int(node.from_version);
      json.Key("to_version").Int(node.to_version).Key("adapter").String(node.adapter);
      if (!node.refusal.empty()) json.Key("refusal").String(node.refusal);
      json.Key("changes").BeginArray();
      for (const adapters::Change& change : node.changes) {
        json.BeginObject().Key("kind").String(change.kind).Key("detail").String(change.detail)
            .EndObject();
      }
      json.EndArray().EndObject();
    }
    json.EndArray().EndObject();
  }
  json.EndArray();
  json.Key("untouched_ops").BeginArray();
  for (const auto& [op, count] : untouched_ops) {
    json.BeginObject().Key("op").String(op).Key("count").Int(count).EndObject();
  }
  json.EndArray().EndObject();
  return json.Finish();
}

namespace {

// " and 3 more alike (b, c, d)", naming at most a few.
std::string AlikeText(const std::vector<std::string>& alike) {
  if (alike.empty()) return "";
  constexpr size_t kNamed = 3;
  std::string names;
  for (size_t i = 0; i < alike.size() && i < kNamed; ++i) {
    absl::StrAppend(&names, i == 0 ? "" : ", ", alike[i].empty() ? "(unnamed)" : alike[i]);
  }
  return absl::StrCat(" and ", alike.size(), " more alike (", names,
                      alike.size() > kNamed ? ", ..." : "", ")");
}

}  // namespace

std::string ConversionReport::ToText() const {
  std::string out = absl::StrFormat("opset %d -> %d, ir_version %d -> %d, %d nodes converted\n",
                                    source_opset, target_opset, source_ir_version,
                                    target_ir_version, nodes_converted);
  for (const StepReport& step : steps) {
    absl::StrAppendFormat(&out, "%s: %d nodes, validation %s%s (%.1f ms)\n",
                          StepName(step.domain, step.from_opset, step.to_opset),
                          step.NodeCount(), step.validation,
                          step.validation == "incremental"
                              ? absl::StrCat(" (", step.nodes_validated, " nodes re-checked)")
                              : "",
                          step.milliseconds);
    for (const VersionBump& bump : step.bumps) {
      absl::StrAppendFormat(&out, "  %s \xE2\x80\xBA %d %s: version %d -> %d, unchanged\n",
                            bump.graph, bump.nodes, bump.op, bump.from_version,
                            bump.to_version);
    }
    for (const NodeChange& node : step.nodes) {
      absl::StrAppendFormat(&out, "  %s \xE2\x80\xBA %s%s: %s\n", node.graph,
                            node.node.empty() ? "(unnamed " + node.op + ")" : node.node,
                            AlikeText(node.alike),
                            node.refusal.empty() ? node.adapter
                                                 : absl::StrCat("CANNOT CONVERT: ", node.refusal));
    }
  }
  if (nodes_refused > 0) {
    absl::StrAppendFormat(&out, "%d nodes cannot be converted\n", nodes_refused);
  }
  for (const auto& [op, count] : untouched_ops) {
    absl::StrAppendFormat(&out, "left as is: %s (%d nodes)\n", op, count);
  }
  return out;
}

}  // namespace onnxconvert::converter
