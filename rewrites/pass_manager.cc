#include "rewrites/pass_manager.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/indent.h"
#include "base/json_writer.h"
#include "base/op_key.h"
#include "base/side_by_side.h"
#include "base/status_macros.h"
#include "ir/graph_index.h"
#include "rewrites/rules.h"
#include "schema/checker.h"
#include "schema/inference.h"

namespace onnxconvert::rewrites {
namespace {

// Calls `fn` on `graph` and every subgraph nested in it.
template <typename Graph, typename Fn>
void ForEachGraph(Graph& graph, const Fn& fn) {
  fn(graph);
  for (auto& node : *const_cast<google::protobuf::RepeatedPtrField<onnx::NodeProto>*>(
           &graph.node())) {
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) ForEachGraph(*attribute.mutable_g(), fn);
      for (auto& subgraph : *attribute.mutable_graphs()) ForEachGraph(subgraph, fn);
    }
  }
}

// Nodes and initializers of every graph and function of `model`.
std::pair<int64_t, int64_t> Count(onnx::ModelProto& model) {
  int64_t nodes = 0;
  int64_t initializers = 0;
  ForEachGraph(*model.mutable_graph(), [&](onnx::GraphProto& graph) {
    nodes += graph.node_size();
    initializers += graph.initializer_size();
  });
  for (const onnx::FunctionProto& function : model.functions()) nodes += function.node_size();
  return {nodes, initializers};
}

// Count's answer read from `index` when no graph of the model holds a
// subgraph (no node then needs reading), else Count's.
std::pair<int64_t, int64_t> CountIndexed(onnx::ModelProto& model, const ModelIndex* index) {
  if (index == nullptr || !model.has_graph()) return Count(model);
  for (const GraphIndex* graph : index->Graphs()) {
    if (graph->parent() != nullptr) return Count(model);
  }
  int64_t nodes = model.graph().node_size();
  for (const onnx::FunctionProto& function : model.functions()) nodes += function.node_size();
  return {nodes, model.graph().initializer_size()};
}

// The main graph's inputs and outputs, serialized: what must not change.
std::string Interface(const onnx::GraphProto& graph) {
  std::string bytes;
  for (const onnx::ValueInfoProto& input : graph.input()) bytes += input.SerializeAsString();
  bytes += '\n';
  for (const onnx::ValueInfoProto& output : graph.output()) bytes += output.SerializeAsString();
  return bytes;
}

// Removes, in every graph `index` holds, the initializers nothing reads
// and no graph input names, and the value_info of names the graph no
// longer defines or reads (uses by subgraphs count: the index has them);
// counts the initializers in `stats`. Edits the protos under the index,
// which must be built again when this removed something.
void PruneGraphs(ModelIndex& index, PassStats& stats) {
  for (GraphIndex* graph : index.Graphs()) {
    const onnx::GraphProto* proto = graph->graph();
    if (proto == nullptr || (proto->initializer_size() == 0 && proto->value_info_size() == 0)) {
      continue;
    }
    // The index views the graph its ModelIndex was built over, which the
    // caller owns and lets this edit.
    onnx::GraphProto& inner = *const_cast<onnx::GraphProto*>(proto);
    auto read = [&](const std::string& name) { return !graph->Consumers(name).empty(); };
    auto* initializers = inner.mutable_initializer();
    int kept = 0;
    for (int i = 0; i < initializers->size(); ++i) {
      const std::string& name = initializers->Get(i).name();
      if (read(name) || graph->Producer(name).kind == ValueSource::Kind::kGraphInput) {
        if (kept != i) initializers->SwapElements(kept, i);
        ++kept;
      }
    }
    stats.initializers_removed += initializers->size() - kept;
    if (kept < initializers->size()) initializers->DeleteSubrange(kept, initializers->size() - kept);
    auto* value_info = inner.mutable_value_info();
    kept = 0;
    for (int i = 0; i < value_info->size(); ++i) {
      const std::string& name = value_info->Get(i).name();
      if (graph->Producer(name).kind == ValueSource::Kind::kNodeOutput || read(name)) {
        if (kept != i) value_info->SwapElements(kept, i);
        ++kept;
      }
    }
    if (kept < value_info->size()) value_info->DeleteSubrange(kept, value_info->size() - kept);
  }
}

