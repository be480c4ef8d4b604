#include "converter/step_runner.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "adapters/compositions.h"
#include "adapters/rewrites.h"
#include "base/status_macros.h"
#include "converter/adapter_plan.h"
#include "converter/expand.h"
#include "converter/step_scope.h"
#include "converter/tracks.h"
#include "google/protobuf/io/coded_stream.h"
#include "ir/node_rewriter.h"
#include "ir/text_printer.h"
#include "schema/checker.h"
#include "schema/type_strings.h"

namespace onnxconvert::converter {

using schema::OpSchema;
using schema::Registry;

namespace {

std::string NodeName(const onnx::NodeProto& node) {
  return node.name().empty() ? absl::StrCat("(unnamed ", node.op_type(), ")")
                             : absl::StrCat("'", node.name(), "'");
}

absl::Status StepError(absl::StatusCode code, absl::string_view domain, int64_t from, int64_t to,
                       const ir::NodeSite& site, const OpSchema& schema, absl::string_view reason) {
  return absl::Status(code, absl::StrFormat("%s: %s \xE2\x80\xBA node %s (%s): %s",
                                            StepName(domain, from, to), site.path,
                                            NodeName(*site.node), schema.Label(), reason));
}

}  // namespace

// The error of a conversion stopped at a step.
absl::Status Stopped(absl::string_view domain, int64_t from, int64_t to) {
  return absl::CancelledError(
      absl::StrCat(StepName(domain, from, to), ": the conversion was stopped (cancelled or past "
                   "its deadline)"));
}

namespace {

// The adapter context for converting `site`'s node from `current` to `next`
// through `rewriter`.
adapters::AdapterContext MakeAdapterContext(const StepContext& step, const ir::NodeSite& site,
                                            const OpSchema& current, const OpSchema& next,
                                            std::vector<adapters::Change>& changes,
                                            ir::Rewriter& rewriter) {
  return adapters::AdapterContext{*site.node, current, next, changes, step.to, rewriter};
}

// Runs the rewrite `adapter` on `site`'s node through `ctx` (whose rewriter
// answers from `scope`) and checks that the node then fits the operator version it
// binds to at the step's target opset (the rewrite may have replaced the
// op).
absl::Status RunRewrite(StepContext& step, const ir::NodeSite& site,
                        const adapters::AdapterEntry& adapter, adapters::AdapterContext& ctx,
                        const StepScope& scope, bool check_types) {
  std::string old_op = site.node->op_type();
  std::string old_domain = site.node->domain();
  ctx.row = adapter.row;
  absl::Status rewritten = adapter.fn(ctx);
  // What only the whole graph tells decides: the model is converted whole.
  OC_RETURN_IF_ERROR(scope.Unanswered());
  OC_RETURN_IF_ERROR(rewritten);
  // A node that kept its op binds to the version the step converts to.
  bool same_op = &ctx.from != &ctx.to && site.node->op_type() == old_op &&
                 site.node->domain() == old_domain;
  const OpSchema* bound =
      same_op ? &ctx.to : Registry::Get().Lookup(step.domain, site.node->op_type(), step.to);
  if (bound == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        adapter.name, " leaves a ", site.node->op_type(), " node, which does not exist at opset ",
        step.to));
  }
  absl::Status fits = NodeFitsVersion(*bound, *site.node);
  if (!fits.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(adapter.name, " leaves the node unfit: ", fits.message()));
  }
  if (site.node->op_type() != old_op) {
    step.edits.Retyped(site, OpKey(CanonicalDomain(old_domain), old_op));
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
absl::Status ConvertVanishingNode(StepContext& step, const ir::NodeSite& site, const OpSchema& current,
                                  NodeChange& report) {
  const adapters::AdapterEntry* replacement =
      adapters::Rewrites().Find(step.domain, current.name, current.since_version, 0);
  if (replacement != nullptr) {
    report.adapter = replacement->name;
    if (step.dry_run) return absl::OkStatus();
    StepScope scope(step, site);
    ir::NodeRewriter rewriter(step.edits, site, scope);
    adapters::AdapterContext ctx =
        MakeAdapterContext(step, site, current, current, report.changes, rewriter);
    return RunRewrite(step, site, *replacement, ctx, scope, /*check_types=*/false);
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
  StepScope scope(step, site);
  ir::NodeRewriter rewriter(step.edits, site, scope);
  OC_ASSIGN_OR_RETURN(
      Expansion expansion,
      ExpandFunctionNode(
          *site.node, current, step.from, step.to,
          [&](absl::string_view value) { return rewriter.TypeOf(value); },
          [&](absl::string_view name) { return rewriter.ConstantOf(name); },
          [&](absl::string_view hint) { return rewriter.FreshName(hint); }));
  if (!expansion.initializers.empty() && site.graph == nullptr) {
    return absl::FailedPreconditionError(
        "the expansion needs constants, which a function body cannot hold (not supported yet)");
  }
  for (onnx::TensorProto& tensor : expansion.initializers) {
    step.touches.AddInitializer(*site.graph, std::move(tensor));
  }
  for (onnx::NodeProto& node : expansion.nodes) rewriter.InsertBefore(std::move(node));
  rewriter.RemoveAnchor();
  report.changes.push_back({adapters::ChangeKind::kFunctionExpanded,
                            absl::StrCat("replaced by ", expansion.nodes.size(), " nodes")});
  return absl::OkStatus();
}

// What `site`'s node computes, when it has one output and the constant
// table can fold it from constants; else null.
const onnx::TensorProto* FoldedValue(StepContext& step, const ir::NodeSite& site) {
  const onnx::NodeProto& node = *site.node;
  if (site.graph == nullptr || step.domain != "" || node.output_size() == 0 ||
      node.output(0).empty()) {
    return nullptr;
  }
  for (int i = 1; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) return nullptr;
  }
  return step.constants.Find(step.index, site.graph, node.output(0));
}

// Replaces `site`'s node, which its adapter refused without editing the
// graph, by `value`, what it computes from constants: an initializer that
// an Identity passes on under the node's output name. Exact at every opset.
absl::Status ReplaceByFoldedValue(StepContext& step, const ir::NodeSite& site,
                                  const OpSchema& current, const onnx::TensorProto& value,
                                  bool touched, NodeChange& change) {
  change.adapter = absl::StrCat(current.Label(), ": value folded");
  if (step.dry_run) {
    change.changes = {
        {adapters::ChangeKind::kNodeFolded, "its inputs are constants: replaced by its value"}};
    return absl::OkStatus();
  }
  if (!touched) step.touches.Touch(site);
  onnx::TensorProto tensor = value;
  OC_ASSIGN_OR_RETURN(std::string name,
                      step.added.Add(site, step.names, step.touches, std::move(tensor),
                                     step.order));
  onnx::NodeProto& node = *site.node;
  std::string output = node.output(0);
  node.clear_attribute();
  node.clear_input();
  node.clear_output();
  node.clear_domain();
  node.set_op_type("Identity");
  node.add_input(name);
  node.add_output(output);
  step.edits.Retyped(site, OpKey("", current.name));
  change.changes = {{adapters::ChangeKind::kNodeFolded,
                     absl::StrCat("its inputs are constants: replaced by its value, "
                                  "initializer '",
                                  name, "' through an Identity")}};
  return absl::OkStatus();
}

// Whether RunStep only counts the nodes of an op whose versions `current`
// and `next` are, as `plan` takes them: rebound, not looked at.
bool CountsOnly(const AdapterPlan& plan, const OpSchema& current, const OpSchema& next) {
  return plan.rebinds_only && !adapters::NegativeAxesMatter(current, next);
}

// Counts `nodes` nodes of `op` in `graph` only rebound from version `from`
// to `to` among the step's bumps.
void CountBump(StepReport& report, absl::string_view graph, absl::string_view op, int from,
               int to, int nodes = 1) {
  for (auto it = report.bumps.rbegin(); it != report.bumps.rend(); ++it) {
    if (it->from_version == from && it->op == op && it->graph == graph) {
      it->nodes += nodes;
      return;
    }
  }
  report.bumps.push_back({std::string(graph), std::string(op), from, to, nodes});
}

// Counts `sites`, nodes of `op` only rebound from `from` to `to`, among the
// step's bumps, a run of sites in one graph at a time; polls should_stop as
// RunStep does.
absl::Status CountRebound(StepContext& step, StepReport& report,
                          absl::Span<const ir::NodeSite> sites, absl::string_view op, int from,
                          int to) {
  for (size_t begin = 0; begin < sites.size();) {
    size_t end = begin;
    for (; end < sites.size() && sites[end].path == sites[begin].path; ++end) {
      if (step.should_stop && (++step.polled % kStopPollNodes) == 0 && step.should_stop()) {
        return Stopped(step.domain, step.from, step.to);
      }
    }
    CountBump(report, sites[begin].path, op, from, to, static_cast<int>(end - begin));
    begin = end;
  }
  return absl::OkStatus();
}

// Whether `now`, the nodes standing where `before` stood, restructure it:
// other nodes than the node itself, another op, or other inputs.
bool Restructured(const onnx::NodeProto& before, const onnx::NodeProto& anchor,
                  absl::Span<const onnx::NodeProto* const> now) {
  if (now.size() != 1 || now[0] != &anchor) return true;
  return anchor.op_type() != before.op_type() || anchor.domain() != before.domain() ||
         !std::equal(anchor.input().begin(), anchor.input().end(), before.input().begin(),
                     before.input().end());
}

// A node as it was before a step, kept for the report's text in case the
// step restructures it: as its bytes (a copy of the message costs several
// times more, and most nodes join an entry listed before them and keep no
// text), else (bytes over protobuf's limit) as a copy.
class NodeBefore {
 public:
  // Keeps `node`, whose fields are `as_read` unless that is empty.
  void Keep(const onnx::NodeProto& node, absl::string_view as_read) {
    bytes_.clear();
    kept_ = true;
    copy_.reset();
    if (!as_read.empty()) {
      kept_bytes_ = as_read;
      return;
    }
    if (!node.AppendToString(&bytes_)) copy_ = node;
    kept_bytes_ = bytes_;
  }
  bool kept() const { return kept_; }
  void Drop() { kept_ = false; }
  // The node as it was (kept() is true).
  const onnx::NodeProto& Get() {
    if (!copy_.has_value()) {
      copy_.emplace();
      google::protobuf::io::CodedInputStream input(
          reinterpret_cast<const uint8_t*>(kept_bytes_.data()),
          static_cast<int>(kept_bytes_.size()));
      // As deep as the node it was written from.
      input.SetRecursionLimit(std::numeric_limits<int>::max());
      copy_->MergePartialFromCodedStream(&input);
    }
    return *copy_;
  }

 private:
  std::string bytes_;  // reused from node to node
  absl::string_view kept_bytes_;  // bytes_ or the node's fields as read
  bool kept_ = false;
  std::optional<onnx::NodeProto> copy_;
};

// Gives `change` the before and after text of `site`'s node when the step
// restructured it; `before` is the node as it was.
void KeepRestructuredText(const StepContext& step, const ir::NodeSite& site,
                          const onnx::NodeProto& before, NodeChange& change) {
  std::vector<const onnx::NodeProto*> now = step.edits.Around(site);
  if (!Restructured(before, *site.node, now)) return;
  change.before_text = absl::StrCat(PrintNodeText(before), "\n");
  for (const onnx::NodeProto* node : now) {
    absl::StrAppend(&change.after_text, PrintNodeText(*node), "\n");
  }
}

}  // namespace

