#ifndef ONNX_CONVERT_REWRITES_PASS_H_
#define ONNX_CONVERT_REWRITES_PASS_H_

// What a rewrite pass is and sees. A pass rewrites one graph at a time (the
// main graph, a subgraph, a model-local function body) through its
// GraphIndex; the pass manager (pass_manager.h) runs the passes of a
// profile over every graph of the model, round after round, until none
// changes anything.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/graph_index.h"
#include "proto/onnx.pb.h"
#include "schema/inference.h"

namespace onnxconvert::rewrites {

// Choices for a rewrite.
struct RewriteOptions {
  // "exact" (nothing computes differently) or "deploy".
  std::string profile = "exact";
  // The passes to run, by name, in this order; empty: the profile's.
  std::vector<std::string> passes;
  // Passes of the profile not to run.
  std::vector<std::string> skip;
  // A fold whose outputs hold more bytes than this is skipped when it also
  // grows the model (net of the single-use constants it replaces).
  int64_t max_fold_bytes = int64_t{1} << 20;
  // Most rounds of the passes before giving up on a fixed point.
  int max_rounds = 8;
  // Rewrites each pass keeps in the report, with their text.
  int max_records = 20;
  // Rule files of the caller's (rewrites/rules.h format), applied after the
  // profile's passes by a pass named "user-rules"; `name` begins the
  // errors of its file ("rules.txt:3:7: ...").
  struct RuleFile {
    std::string name;
    std::string text;
  };
  std::vector<RuleFile> rule_files;
  // Whether a round after the first refreshes the inference where the
  // round before edited the main graph (when that edited few of its nodes)
  // instead of inferring the model again; the same rewrites either way
  // (off: for tests and measurements).
  bool refresh_inference = true;
  // Whether a model of 16,384 nodes or more is indexed while it is
  // inferred, and checked while its size is measured, on a second thread;
  // the same result either way (tests compare).
  bool second_thread = true;
  // Rules (built-in or of `rule_files`) to explain on the model as given:
  // why each matches or not at each node of its root op (rules_explain.h).
  std::vector<std::string> explain;
};

// One rewrite, for the report: where, what it took out and what took its
// place, in ONNX text.
struct RewriteRecord {
  std::string graph;   // "main", "main/then_branch of 'if' (If)", ...
  std::string what;    // the rule, or the kind of rewrite ("fold", "merge", ...)
  std::string before;  // the nodes taken out, a line each
  std::string after;   // the nodes or initializers in their place ("" when none)
};

// What one pass did, summed over its runs.
struct PassStats {
  std::string pass;
  int64_t matches = 0;  // places it rewrote
  int64_t nodes_removed = 0;
  int64_t nodes_added = 0;
  int64_t initializers_removed = 0;
  int64_t initializers_added = 0;
  // Matches per rule, for passes applying rules (rewrites/rules.h).
  std::map<std::string, int64_t> rule_matches = {};
  // The first rewrites (RewriteOptions::max_records of them).
  std::vector<RewriteRecord> records = {};

  // Keeps `record` when fewer than `options.max_records` are kept.
  void Record(const RewriteOptions& options, RewriteRecord record);
  // True if Record() would keep a record now (spares writing its text).
  bool WantsRecord(const RewriteOptions& options) const {
    return static_cast<int>(records.size()) < options.max_records;
  }
};

// The nodes of one graph a pass run needs to visit (a worklist): all of
// them, or those near a value an edit touched since the pass last ran on the
// graph (GraphIndex::set_edit_log), found as the run goes, so the run's own
// edits count too. Near: the producer and the consumers of the value, and
// the nodes up to `reach` - 1 steps downstream of them (a rule's pattern
// reaches that far up from the node it matches at).
class Focus {
 public:
  // The nodes near each value of a graph's edit log (its producer and its
  // consumers), found once for every pass run of a round: node ids hold
  // until the index commits, when the manager clears it. A node found near
  // a value stays found after an edit takes it away (an edit taking it to
  // another value logs that value too).
  struct Seeds {
    std::vector<uint32_t> begin = {0};  // entry i: nodes[begin[i], begin[i + 1])
    std::vector<NodeId> nodes;
    size_t resolved() const { return begin.size() - 1; }
    void Clear() {
      begin.assign(1, 0);
      nodes.clear();
    }
  };