// Removes the model-local functions no graph or used function calls.
void PruneFunctions(onnx::ModelProto& model, PassStats& stats) {
  if (model.functions_size() == 0) return;
  absl::flat_hash_set<std::string> called;
  std::vector<const google::protobuf::RepeatedPtrField<onnx::NodeProto>*> pending;
  auto note = [&](const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    pending.push_back(&nodes);
  };
  ForEachGraph(*model.mutable_graph(), [&](onnx::GraphProto& graph) { note(graph.node()); });
  absl::flat_hash_set<std::string> known;
  for (const onnx::FunctionProto& function : model.functions()) {
    known.insert(OpKey(function.domain(), function.name()));
  }
  while (!pending.empty()) {
    const auto* nodes = pending.back();
    pending.pop_back();
    for (const onnx::NodeProto& node : *nodes) {
      std::string id = OpKey(node.domain(), node.op_type());
      if (!known.contains(id) || !called.insert(id).second) continue;
      for (const onnx::FunctionProto& function : model.functions()) {
        if (OpKey(function.domain(), function.name()) == id) note(function.node());
      }
    }
  }
  auto* functions = model.mutable_functions();
  int kept = 0;
  for (int i = 0; i < functions->size(); ++i) {
    if (called.contains(OpKey(functions->Get(i).domain(), functions->Get(i).name()))) {
      if (kept != i) functions->SwapElements(kept, i);
      ++kept;
    }
  }
  stats.matches += functions->size() - kept;
  if (kept < functions->size()) functions->DeleteSubrange(kept, functions->size() - kept);
}

// The worklist state of one graph: the values edits touched (the graph's
// edit log) and, per pass, where in the log its last run started (the
// pass visits every node when absent).
struct GraphLog {
  std::vector<GraphIndex::ValueId> values;
  std::vector<std::optional<size_t>> seen;
  Focus::Seeds seeds;  // cleared when the index commits
};

// Runs pass `k` over every graph of `index`, innermost first (a pass on a
// graph may remove nodes holding graphs already done); when `logs` is
// given, only over the nodes near what changed since its last run
// (`facts_kept`: inference knows the same as when the pass last visited
// every node, Focus::Within).
absl::StatusOr<bool> RunPass(Pass& pass, size_t k, PassContext& context, ModelIndex& index,
                             absl::node_hash_map<const GraphIndex*, GraphLog>* logs,
                             bool facts_kept, PassStats& stats) {
  std::vector<GraphIndex*> graphs = index.Graphs();
  bool changed = false;
  for (auto it = graphs.rbegin(); it != graphs.rend(); ++it) {
    Focus focus;
    GraphLog* log_of = nullptr;
    if (logs != nullptr) {
      auto found = logs->find(*it);
      if (found != logs->end()) log_of = &found->second;
    }
    if (log_of != nullptr) {
      GraphLog& log = *log_of;
      log.seen.resize(std::max(log.seen.size(), k + 1));
      const int reach = pass.Reach(context.options());
      if (log.seen[k].has_value() && reach > 0) {
        focus = Focus(**it, log.values, *log.seen[k], reach, log.seeds, facts_kept);
      }
      log.seen[k] = log.values.size();
    }
    context.set_focus(&focus);
    absl::StatusOr<bool> ran = pass.Run(context, **it, stats);
    context.set_focus(nullptr);
    if (!ran.ok()) {
      return absl::Status(ran.status().code(),
                          absl::StrCat("pass '", pass.name(), "' on graph '", (*it)->path(),
                                       "': ", ran.status().message()));
    }
    changed |= *ran;
  }
  return changed;
}

// Models of this many nodes or more are indexed, and checked, on a second
// thread while this one goes on (RewriteOptions::second_thread).
constexpr int kSecondThreadFrom = 16384;

// Whether `model` is indexed and checked on a second thread.
bool WorthAThread(const onnx::ModelProto& model, const RewriteOptions& options) {
  return options.second_thread && model.graph().node_size() >= kSecondThreadFrom;
}

