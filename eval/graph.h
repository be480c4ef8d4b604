#ifndef ONNX_CONVERT_EVAL_GRAPH_H_
#define ONNX_CONVERT_EVAL_GRAPH_H_

// Running a whole model: the graph runner of the reference evaluator.
//
// Nodes run in the order the graph stores them (which must be topological;
// the runner checks it), each bound to its operator version through the
// opsets the model (or function) imports. A node runs, first found:
// a model-local function of its name; a graph-level op of the runner
// (Constant, If, Loop, Scan, SequenceMap, the sequence and optional ops);
// a kernel of the kernel table; the spec's function body of its version
// (static, or built for the call's input types). Subgraphs see the values
// of the scopes around them. Every value is freed after its last use, a
// use by a subgraph included.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eval/value.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::eval {

// Limits for running a model that may come from anyone: past any of them
// the run fails with ResourceExhausted naming the node, instead of running
// out of memory or time.
struct EvalOptions {
  // Most elements of one tensor a node may produce.
  int64_t max_tensor_elements = int64_t{1} << 31;
  // Most bytes of values alive at once: inputs, initializers in use,
  // intermediates, scan outputs being gathered.
  int64_t max_live_bytes = int64_t{4} << 30;
  // Most iterations of one Loop or Scan.
  int64_t max_iterations = int64_t{1} << 24;
  // Most nodes run in all, each node of a subgraph or function counted
  // every time it runs.
  int64_t max_node_runs = int64_t{1} << 28;
  // Deepest nesting of subgraphs and function calls.
  int max_depth = 64;
  // When positive, a MemoryBudget (ir/memory_budget.h) of this many bytes
  // for the run: an allocation past it fails the node that makes it. When
  // zero, a budget the caller keeps still applies, and running out of
  // memory still fails the node rather than the process.
  int64_t memory_budget_bytes = 0;
};

// A value and its name: a graph input or output.
struct NamedValue {
  std::string name;
  Value value;
};

// What a run computed.
struct EvalResult {
  // The graph's outputs, in its order.
  std::vector<NamedValue> outputs;
  // False when a node whose outputs may differ from run to run ran (the
  // Random* ops, Bernoulli, Multinomial, Dropout).
  bool deterministic = true;
  // Nodes run, each node of a subgraph or function counted every time.
  int64_t node_runs = 0;
  // The most bytes of values alive at once.
  int64_t peak_live_bytes = 0;
};

// Runs the main graph of `model` on `inputs`, by name: every graph input
// that no initializer gives a default must be among them, and each must
// have the element type, rank and fixed dims the graph declares. Fails
// with an error that names the node (and the nodes and subgraphs around
// it), its op and version: Unimplemented for ops, versions and types the
// evaluator lacks, InvalidArgument for inputs the model or an op refuses,
// ResourceExhausted past a limit of `options`.
absl::StatusOr<EvalResult> EvaluateModel(const onnx::ModelProto& model,
                                         std::vector<NamedValue> inputs,
                                         const EvalOptions& options = {});

// Runs `graph` as EvaluateModel runs a main graph, its nodes bound through
// `opset_imports` and able to call `functions`.
absl::StatusOr<EvalResult> EvaluateGraph(
    const onnx::GraphProto& graph,
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& opset_imports,
    const google::protobuf::RepeatedPtrField<onnx::FunctionProto>& functions,
    std::vector<NamedValue> inputs, const EvalOptions& options = {});

struct RunnerCache;

// A model prepared for many runs: EvaluateModel's result for each, with the
// plans of its bodies (when values die, node inputs as slots, each node's
// kernel or function) made on the first run and kept. `model` must outlive
// the object, unchanged. Not for concurrent use.
class PreparedModel {
 public:
  explicit PreparedModel(const onnx::ModelProto& model, const EvalOptions& options = {});
  ~PreparedModel();
  PreparedModel(const PreparedModel&) = delete;
  PreparedModel& operator=(const PreparedModel&) = delete;

  // EvaluateModel(model, inputs, options).
  absl::StatusOr<EvalResult> Evaluate(std::vector<NamedValue> inputs);

  // Whether node `index` of the main graph has run, by a graph-level op or
  // a kernel (not a function), and in no run asked for the operator
  // version it binds to: its outputs followed from its op, attributes and
  // inputs alone.
  bool RanVersionBlind(int index) const;
  // The values of the main graph's Constant nodes that have run, by output
  // name, moved out of what the object keeps (a later run converts them
  // again): for a caller that records them once the runs are done.
  std::vector<NamedValue> TakeConstants();

 private:
  const onnx::ModelProto& model_;
  EvalOptions options_;
  std::unique_ptr<RunnerCache> cache_;
};

// Whether nodes of `op` of `domain` run the same graph-level op or kernel
// at operator versions `a` and `b` (a node that runs it version-blind then
// computes alike at both).
bool SameOpAtVersions(absl::string_view domain, absl::string_view op, int a, int b);

// The operator version ("Add-14", "ai.onnx.ml.LabelEncoder-2") of the node
// an error of EvaluateModel comes from (the innermost one, inside
// subgraphs and function bodies), if the error comes from a node.
std::optional<std::string> FailedOp(const absl::Status& status);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_GRAPH_H_
