#ifndef ONNX_CONVERT_EVAL_RUNNER_H_
#define ONNX_CONVERT_EVAL_RUNNER_H_

// Inside the graph runner (graph.h): scopes of values, the plan of a body
// (when each value dies), and what the graph-level ops (Constant, control
// flow, sequences, optionals) see. Not for use outside eval/.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "eval/graph.h"
#include "eval/value.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::eval {

class Runner;

// The values one running graph or function body defines, in front of the
// scopes around it (a subgraph's enclosing graphs; none for a function).
// Initializers become tensors on first use only; a function's inputs are
// borrowed from its caller, whose values outlive the call.
class Scope {
 public:
  Scope(Runner& runner, Scope* parent) : runner_(runner), parent_(parent) {}
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // The value `name` here or in a scope around: null for "" and for absent
  // optional inputs; NotFound when nothing defines it.
  absl::StatusOr<const Value*> Lookup(const std::string& name);
  // Defines `name` here as `value`, charged to the runner's live bytes.
  absl::Status Set(const std::string& name, Value value);
  // Defines `name` here as `value`, which the caller keeps alive.
  void Borrow(const std::string& name, const Value* value);
  // Defines `name` here as an initializer, read on first use.
  void Defer(const std::string& name, const onnx::TensorProto* dense,
             const onnx::SparseTensorProto* sparse);
  // Defines `name` here as absent (an optional input not given).
  void SetAbsent(const std::string& name) { absent_.insert(name); }
  // Whether `name` is defined in this scope itself.
  bool Defines(const std::string& name) const;
  // Forgets `name` here, freeing its value.
  void Erase(const std::string& name);
  // The value `name` of this scope, moved out (copied if borrowed), or of a
  // scope around (copied).
  absl::StatusOr<Value> Take(const std::string& name);
  // The value `name` of this scope itself (not borrowed, not of a scope
  // around), moved out and refunded; nullopt when this scope does not own
  // it.
  std::optional<Value> TakeOwned(const std::string& name);

 private:
  // An initializer not yet read.
  struct Deferred {
    const onnx::TensorProto* dense;
    const onnx::SparseTensorProto* sparse;
  };

  Runner& runner_;
  Scope* parent_;
  // Node-based: pointers to values stay valid while others are added.
  absl::node_hash_map<std::string, Value> values_;
  absl::flat_hash_map<std::string, const Value*> borrowed_;
  absl::flat_hash_map<std::string, Deferred> deferred_;
  absl::flat_hash_set<std::string> absent_;
};

// What the nodes of a body bind to: the opset of each domain, and the
// model-local functions.
struct Context {
  absl::flat_hash_map<std::string, int64_t> opsets;  // by canonical domain
  const absl::flat_hash_map<std::string, const onnx::FunctionProto*>* functions = nullptr;
};

// The key of a function in Context::functions.
std::string FunctionKey(absl::string_view domain, absl::string_view name,
                        absl::string_view overload);

// A graph or function body, as the runner walks it.
struct Body {
  std::string what;  // "graph 'g'", "function 'local.F'"
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  const google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes;
  const onnx::GraphProto* graph;  // for initializers; null for functions
};

// When the values of a body die, and what it reads from around it.
struct Plan {
  // Local values no node uses (inputs, initializers), freed at once.
  std::vector<std::string> free_at_start;
  // Local values freed after node i runs (their last use).
  std::vector<std::vector<std::string>> free_after;
  // Values the body reads from enclosing scopes (its subgraphs' included).
  std::vector<std::string> free_values;
};

// A node as a graph-level op sees it.
struct OpCall {
  Runner& runner;
  const onnx::NodeProto& node;
  const schema::OpSchema& schema;
  std::vector<const Value*> inputs;  // null where absent
  Scope& scope;                      // where the node runs
  const Context& context;
  int depth;

  // Input `i`, or null when absent.
  const Value* input(int i) const {
    return i < static_cast<int>(inputs.size()) ? inputs[i] : nullptr;
  }
  // The attribute `name`, or null.
  const onnx::AttributeProto* attribute(absl::string_view name) const;
  // The INT attribute `name`, or `fallback` when unset.
  int64_t Int(absl::string_view name, int64_t fallback) const;
  // The INTS attribute `name` (empty when unset).
  std::vector<int64_t> Ints(absl::string_view name) const;
  // "node 'n' (Loop-16)".
  std::string Label() const;
  // InvalidArgument "<label>: <why>".
  absl::Status Error(absl::string_view why) const;
  // Input `i` as a tensor; an error when absent or not a tensor.
  absl::StatusOr<const Tensor*> TensorInput(int i) const;
  // Input `i` as a sequence; an error when absent or not a sequence.
  absl::StatusOr<const Value*> SequenceInput(int i) const;
  // The GRAPH attribute `name`; an error when unset.
  absl::StatusOr<const onnx::GraphProto*> Graph(absl::string_view name) const;
  // Runs `graph` (an attribute of the node) on `inputs` in a scope below
  // the node's; errors name the node and `where` ("body, iteration 3").
  absl::StatusOr<std::vector<Value>> RunGraph(const onnx::GraphProto& graph,
                                              std::vector<Value> inputs,
                                              absl::string_view where) const;
  // Charges `bytes` more (negative: fewer) to the live bytes, or fails
  // past the limit.
  absl::Status Charge(int64_t bytes) const;
};