// The error of a rewritten model failing strict inference with `status`.
absl::Status StrictInferenceFailure(const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("the rewritten model fails strict inference: ",
                                                  status.message()));
}

// The checker's verdict on a rewritten model.
absl::Status CheckRewritten(const onnx::ModelProto& model) {
  absl::Status checked = schema::CheckModel(model).status();
  if (checked.ok()) return checked;
  return absl::Status(checked.code(),
                      absl::StrCat("the rewritten model fails the checker: ", checked.message()));
}

// A round's edits are refreshed in the inference when they logged fewer
// values than 1/kRefreshShare of the graph's nodes: a refresh reaches each
// node it infers again at random, where inference streams through them,
// and costs more when most nodes changed.
constexpr size_t kRefreshShare = 2;

// Forgets, before the index commits the round's edits (and the strings
// the inference's keys view go), what inference knew of the outputs of the
// nodes the round removed.
void ForgetRemoved(const GraphIndex& graph, schema::MainGraphRefresher& refresher) {
  for (NodeId id = 0; id < graph.node_count(); ++id) {
    if (!graph.IsLive(id)) refresher.ForgetOutputs(graph.node(id));
  }
}

// Whether `touched[i]` repeats one of the few values before it (edits log
// a value several times in a row).
bool RecentlyTouched(absl::Span<const GraphIndex::ValueId> touched, size_t i) {
  constexpr size_t kWindow = 4;
  for (size_t j = i > kWindow ? i - kWindow : 0; j < i; ++j) {
    if (touched[j] == touched[i]) return true;
  }
  return false;
}

// Infers again, once the round's edits are committed, the nodes defining a
// value the round touched that inference no longer knows, the nodes reading
// a touched value, and downstream of them while an output comes out with
// another type or other facts: `types` is then the strict inference of the
// edited model, as InferModel would find it.
absl::Status RefreshTypes(const GraphIndex& graph,
                          absl::Span<const GraphIndex::ValueId> touched,
                          schema::MainGraphRefresher& refresher) {
  std::vector<bool> queued(graph.node_count(), false);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<NodeId>> queue;
  auto push = [&](NodeId id) {
    if (id == kNoNode || queued[id]) return;
    queued[id] = true;
    queue.push(id);
  };
  for (size_t i = 0; i < touched.size(); ++i) {
    if (RecentlyTouched(touched, i)) continue;
    const absl::string_view name = graph.ValueName(touched[i]);
    ValueSource source = graph.ProducerOf(touched[i]);
    if (source.kind == ValueSource::Kind::kInitializer) {
      if (!refresher.Known(name)) refresher.AddInitializer(*graph.FindInitializer(name));
    } else if (source.kind == ValueSource::Kind::kNodeOutput && !refresher.Known(name)) {
      push(source.index);
    }
    // Read by a node whose input may have been set to it: inferred again.
    for (const ValueUse& use : graph.ConsumersOf(touched[i])) push(use.node);
  }
  while (!queue.empty()) {
    const NodeId id = queue.top();
    queue.pop();
    absl::StatusOr<bool> changed = refresher.Infer(id);
    if (!changed.ok()) return StrictInferenceFailure(changed.status());
    if (!*changed) continue;
    for (int slot = 0; slot < graph.node(id).output_size(); ++slot) {
      for (const ValueUse& use : graph.OutputConsumers(id, slot)) push(use.node);
    }
  }
  return absl::OkStatus();
}

// Whether inference knows the same of values `a` and `b`: the same type
// and the same facts (both none, or the same constant and symbolic value).
bool SameKnowledge(const schema::GraphTypes& types, absl::string_view a, absl::string_view b) {
  auto type_a = types.types.find(a);
  auto type_b = types.types.find(b);
  if (type_a == types.types.end() || type_b == types.types.end()) return false;
  if (type_a->second != type_b->second && !schema::SameType(*type_a->second, *type_b->second)) {
    return false;
  }
  auto facts_a = types.facts.find(a);
  auto facts_b = types.facts.find(b);
  if ((facts_a == types.facts.end()) != (facts_b == types.facts.end())) return false;
  if (facts_a == types.facts.end()) return true;
  auto same = [](const auto* x, const auto* y) {
    if (x == y) return true;
    return x != nullptr && y != nullptr && x->SerializeAsString() == y->SerializeAsString();
  };
  return same(facts_a->second.constant, facts_b->second.constant) &&
         same(facts_a->second.shape_data, facts_b->second.shape_data);
}