// Whether `change`, of a node of `op` in `graph`, is exactly what `kept`
// records.
bool SameChange(const NodeChange& kept, const NodeChange& change, absl::string_view graph,
                absl::string_view op) {
  return kept.refusal.empty() && change.refusal.empty() && kept.op == op &&
         kept.from_version == change.from_version && kept.to_version == change.to_version &&
         kept.graph == graph && kept.adapter == change.adapter && kept.changes == change.changes;
}

bool StepOnlyRebinds(absl::string_view op, int64_t from, int64_t to) {
  const Registry& registry = Registry::Get();
  const OpSchema* current = registry.Lookup("", op, from);
  const OpSchema* next = registry.Lookup("", op, to);
  if (current == nullptr || next == nullptr) return false;
  return current == next || CountsOnly(PlanAdapter(*current, *next), *current, *next);
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
  // Nodes fold at the opset they bind at; not in other domains' steps.
  step.constants.SetOpset(step.domain.empty() ? step.from : 0);
  int64_t op_rank = 0;
  int texts_kept = 0;  // changes given their before and after text
  NodeBefore before;
  for (const OpSchema* changed : registry.ChangedAt(step.domain, boundary)) {
    const bool texts_wanted = !step.texts_full || !step.texts_full(op_rank);
    step.order = step.step_rank * kOpRanks + op_rank++;
    absl::Span<const ir::NodeSite> sites = step.index.NodesOf(step.domain, changed->name);
    const UnindexedNodes unindexed = step.unindexed_nodes && step.domain.empty()
                                         ? step.unindexed_nodes(changed->name)
                                         : UnindexedNodes{};
    if (sites.empty() && unindexed.count == 0) continue;
    // The versions on both sides of the step are the same for every node.
    const OpSchema* current = registry.Lookup(step.domain, changed->name, step.from);
    const OpSchema* next = registry.Lookup(step.domain, changed->name, step.to);
    if (current == nullptr) continue;  // the op is not valid here anyway
    if (current == next) continue;
    const AdapterPlan* plan = next != nullptr ? &PlanAdapter(*current, *next) : nullptr;
    // A node these versions only rebind validates as it did.
    bool validates_alike = plan != nullptr && plan->validates_alike;
    // Every node these versions only rebind is counted, not looked at.
    bool count_only = plan != nullptr && CountsOnly(*plan, *current, *next);
    if (!count_only && !step.dry_run) step.touches.Reserve(sites.size());
    // Whether a node of the op may come out restructured, for the report's
    // text: only the op vanishing, a registered rewrite, casts (types
    // that do not widen) or a last axis by Reshape (Squeeze, Unsqueeze)
    // insert nodes or rewire inputs; a fold too (checked per node).
    const bool may_restructure = next == nullptr || plan->rewrite != nullptr ||
                                 !plan->types_widen || changed->name == "Squeeze" ||
                                 changed->name == "Unsqueeze";
    if (count_only) {
      auto count_unindexed = [&] {
        if (unindexed.count == 0) return;
        CountBump(report, kMainGraphPath, changed->name, current->since_version,
                  next->since_version, static_cast<int>(unindexed.count));
      };
      if (unindexed.before_subgraphs) count_unindexed();
      OC_RETURN_IF_ERROR(CountRebound(step, report, sites, changed->name,
                                      current->since_version, next->since_version));
      if (!unindexed.before_subgraphs) count_unindexed();
      continue;
    }
    for (const ir::NodeSite& site : sites) {
      if (step.should_stop && (++step.polled % kStopPollNodes) == 0 && step.should_stop()) {
        return Stopped(step.domain, step.from, step.to);
      }
      NodeChange change;  // named once it is kept
      change.from_version = current->since_version;
      change.to_version = next != nullptr ? next->since_version : 0;
      absl::Status status;
      bool bumped = false;  // rebound, node unchanged
      // What the node computes when its inputs are constants: the way out
      // when the adapter refuses (leaving the node as it computes), looked
      // for only then, or when it decides whether to keep the report's text
      // (most nodes' inputs are no constants, and the search is the table's
      // whole graph).
      const onnx::TensorProto* folded = nullptr;
      bool fold_tried = false;
      auto fold = [&] {
        if (!fold_tried) folded = FoldedValue(step, site);
        fold_tried = true;
        return folded;
      };
      // The node as it was, for the report's text should the step
      // restructure it.
      before.Drop();
      if (!step.dry_run && texts_wanted && texts_kept < kRestructuredTexts &&
          (may_restructure || fold() != nullptr)) {
        before.Keep(*site.node, step.node_as_read ? step.node_as_read(*site.node)
                                                  : absl::string_view());
      }
      int64_t edits_before = step.edits.edits_made();
      bool touched = false;
      if (next == nullptr) {
        if (!step.dry_run) step.touches.Touch(site);
        touched = true;
        status = ConvertVanishingNode(step, site, *current, change);
      } else {
        StepScope scope(step, site);
        ir::NodeRewriter rewriter(step.edits, site, scope);
        adapters::AdapterContext ctx =
            MakeAdapterContext(step, site, *current, *next, change.changes, rewriter);
        bool replaced = false;  // by a composition of the target's ops
        if (!step.dry_run) {
          adapters::DropDefaultedAttributes(ctx);
          if (adapters::LastAxisByReshapeApplies(ctx)) {
            step.touches.Touch(site);
            touched = replaced = true;
            change.adapter = absl::StrCat(current->Label(), ": last axis by Reshape");
            const adapters::AdapterEntry reshape{adapters::AdapterEntry::kRewrite,
                                                 adapters::LastAxisByReshape, "", change.adapter};
            status = RunRewrite(step, site, reshape, ctx, scope, /*check_types=*/false);
          } else {
            status = adapters::ResolveNegativeAxes(ctx);
          }
        }
        // A registered rewrite is used as it is; else the entry is derived.
        std::optional<adapters::AdapterEntry> derived;
        if (plan->rewrite == nullptr) derived = FindAdapter(*plan, *site.node);
        const adapters::AdapterEntry& adapter = derived ? *derived : *plan->rewrite;
        if (!replaced) change.adapter = adapter.name;
        switch (replaced ? adapters::AdapterEntry::kUnsupported
                         : status.ok() ? adapter.kind : adapters::AdapterEntry::kUnsupported) {
          case adapters::AdapterEntry::kUnsupported:
            if (!status.ok() || replaced) break;
            status = absl::FailedPreconditionError(adapter.reason);
            break;
          case adapters::AdapterEntry::kCompatible: {
            if (!plan->types_widen) status = adapters::CheckTypesAllowed(ctx);
            if (!status.ok() && step.allow_casts && step.dry_run) {
              status = adapters::CastsWouldFit(ctx);
            } else if (!status.ok() && step.allow_casts) {
              step.touches.Touch(site);
              touched = true;
              status = adapters::InsertCasts(ctx);
            }
            if (!status.ok()) break;
            bumped = change.changes.empty();
            if (!step.dry_run && !touched && (!bumped || !validates_alike)) {
              step.touches.Touch(site, /*rebound=*/true);
            }
            if (!bumped) {
              change.changes.push_back({adapters::ChangeKind::kVersionBump,
                                        absl::StrCat(current->Label(), " -> ", next->Label())});
            }
            break;
          }
          case adapters::AdapterEntry::kRewrite:
            if (step.dry_run) break;
            step.touches.Touch(site);
            touched = true;
            status = RunRewrite(step, site, adapter, ctx, scope, !plan->types_widen);
            break;
        }
      }
      if (status.code() == absl::StatusCode::kFailedPrecondition &&
          step.edits.edits_made() == edits_before && fold() != nullptr) {
        status = ReplaceByFoldedValue(step, site, *current, *folded, touched, change);
      }
      if (!status.ok()) {
        absl::Status error = StepError(status.code(), step.domain, step.from, step.to, site,
                                       *current, status.message());
        // A dry run goes on, listing every node that cannot be converted.
        if (!step.dry_run || status.code() != absl::StatusCode::kFailedPrecondition) return error;
        change.refusal = std::string(error.message());
      } else if (!step.dry_run) {
        // Only a change the report lists on its own keeps text: one alike
        // the change before it adds just its node's name.
        const bool listed =
            !(bumped && change.refusal.empty()) &&
            (report.nodes.empty() ||
             !SameChange(report.nodes.back(), change, site.path, changed->name));
        if (before.kept() && listed) KeepRestructuredText(step, site, before.Get(), change);
        step.touches.Finished(site);
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
        if (!change.before_text.empty()) ++texts_kept;
        report.nodes.push_back(std::move(change));
      }
    }
  }
  return report;
}