  // Every node.
  Focus() = default;
  // The nodes near log[from...] (the log grows as the run edits); `seeds`
  // holds what earlier runs found near the log's values, and gains what
  // this one finds. `facts_kept`: inference knows the same of every value
  // as when the pass last visited every node, every run since focused as
  // this one (see Within).
  Focus(const GraphIndex& graph, const std::vector<GraphIndex::ValueId>& log, size_t from,
        int reach, Seeds& seeds, bool facts_kept)
      : graph_(&graph), log_(&log), seeds_(&seeds), from_(from), drained_(from), reach_(reach),
        facts_kept_(facts_kept) {}

  bool all() const { return graph_ == nullptr; }
  // Whether the run must visit node `id`.
  bool Visit(NodeId id);
  // Whether a rule reaching `reach` nodes up (at most the pass's reach)
  // must be tried at node `id`, which Visit has just accepted: when
  // inference is known unchanged since the pass last visited every node,
  // only within `reach` - 1 steps downstream of a node near a touched value
  // (the rule failed at `id` when last tried, and nothing it reads changed
  // since); else wherever Visit says (a fact changed upstream may reach
  // farther).
  bool Within(NodeId id, int reach) const {
    if (graph_ == nullptr || !facts_kept_ || reach >= reach_) return true;
    return static_cast<size_t>(id) < marked_.size() && marked_[id] > reach_ - reach;
  }
  // The values touched since the pass last ran (so far); empty for all().
  absl::Span<const GraphIndex::ValueId> touched() const {
    if (log_ == nullptr) return {};
    return absl::MakeConstSpan(*log_).subspan(from_);
  }

 private:
  void Mark(NodeId id, int steps);
  // Finds the nodes near log entry seeds_->resolved() into seeds_; entries
  // from `batch` on are resolved together (no edit in between).
  void Resolve(size_t batch);
  // The entry among the few before `i` (from `batch` on) holding the same
  // value as entry i, or i (edits log a value several times in a row).
  size_t RecentRepeat(size_t i, size_t batch) const;

  const GraphIndex* graph_ = nullptr;
  const std::vector<GraphIndex::ValueId>* log_ = nullptr;
  Seeds* seeds_ = nullptr;
  size_t from_ = 0;
  size_t drained_ = 0;
  int reach_ = 1;
  bool facts_kept_ = false;
  std::vector<int8_t> marked_;  // by node id: steps left downstream + 1; 0 unmarked
};

// What a pass sees besides the graph it rewrites.
class PassContext {
 public:
  PassContext(const onnx::ModelProto& model, const schema::InferenceResult& types,
              const RewriteOptions& options)
      : model_(model), types_(types), options_(options) {}

  const RewriteOptions& options() const { return options_; }
  // The inferred type of `value` in `graph` (or the graph around it that
  // defines it), or null.
  const onnx::TypeProto* TypeOf(const GraphIndex& graph, absl::string_view value) const;
  // The constant inference knows `value` of `graph` to have (an
  // initializer, or a value computed from static dims and constants), or
  // null.
  const onnx::TensorProto* KnownConstant(const GraphIndex& graph, absl::string_view value) const;
  // What inference found for `graph` itself (types, facts), or null (a
  // function body).
  const schema::GraphTypes* GraphTypesOf(const GraphIndex& graph) const;
  // The operator version `node` binds to through the model's opset
  // imports, or 0 when none.
  int SinceVersion(const onnx::NodeProto& node) const;
  // The version of `domain` ("" for ai.onnx) the model imports, or 0.
  int OpsetVersion(absl::string_view domain) const;
  // The numbers of initializer `tensor` as `compute` finds them, computed
  // once per context (no pass changes an initializer within a round).
  template <typename Compute>
  const std::optional<std::vector<double>>& InitializerNumbers(const onnx::TensorProto* tensor,
                                                               Compute compute) const {
    auto [it, inserted] = initializer_numbers_.try_emplace(tensor);
    if (inserted) it->second = compute();
    return it->second;
  }
  // The nodes of the graph being rewritten the pass must visit (set by the
  // pass manager before each run; every node when unset).
  Focus& focus() const { return focus_ != nullptr ? *focus_ : all_; }
  void set_focus(Focus* focus) { focus_ = focus; }