// What a round did to the main graph, for telling whether the inference
// before it still holds: the node and initializer counts before it, and
// every use it moved (GraphIndex::set_move_log).
struct RoundEdits {
  int node_count = 0;
  int initializer_count = 0;
  std::vector<std::pair<GraphIndex::ValueId, GraphIndex::ValueId>> moves;
};

// Whether the round `edits` describes only removed nodes of `graph` and
// moved uses to values inference knows the same of as the values they
// left (a forwarded input equal to the output it replaces; a duplicate's
// output): every node left then reads inputs of the types and facts it
// was inferred with, so `types` (the strict inference before the round)
// is the strict inference of the result once the removed nodes' outputs
// are forgotten. No node inserted, no initializer added; the passes edit
// no attribute in place.
bool OnlyForwarded(const GraphIndex& graph, const RoundEdits& edits,
                   const schema::GraphTypes& types) {
  if (graph.node_count() != edits.node_count ||
      graph.graph()->initializer_size() != edits.initializer_count) {
    return false;
  }
  // The lookups miss the caches on a large graph: the tables' slots of the
  // moves a few ahead are fetched meanwhile.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < edits.moves.size(); ++i) {
    if (i + kAhead < edits.moves.size()) {
      types.types.prefetch(graph.ValueName(edits.moves[i + kAhead].first));
      types.types.prefetch(graph.ValueName(edits.moves[i + kAhead].second));
    }
    const auto& [from, to] = edits.moves[i];
    if (!SameKnowledge(types, graph.ValueName(from), graph.ValueName(to))) return false;
  }
  return true;
}

// Forgets, in `types`, the outputs of the nodes of `graph` a round removed
// (before the index commits it and the strings the keys view go).
void ForgetRemovedOutputs(const GraphIndex& graph, schema::GraphTypes& types) {
  std::vector<const std::string*> outputs;
  for (NodeId id = 0; id < graph.node_count(); ++id) {
    if (graph.IsLive(id)) continue;
    for (const std::string& output : graph.node(id).output()) {
      if (!output.empty()) outputs.push_back(&output);
    }
  }
  // As in OnlyForwarded, the slots of the names a few ahead are fetched
  // while each is looked up.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (i + kAhead < outputs.size()) types.types.prefetch(*outputs[i + kAhead]);
    schema::ForgetValue(types, *outputs[i]);
  }
}

}  // namespace

absl::StatusOr<std::vector<const PassEntry*>> SelectPasses(const RewriteOptions& options) {
  if (options.profile != "exact" && options.profile != "deploy") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown profile '", options.profile, "' (exact, deploy)"));
  }
  auto find = [](absl::string_view name) -> const PassEntry* {
    for (const PassEntry& entry : Passes()) {
      if (entry.name == name) return &entry;
    }
    return nullptr;
  };
  for (const std::vector<std::string>* list : {&options.passes, &options.skip}) {
    for (const std::string& name : *list) {
      if (find(name) == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("unknown pass '", name, "'"));
      }
    }
  }
  std::vector<const PassEntry*> selected;
  if (!options.passes.empty()) {
    for (const std::string& name : options.passes) selected.push_back(find(name));
    return selected;
  }
  for (const PassEntry& entry : Passes()) {
    std::vector<absl::string_view> profiles = absl::StrSplit(entry.profiles, ' ');
    bool in_profile = absl::c_linear_search(profiles, options.profile);
    bool skipped = absl::c_linear_search(options.skip, entry.name);
    if (in_profile && !skipped) selected.push_back(&entry);
  }
  return selected;
}

