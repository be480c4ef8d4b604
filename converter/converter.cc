#include "converter/converter.h"

#include <chrono>
#include <deque>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "adapters/rewrites.h"
#include "converter/expand.h"
#include "ir/graph_index.h"
#include "ir/json_writer.h"
#include "ir/status_macros.h"
#include "schema/checker.h"
#include "schema/inference.h"
#include "schema/registry.h"

namespace onnxconvert::converter {
namespace {

using schema::OpSchema;
using schema::Registry;

constexpr int kMaxDepth = 64;

using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

// A node of ai.onnx somewhere in the model.
struct NodeSite {
  onnx::NodeProto* node;
  onnx::GraphProto* graph;  // null inside functions
  NodeList* list;           // the node list that holds the node
  std::string path;
};

// The index key of an operator: its canonical domain and its name.
std::string Key(absl::string_view domain, absl::string_view op) {
  return absl::StrCat(domain, "\x1f", op);
}

// Every ai.onnx node of the model by op type, collected once and kept up to
// date as steps insert, replace and remove nodes.
class OpIndex {
 public:
  // Indexes the nodes of `domains` (canonical names); the others are only
  // counted.
  OpIndex(onnx::ModelProto& model, absl::flat_hash_set<std::string> domains)
      : domains_(std::move(domains)) {
    if (model.has_graph()) AddGraph(*model.mutable_graph(), "main", 0);
    for (onnx::FunctionProto& function : *model.mutable_functions()) {
      std::string path = absl::StrCat("function '", function.domain(), ".", function.name(), "'");
      for (onnx::NodeProto& node : *function.mutable_node()) {
        Add({&node, nullptr, function.mutable_node(), path}, 0, true);
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
    if (domains_.contains(domain)) {
      by_op_[Key(domain, node.op_type())].push_back(site);
    } else {
      ++others_[absl::StrCat(domain.empty() ? "ai.onnx" : domain, ".", node.op_type())];
    }
    if (!recurse || depth >= kMaxDepth) return;
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      std::string owner = absl::StrCat(" of '", node.name(), "' (", node.op_type(), ")");
      if (attribute.has_g()) {
        parents_[attribute.mutable_g()] = site.graph;
        AddGraph(*attribute.mutable_g(), absl::StrCat(site.path, "/", attribute.name(), owner),
                 depth + 1);
      }
      for (int i = 0; i < attribute.graphs_size(); ++i) {
        parents_[attribute.mutable_graphs(i)] = site.graph;
        AddGraph(*attribute.mutable_graphs(i),
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
  void AddShallow(onnx::GraphProto& graph, const std::string& path,
                  const onnx::GraphProto* parent) {
    parents_[&graph] = parent;
    for (onnx::NodeProto& node : *graph.mutable_node()) {
      Add({&node, &graph, graph.mutable_node(), path}, 0, false);
    }
  }

  // Forgets `nodes`, listed under `key` (KeyOf their domain and op).
  void Forget(absl::string_view key, const absl::flat_hash_set<const onnx::NodeProto*>& nodes) {
    auto it = by_op_.find(key);
    if (it == by_op_.end()) return;
    std::erase_if(it->second, [&](const NodeSite& site) { return nodes.contains(site.node); });
  }

 private:
  void AddGraph(onnx::GraphProto& graph, const std::string& path, int depth) {
    for (onnx::NodeProto& node : *graph.mutable_node()) {
      Add({&node, &graph, graph.mutable_node(), path}, depth, true);
    }
  }

  absl::flat_hash_set<std::string> domains_;
  absl::flat_hash_map<std::string, std::vector<NodeSite>> by_op_;
  std::map<std::string, int> others_;
  absl::flat_hash_map<const onnx::GraphProto*, const onnx::GraphProto*> parents_;
};

// The index key of `node` (domain and op type).
std::string KeyOf(const onnx::NodeProto& node) {
  return Key(Registry::CanonicalDomain(node.domain()), node.op_type());
}

// The structural edits of one step, applied when the step ends so that the
// node lists are rebuilt once per step, in time linear in their size, and
// the nodes keep their addresses.
class StepEdits {
 public:
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
  }
  // Keeps a retired value name alive: inferred types view such strings.
  void Retire(std::string* name) { retired_.emplace_back(name); }

  // Rebuilds the edited node lists and brings `index` up to date.
  void Apply(OpIndex& index, std::vector<std::unique_ptr<std::string>>& retired) {
    for (auto& [list, edits] : edits_) Rebuild(*list, edits);
    for (const auto& [op, nodes] : forgotten_) index.Forget(op, nodes);
    for (NodeSite& site : added_) index.Add(site, 0, /*recurse=*/true);
    // A retyped node's subgraphs are indexed already.
    for (NodeSite& site : retyped_) index.Add(site, 0, /*recurse=*/false);
    for (auto& [graph, path, parent] : subgraphs_) index.AddShallow(*graph, path, parent);
    for (auto& name : retired_) retired.push_back(std::move(name));
    edits_.clear();
    forgotten_.clear();
    added_.clear();
    retyped_.clear();
    subgraphs_.clear();
    retired_.clear();
  }

 private:
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

  static void Rebuild(NodeList& list, ListEdits& edits) {
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
        delete node;
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
  // Uses `result`, inferred for the model as it is now.
  void Reset(std::unique_ptr<Result> result) { result_ = std::move(result); }
  // Forgets the types: the model changed; the next lookup infers again.
  void Invalidate() { result_.reset(); }

 private:
  const onnx::ModelProto& model_;
  mutable std::unique_ptr<Result> result_;
};


// The constants adapters add: one initializer per distinct small value and
// graph (a thousand Unsqueeze nodes moving axes = [0] to an input share
// one), under fresh names.
class AddedConstants {
 public:
  absl::StatusOr<std::string> Add(onnx::GraphProto* graph, NameGenerator& names,
                                  const onnx::NodeProto& node, onnx::TensorProto value) {
    if (graph == nullptr) {
      return absl::FailedPreconditionError(
          "a constant input would be needed inside a function body (not supported yet)");
    }
    value.clear_name();
    std::string key;
    if (value.ByteSizeLong() <= kShareableBytes) key = value.SerializeAsString();
    if (!key.empty()) {
      auto it = added_.find(std::make_pair(graph, key));
      if (it != added_.end()) return it->second;
    }
    std::string name = names.FreshName(node.name().empty() ? node.op_type() : node.name());
    value.set_name(name);
    *graph->add_initializer() = std::move(value);
    if (!key.empty()) added_.emplace(std::make_pair(graph, std::move(key)), name);
    return name;
  }

 private:
  static constexpr size_t kShareableBytes = 256;
  absl::flat_hash_map<std::pair<const onnx::GraphProto*, std::string>, std::string> added_;
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
        return step.added.Add(site.graph, step.names, *site.node, std::move(value));
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
  std::string old_key = KeyOf(*site.node);
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
    step.edits.Retyped(site, old_key);
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
    *site.graph->add_initializer() = std::move(tensor);
  }
  for (onnx::NodeProto& node : expansion.nodes) step.edits.InsertBefore(site, std::move(node));
  step.edits.Remove(site);
  report.changes.push_back(
      {"function-expanded", absl::StrCat("replaced by ", expansion.nodes.size(), " nodes")});
  return absl::OkStatus();
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
    for (const NodeSite& site : sites) {
      if (step.should_stop && (++step.polled % kStopPollNodes) == 0 && step.should_stop()) {
        return Stopped(step.domain, step.from, step.to);
      }
      NodeChange change{site.path, site.node->name(), std::string(changed->name),
                        current->since_version, next != nullptr ? next->since_version : 0,
                        "", {}, ""};
      absl::Status status;
      if (next == nullptr) {
        status = ConvertVanishingNode(step, site, *current, change);
      } else {
        adapters::AdapterContext ctx =
            MakeAdapterContext(step, site, *current, *next, change.changes);
        if (!step.dry_run) status = adapters::ResolveNegativeAxes(ctx);
        adapters::AdapterEntry adapter = adapters::FindAdapter(*plan, *site.node);
        change.adapter = adapter.name;
        switch (status.ok() ? adapter.kind : adapters::AdapterEntry::kUnsupported) {
          case adapters::AdapterEntry::kUnsupported:
            if (!status.ok()) break;
            status = absl::FailedPreconditionError(adapter.reason);
            break;
          case adapters::AdapterEntry::kCompatible:
            if (!plan->types_widen) status = adapters::CheckTypesAllowed(ctx);
            if (!status.ok() && step.allow_casts && !step.dry_run) {
              status = adapters::InsertCasts(ctx);
            }
            if (status.ok()) {
              change.changes.push_back({"version-bump", absl::StrCat(current->Label(), " -> ",
                                                                     next->Label())});
            }
            break;
          case adapters::AdapterEntry::kRewrite:
            if (!step.dry_run) status = RunRewrite(step, site, adapter, ctx, !plan->types_widen);
            break;
        }
      }
      if (!status.ok()) {
        absl::Status error = StepError(status.code(), step.domain, step.from, step.to, site,
                                       *current, status.message());
        // A dry run goes on, listing every node that cannot be converted.
        if (!step.dry_run || status.code() != absl::StatusCode::kFailedPrecondition) return error;
        change.refusal = std::string(error.message());
      }
      report.nodes.push_back(std::move(change));
    }
  }
  return report;
}

// Check and strict inference of the whole model: the inferred types, or the
// first error.
absl::StatusOr<schema::InferenceResult> Validate(const onnx::ModelProto& model) {
  schema::CheckReport report = schema::CheckModel(model);
  OC_RETURN_IF_ERROR(report.status());
  schema::InferenceOptions strict;
  strict.strict = true;
  return schema::InferModel(model, strict);
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

  schema::CheckReport check = schema::CheckModel(model);
  if (!check.status().ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the input model is invalid: ", check.status().message()));
  }
  // Types for the adapters, refreshed after every step that changes nodes.
  TypeTable types(result.model);

  OpIndex index(result.model, DomainsOf(tracks));
  NameGenerator names(result.model);
  StepEdits edits;
  ConstantTable constants;
  AddedConstants added;
  // Value names adapters replaced, kept alive because inferred types view them.
  std::vector<std::unique_ptr<std::string>> retired;
  for (const auto& [op, count] : index.others()) report.untouched_ops.emplace_back(op, count);
  for (const Track& track : tracks) {
    int64_t direction = track.target > track.source ? 1 : -1;
    for (int64_t from = track.source; from != track.target; from += direction) {
      auto start = std::chrono::steady_clock::now();
      int64_t to = from + direction;
      if (options.should_stop && options.should_stop()) return Stopped(track.domain, from, to);
      StepContext context{index,        types, names, edits,           constants,
                          added,        track.domain, from,  to,    options.dry_run,
                          options.expand_functions, options.allow_casts, options.should_stop};
      absl::StatusOr<StepReport> step = RunStep(context);
      if (!step.ok()) return step.status();
      if (!options.dry_run) {
        edits.Apply(index, retired);
        constants.Clear();
        SetImportedOpset(*result.model.mutable_opset_import(), track.domain, to);
        for (auto& function : *result.model.mutable_functions()) {
          SetImportedOpset(*function.mutable_opset_import(), track.domain, to);
        }
        if (step->nodes.empty()) {
          // No node binds to another operator version: what validated at
          // the previous opset is still valid.
          step->validation = "unchanged";
        } else if (options.validate_each_step) {
          // The previous step's types are stale now: free them first, so
          // that two inference results are never held at once.
          types.Invalidate();
          auto validated = std::make_unique<TypeTable::Result>(Validate(result.model));
          if (!validated->ok()) {
            return absl::InternalError(
                absl::StrCat(StepName(track.domain, from, to),
                             ": the converted model does not validate: ",
                             validated->status().message()));
          }
          step->validation = "ok";
          types.Reset(std::move(validated));
        } else {
          types.Invalidate();
        }
      }
      step->milliseconds = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - start)
                               .count();
      for (const NodeChange& node : step->nodes) {
        if (node.refusal.empty()) {
          ++report.nodes_converted;
        } else {
          ++report.nodes_refused;
        }
      }
      report.steps.push_back(*std::move(step));
    }
  }
  int64_t ir = options.ir_version.value_or(
      std::max(report.source_ir_version, MinIrVersionForOpset(report.target_opset)));
  if (!options.dry_run) result.model.set_ir_version(ir);
  report.target_ir_version = ir;
  return result;
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
    json.Key("milliseconds").Double(step.milliseconds);
    json.Key("nodes").BeginArray();
    for (const NodeChange& node : step.nodes) {
      json.BeginObject().Key("graph").String(node.graph).Key("node").String(node.node);
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

std::string ConversionReport::ToText() const {
  std::string out = absl::StrFormat("opset %d -> %d, ir_version %d -> %d, %d nodes converted\n",
                                    source_opset, target_opset, source_ir_version,
                                    target_ir_version, nodes_converted);
  for (const StepReport& step : steps) {
    absl::StrAppendFormat(&out, "%s: %d nodes, validation %s (%.1f ms)\n",
                          StepName(step.domain, step.from_opset, step.to_opset),
                          step.nodes.size(), step.validation,
                          step.milliseconds);
    for (const NodeChange& node : step.nodes) {
      absl::StrAppendFormat(&out, "  %s \xE2\x80\xBA %s: %s\n", node.graph,
                            node.node.empty() ? "(unnamed " + node.op + ")" : node.node,
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