// A graph-level op: computes a node's outputs from values, not only tensors.
using GraphOpFn = absl::StatusOr<std::vector<Value>> (*)(const OpCall& call);

// A row of a graph-level op table, as KernelRow.
struct GraphOpRow {
  const char* op;  // of ai.onnx
  int first;       // the since_versions it computes, inclusive
  int last;
  GraphOpFn fn;
};

// Constant, Identity, the sequence ops and the optional ops.
absl::Span<const GraphOpRow> ValueOps();
// If, Loop, Scan and SequenceMap.
absl::Span<const GraphOpRow> ControlFlowOps();

// Runs bodies: graphs, subgraphs and function bodies, with the limits of
// one EvaluateModel call.
class Runner {
 public:
  Runner(const EvalOptions& options,
         const google::protobuf::RepeatedPtrField<onnx::FunctionProto>& functions);

  // Runs `graph` in a new scope below `parent` (null for a main graph) with
  // `inputs` bound to its first inputs by position (the rest take their
  // initializers); its outputs in order.
  absl::StatusOr<std::vector<Value>> RunGraph(const onnx::GraphProto& graph, Scope* parent,
                                              std::vector<Value> inputs, const Context& context,
                                              int depth);
  // The main graph: `inputs` by name, checked against the declared types.
  absl::StatusOr<std::vector<Value>> RunMain(const onnx::GraphProto& graph,
                                             std::vector<NamedValue> inputs,
                                             const Context& context);

  // The values subgraph `graph` (run at `depth`) reads from the scopes
  // around it; an error as running it would give for its plan.
  absl::StatusOr<std::vector<std::string>> FreeValues(const onnx::GraphProto& graph, int depth);

  // The model-local functions by FunctionKey.
  const absl::flat_hash_map<std::string, const onnx::FunctionProto*>& functions() const {
    return functions_;
  }
  // The limits of the run.
  const EvalOptions& options() const { return options_; }

  // Live bytes: charged when a value is defined (failing past the limit),
  // refunded when it dies.
  absl::Status Charge(int64_t bytes);
  void Refund(int64_t bytes) { live_bytes_ -= bytes; }
  // What EvalResult reports: the most live bytes, the nodes run, whether
  // only deterministic ops ran.
  int64_t peak_live_bytes() const { return peak_live_bytes_; }
  int64_t node_runs() const { return node_runs_; }
  bool deterministic() const { return deterministic_; }

 private:
  // Runs `body` in `scope` (its inputs bound); its outputs.
  absl::StatusOr<std::vector<Value>> RunBody(const Body& body, Scope& scope,
                                             const Context& context, int depth);
  // Runs one node of a body in `scope`.
  // `dying`: the values of `scope` whose last use this node is.
  absl::Status RunNode(const onnx::NodeProto& node, Scope& scope, const Context& context,
                       int depth, absl::Span<const std::string> dying);
  // The outputs of `node` (bound to `schema`) from `inputs`.
  absl::StatusOr<std::vector<Value>> Dispatch(const onnx::NodeProto& node,
                                              const schema::OpSchema& schema,
                                              std::vector<const Value*> inputs, Scope& scope,
                                              const Context& context, int depth,
                                              Value* donor = nullptr);
  // Runs an instantiated function body: its formal inputs borrow
  // `inputs`, its nodes bind through its own opset imports (the caller's
  // for domains it does not import).
  absl::StatusOr<std::vector<Value>> CallFunction(const onnx::FunctionProto& body,
                                                  absl::Span<const Value* const> inputs,
                                                  const Context& caller, int depth);
  // The body of `node` instantiated from the model-local `function`.
  const onnx::FunctionProto& LocalInstance(const onnx::FunctionProto& function,
                                           const onnx::NodeProto& node);
  // The body of `node` from the spec (static, or built for the input
  // types), or null when the spec gives none; an error when it does not
  // build.
  absl::StatusOr<const onnx::FunctionProto*> SpecInstance(const onnx::NodeProto& node,
                                                          const schema::OpSchema& schema,
                                                          absl::Span<const Value* const> inputs,
                                                          int64_t opset);
  // The plan of `body`, built once per body; an error for values used
  // before they are defined, or defined twice.
  absl::StatusOr<const Plan*> PlanFor(const Body& body, int depth);
  // The plan of subgraph `graph`.
  absl::StatusOr<const Plan*> PlanForGraph(const onnx::GraphProto& graph, int depth);

  const EvalOptions& options_;
  absl::flat_hash_map<std::string, const onnx::FunctionProto*> functions_;
  absl::flat_hash_map<const void*, std::unique_ptr<Plan>> plans_;
  absl::flat_hash_map<std::string, std::unique_ptr<onnx::FunctionProto>> instances_;
  absl::flat_hash_map<const char*, std::unique_ptr<onnx::FunctionProto>> parsed_bodies_;
  int64_t live_bytes_ = 0;
  int64_t peak_live_bytes_ = 0;
  int64_t node_runs_ = 0;
  bool deterministic_ = true;
};

// The Body view of `graph`, and of `function`.
Body BodyOfGraph(const onnx::GraphProto& graph);
Body BodyOfFunction(const onnx::FunctionProto& function);

// "node 'n' (Op-v)", or "node (Op-v) of 'y'" for a node without a name.
std::string NodeLabel(const onnx::NodeProto& node, int since_version);

// `status` with "<prefix>: " before its message, its payloads kept.
absl::Status Prefixed(const absl::Status& status, absl::string_view prefix);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_RUNNER_H_