absl::StatusOr<RewriteReport> Optimize(onnx::ModelProto& model, const RewriteOptions& options) {
  OC_ASSIGN_OR_RETURN(std::vector<const PassEntry*> entries, SelectPasses(options));
  OC_ASSIGN_OR_RETURN(std::vector<Rule> explained, RulesToExplain(options));
  if (options.max_rounds < 1) return absl::InvalidArgumentError("max_rounds must be at least 1");
  RewriteReport report;
  report.profile = options.profile;
  const std::string interface = Interface(model.graph());
  // Whether the model passes strict inference (then so must the result):
  // known from the first round's inference.
  bool strict_before = false;
  bool changed_at_all = false;

  std::vector<std::unique_ptr<Pass>> passes;
  for (const PassEntry* entry : entries) {
    passes.push_back(MakePass(*entry));
    report.passes.push_back(PassStats{entry->name});
  }
  if (!options.rule_files.empty()) {
    std::vector<Rule> rules;
    for (const RewriteOptions::RuleFile& file : options.rule_files) {
      OC_ASSIGN_OR_RETURN(std::vector<Rule> parsed, ParseRules(file.text, file.name));
      for (Rule& rule : parsed) rules.push_back(std::move(rule));
    }
    passes.push_back(MakeRulesPass("user-rules", std::move(rules)));
    report.passes.push_back(PassStats{"user-rules"});
  }
  PassStats prune{"prune"};
  report.converged = false;
  // Kept across rounds (Commit keeps it consistent); built again only after
  // the prune, which edits the protos directly, removed something.
  std::unique_ptr<ModelIndex> index;
  absl::node_hash_map<const GraphIndex*, GraphLog> logs;
  bool use_logs = false;
  // The inference the passes read; kept and refreshed across rounds when
  // the refresher can (strict, the main graph alone), else inferred again.
  std::optional<schema::InferenceResult> types;
  bool refreshed = false;
  // Every round since the passes last visited every node (a round with the
  // index built anew: no log yet) only forwarded values (OnlyForwarded):
  // inference knows the same of every value left as when each node was
  // last tried, so a rule need be tried again only near what changed
  // since (Focus::Within).
  bool facts_kept = false;
  for (int round = 1; round <= options.max_rounds && !report.converged; ++round) {
    report.rounds = round;
    // The passes visit every node this round (their logs start anew).
    const bool full_visit = index == nullptr;
    // The index only reads the model: built beside the inference (the
    // size's measure and inference write cached sizes, which it never reads).
    std::optional<absl::StatusOr<std::unique_ptr<ModelIndex>>> built;
    std::optional<absl::StatusOr<schema::InferenceResult>> inferred;
    RunSideBySide(
        [&] {
          if (full_visit) built = ModelIndex::Build(&model);
        },
        [&] {
          if (round == 1) report.bytes_before = static_cast<int64_t>(model.ByteSizeLong());
          if (refreshed) return;
          // Strict in every round when the model passed it: the round that
          // changes nothing has then checked the result's inference already.
          schema::InferenceOptions strict;
          strict.strict = round == 1 || strict_before;
          types.reset();
          inferred = schema::InferModel(model, strict);
        },
        full_visit && WorthAThread(model, options));
    if (built.has_value()) {
      OC_ASSIGN_OR_RETURN(index, *std::move(built));
    }
    if (full_visit) {
      if (round == 1) {
        std::tie(report.nodes_before, report.initializers_before) =
            CountIndexed(model, index.get());
      }
      logs.clear();
      // The worklist covers models without subgraphs (a subgraph reads
      // names of the graphs around it).
      use_logs = absl::c_none_of(index->Graphs(),
                                 [](const GraphIndex* graph) { return graph->parent() != nullptr; });
      if (use_logs) {
        for (GraphIndex* graph : index->Graphs()) graph->set_edit_log(&logs[graph].values);
      }
    }
    if (inferred.has_value()) {
      if (round == 1) {
        strict_before = inferred->ok();
        if (!inferred->ok()) inferred = schema::InferModel(model);
      } else if (!inferred->ok()) {
        return StrictInferenceFailure(inferred->status());
      }
      OC_ASSIGN_OR_RETURN(types, std::move(*inferred));
    }
    refreshed = false;
    PassContext context(model, *types, options);
    if (round == 1 && !explained.empty()) {
      report.explain = ExplainRules(explained, context, *index);
    }
    // The main graph alone, strict: its types are refreshed where the
    // round's edits touched it instead of inferred again.
    GraphIndex* only = index->Graphs().size() == 1 && model.functions_size() == 0
                           ? index->main_graph()
                           : nullptr;
    const bool may_refresh = options.refresh_inference && use_logs && strict_before &&
                             only != nullptr && round < options.max_rounds;
    const size_t log_start = may_refresh ? logs[only].values.size() : 0;
    RoundEdits edits;
    if (may_refresh) {
      edits.node_count = only->node_count();
      edits.initializer_count = only->graph()->initializer_size();
      only->set_move_log(&edits.moves);
    }
    bool changed = false;
    for (size_t i = 0; i < passes.size(); ++i) {
      OC_ASSIGN_OR_RETURN(bool ran, RunPass(*passes[i], i, context, *index,
                                            use_logs ? &logs : nullptr, facts_kept,
                                            report.passes[i]));
      changed |= ran;
    }
    if (may_refresh) only->set_move_log(nullptr);
    std::unique_ptr<schema::MainGraphRefresher> refresher;
    std::vector<GraphIndex::ValueId> touched;
    // The round only removed nodes and forwarded values: the inference
    // holds once the removed outputs are forgotten (none inferred again).
    bool forwarded = false;
    const size_t logged = may_refresh ? logs[only].values.size() - log_start : 0;
    schema::GraphTypes* main_types = nullptr;
    if (may_refresh && changed) {
      auto found = types->graphs.find(&model.graph());
      if (found != types->graphs.end()) main_types = &found->second;
    }
    if (main_types != nullptr && OnlyForwarded(*only, edits, *main_types)) {
      ForgetRemovedOutputs(*only, *main_types);
      forwarded = true;
    } else if (may_refresh && changed &&
               logged * kRefreshShare < static_cast<size_t>(only->live_node_count())) {
      const std::vector<GraphIndex::ValueId>& log = logs[only].values;
      touched.assign(log.begin() + log_start, log.end());
      refresher = std::make_unique<schema::MainGraphRefresher>(model, *types);
      ForgetRemoved(*only, *refresher);
    }
    OC_RETURN_IF_ERROR(index->Commit());
    for (auto& [graph, log] : logs) log.seeds.Clear();  // node ids changed
    // The prune finds nothing new when no pass changed the model since the
    // last one.
    if (round == 1 || changed) {
      const int64_t removed_before = prune.initializers_removed + prune.matches;
      const int value_info_before = model.graph().value_info_size();
      PruneGraphs(*index, prune);
      PruneFunctions(model, prune);
      if (prune.initializers_removed + prune.matches > removed_before) {
        changed = true;
        index.reset();
        refresher.reset();
        forwarded = false;
      }
      // The declared types inference holds view the value_info.
      if (model.graph().value_info_size() != value_info_before) {
        refresher.reset();
        forwarded = false;
      }
    }
    if (refresher != nullptr) {
      OC_RETURN_IF_ERROR(RefreshTypes(*only, touched, *refresher));
      refreshed = true;
    }
    if (forwarded) refreshed = true;
    facts_kept = forwarded && (full_visit || facts_kept);
    report.converged = !changed;
    changed_at_all |= changed;
    if (use_logs && index != nullptr) {
      // Drops what every pass has seen already.
      for (auto& [graph, log] : logs) {
        size_t seen = log.values.size();
        for (const std::optional<size_t>& at : log.seen) seen = std::min(seen, at.value_or(0));
        log.values.erase(log.values.begin(), log.values.begin() + seen);
        for (std::optional<size_t>& at : log.seen) {
          if (at.has_value()) *at -= seen;
        }
      }
    }
  }
  report.passes.push_back(prune);
  // A model no pass changed is the model given. The checker reads the
  // result beside the size's measure (which writes only cached sizes).
  if (changed_at_all && Interface(model.graph()) != interface) {
    return absl::InternalError("the rewrite changed the graph's inputs or outputs");
  }
  absl::Status checked;
  RunSideBySide(
      [&] {
        if (changed_at_all) checked = CheckRewritten(model);
      },
      [&] {
        std::tie(report.nodes_after, report.initializers_after) =
            CountIndexed(model, index.get());
        report.bytes_after = static_cast<int64_t>(model.ByteSizeLong());
      },
      changed_at_all && WorthAThread(model, options));
  OC_RETURN_IF_ERROR(checked);
  // The last round's inference was of the result when that round changed
  // nothing.
  if (changed_at_all && strict_before && !report.converged) {
    schema::InferenceOptions strict;
    strict.strict = true;
    absl::Status inferred = schema::InferModel(model, strict).status();
    if (!inferred.ok()) return StrictInferenceFailure(inferred);
  }
  return report;
}