StepChanges ApplyStep(const StepReport& step, StepTouches& touches, ir::NodeEdits& edits,
                      ir::OpIndex& index, ir::Retired& retired, ConstantTable& constants,
                      const onnx::GraphProto* main) {
  StepChanges changes = touches.Collect();
  edits.Apply(index, retired);
  // The constants stay known across steps unless a step changed Constant
  // nodes or subgraphs (or inserted nodes it may not say).
  if (ChangesConstants(step, changes)) {
    constants.Clear();
  } else {
    constants.AddInitializers(main, changes.added);
  }
  return changes;
}

void AddStep(StepReport step, ConversionReport& report) {
  for (const NodeChange& node : step.nodes) {
    (node.refusal.empty() ? report.nodes_converted : report.nodes_refused) += node.NodeCount();
  }
  for (const VersionBump& bump : step.bumps) report.nodes_converted += bump.nodes;
  report.steps.push_back(std::move(step));
}

// Whether a step may have changed what the constant table knows beyond the
// initializers it added: Constant nodes changed, inserted or retyped, or a
// change outside what the step can list node by node.
bool ChangesConstants(const StepReport& step, const StepChanges& changes) {
  if (!changes.needs_full.empty() || changes.functions_changed || changes.retyped) return true;
  for (const NodeChange& node : step.nodes) {
    if (node.op == "Constant") return true;
  }
  for (const onnx::NodeProto* node : changes.nodes) {
    if (node->op_type() == "Constant") return true;
  }
  return false;
}

}  // namespace onnxconvert::converter