 private:
  // The inference entry of the graph defining `value` as seen from
  // `graph`, or null.
  const schema::GraphTypes* TypesFor(const GraphIndex& graph, absl::string_view value) const;

  const onnx::ModelProto& model_;
  const schema::InferenceResult& types_;
  const RewriteOptions& options_;
  // Constants made from dims inference knows as values.
  mutable std::deque<onnx::TensorProto> built_;
  Focus* focus_ = nullptr;
  mutable Focus all_;
  mutable absl::flat_hash_map<const onnx::TensorProto*, std::optional<std::vector<double>>>
      initializer_numbers_;
};

// A rewrite pass.
class Pass {
 public:
  virtual ~Pass() = default;
  // Its name, as --passes and the report spell it.
  virtual absl::string_view name() const = 0;
  // Rewrites `graph`, counting what it did in `stats`; whether it changed
  // anything. Edits go through the index (committed by the manager).
  virtual absl::StatusOr<bool> Run(const PassContext& context, GraphIndex& graph,
                                   PassStats& stats) = 0;
  // How far downstream of an edit the pass can find something new (see
  // Focus); 0: the pass visits every node each run.
  virtual int Reach(const RewriteOptions& /*options*/) const { return 0; }
};

// Whether `node` holds subgraphs (a GRAPH or GRAPHS attribute).
bool HasSubgraphs(const onnx::NodeProto& node);

// Whether `value` is an output of `graph`.
bool IsGraphOutput(const GraphIndex& graph, absl::string_view value);

// `nodes` in ONNX text, a line each: a record's before or after.
std::string NodesText(absl::Span<const onnx::NodeProto* const> nodes);

// "initializer NAME: float[2,3]": a record's line for an initializer.
std::string InitializerText(const onnx::TensorProto& tensor);

// What a pass without state does to one graph: rewrites it, counting what
// it did in `stats`; whether it changed anything.
using GraphPass = absl::StatusOr<bool> (*)(const PassContext& context, GraphIndex& graph,
                                           PassStats& stats);

// One row of the table of passes: a GraphPass (`run`), or a Pass built by
// `make` (one holding state: the rules).
struct PassEntry {
  const char* name;
  const char* profiles;  // the profiles running it: "exact deploy"
  const char* summary;
  int reach;                          // Pass::Reach of a `run` pass
  GraphPass run;                      // null for a `make` pass
  std::unique_ptr<Pass> (*make)();    // null for a `run` pass
};

// Every pass, in the order a profile runs them.
const std::vector<PassEntry>& Passes();

// The Pass of `entry`: its `make`'s, or one running its `run`.
std::unique_ptr<Pass> MakePass(const PassEntry& entry);

// The passes of each family (one file each), gathered by Passes(); each
// says what it rewrites in its file's opening comment.
absl::StatusOr<bool> FoldConstants(const PassContext& context, GraphIndex& graph,
                                   PassStats& stats);
absl::StatusOr<bool> ConstantsToInitializers(const PassContext& context, GraphIndex& graph,
                                             PassStats& stats);
absl::StatusOr<bool> DeadCode(const PassContext& context, GraphIndex& graph, PassStats& stats);
absl::StatusOr<bool> CommonSubexpressions(const PassContext& context, GraphIndex& graph,
                                          PassStats& stats);
absl::StatusOr<bool> InlineConstantIf(const PassContext& context, GraphIndex& graph,
                                      PassStats& stats);
absl::StatusOr<bool> FlattenConcat(const PassContext& context, GraphIndex& graph,
                                   PassStats& stats);

// The built-in rewrite rules (rewrites/rules.h, rewrites/rules/*.rules).
std::unique_ptr<Pass> MakeRules();

}  // namespace onnxconvert::rewrites

#endif  // ONNX_CONVERT_REWRITES_PASS_H_