std::string RewriteReport::ToText(bool with_records) const {
  std::string out = absl::StrFormat(
      "optimize (%s): %d rounds%s; nodes %d -> %d, initializers %d -> %d, bytes %d -> %d\n",
      profile, rounds, converged ? "" : " (no fixed point within the round cap)", nodes_before,
      nodes_after, initializers_before, initializers_after, bytes_before, bytes_after);
  for (const PassStats& pass : passes) {
    if (pass.matches == 0 && pass.initializers_removed == 0) continue;
    absl::StrAppendFormat(&out, "  %s: %d matches, nodes -%d +%d, initializers -%d +%d\n",
                          pass.pass, pass.matches, pass.nodes_removed, pass.nodes_added,
                          pass.initializers_removed, pass.initializers_added);
    for (const auto& [rule, count] : pass.rule_matches) {
      absl::StrAppendFormat(&out, "    %s: %d\n", rule, count);
    }
    if (!with_records) continue;
    for (const RewriteRecord& record : pass.records) {
      absl::StrAppend(&out, "    ", record.what, " in ", record.graph, ":\n",
                      Indented(record.before, "      - "),
                      Indented(record.after, "      + "));
    }
  }
  for (const RuleExplanation& explanation : explain) {
    absl::StrAppend(&out, "explain ", ExplanationText(explanation), "\n");
  }
  return out;
}

std::string RewriteReport::ToJson() const {
  JsonWriter json;
  json.BeginObject();
  json.Key("profile").String(profile);
  json.Key("rounds").Int(rounds).Key("converged").Bool(converged);
  json.Key("nodes_before").Int(nodes_before).Key("nodes_after").Int(nodes_after);
  json.Key("initializers_before").Int(initializers_before);
  json.Key("initializers_after").Int(initializers_after);
  json.Key("bytes_before").Int(bytes_before).Key("bytes_after").Int(bytes_after);
  json.Key("passes").BeginArray();
  for (const PassStats& pass : passes) {
    json.BeginObject().Key("pass").String(pass.pass).Key("matches").Int(pass.matches);
    json.Key("nodes_removed").Int(pass.nodes_removed).Key("nodes_added").Int(pass.nodes_added);
    json.Key("initializers_removed").Int(pass.initializers_removed);
    json.Key("initializers_added").Int(pass.initializers_added);
    if (!pass.records.empty()) {
      json.Key("rewrites").BeginArray();
      for (const RewriteRecord& record : pass.records) {
        json.BeginObject().Key("graph").String(record.graph).Key("what").String(record.what);
        json.Key("before").String(record.before).Key("after").String(record.after).EndObject();
      }
      json.EndArray();
    }
    if (!pass.rule_matches.empty()) {
      json.Key("rules").BeginObject();
      for (const auto& [rule, count] : pass.rule_matches) json.Key(rule).Int(count);
      json.EndObject();
    }
    json.EndObject();
  }
  json.EndArray();
  if (!explain.empty()) {
    json.Key("explain").BeginArray();
    for (const RuleExplanation& e : explain) {
      json.BeginObject().Key("rule").String(e.rule).Key("graph").String(e.graph);
      json.Key("node").String(e.node).Key("op").String(e.op).Key("index").Int(e.index);
      json.Key("matched").Bool(e.matched).Key("reason").String(e.reason).EndObject();
    }
    json.EndArray();
  }
  json.EndObject();
  return json.Finish();
}

}  // namespace onnxconvert::rewrites
