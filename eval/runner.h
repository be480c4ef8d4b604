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
#include "eval/kernel.h"
#include "eval/value.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::eval {

class Runner;
struct OpCall;
// A graph-level op: computes a node's outputs from values, not only tensors.
using GraphOpFn = absl::StatusOr<std::vector<Value>> (*)(const OpCall& call);

struct Plan;

// The values one running graph or function body defines, in front of the
// scopes around it (a subgraph's enclosing graphs; none for a function):
// one slot per local value of the body's plan. Initializers become tensors
// on first use only; a function's inputs are borrowed from its caller,
// whose values outlive the call.
class Scope {
 public:
  Scope(Runner& runner, Scope* parent, const Plan& plan);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // The value `name` here or in a scope around: null for "" and for absent
  // optional inputs; NotFound when nothing defines it.
  absl::StatusOr<const Value*> Lookup(const std::string& name);
  // The value of local `slot` (named `name`), or, when the slot holds
  // nothing, of `name` in a scope around.
  absl::StatusOr<const Value*> LookupSlot(int slot, const std::string& name);
  // Defines local `slot` as `value`, charged to the runner's live bytes.
  absl::Status Set(int slot, Value value);
  // Defines local `slot` as `value`, which the caller keeps alive (absent
  // when null).
  void Borrow(int slot, const Value* value);
  // Defines local `slot` as `value`, which the runner's cache keeps alive,
  // charged to the runner's live bytes as an owned value.
  absl::Status Share(int slot, const Value* value);
  // Defines local `slot` as an initializer, read on first use.
  void Defer(int slot, const onnx::TensorProto* dense, const onnx::SparseTensorProto* sparse);
  // Whether local `slot` is defined.
  bool Defines(int slot) const { return slots_[slot].state != Slot::kEmpty; }
  // Forgets local `slot`, freeing its value.
  void Erase(int slot);
  // The value of local `slot` (-1: free value `name` of a scope around),
  // moved out (copied if borrowed), or of a scope around (copied).
  absl::StatusOr<Value> Take(int slot, const std::string& name);
  // The value of local `slot` when this scope owns it, moved out and
  // refunded; nullopt otherwise.
  std::optional<Value> TakeOwned(int slot);

 private:
  struct Slot {
    // kShared: an initializer the RunnerCache holds converted, read in
    // place but charged to the live bytes as an owned value.
    enum State : uint8_t { kEmpty, kOwned, kBorrowed, kDeferred, kAbsent, kShared };
    State state = kEmpty;
    Value value;                              // kOwned
    const Value* borrowed = nullptr;          // kBorrowed, kShared
    const onnx::TensorProto* dense = nullptr; // kDeferred
    const onnx::SparseTensorProto* sparse = nullptr;
  };
  // The value of `slot`, or null with `found` false when it holds nothing.
  absl::StatusOr<const Value*> Read(int slot, bool& found);

  Runner& runner_;
  Scope* parent_;
  const Plan& plan_;
  std::vector<Slot> slots_;
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

// A graph or function body, as the runner plans it. Names view the
// body's protos.
struct Body {
  std::string what;  // "graph 'g'", "function 'local.F'"
  std::vector<absl::string_view> inputs;
  std::vector<absl::string_view> outputs;
  const google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes;
  const onnx::GraphProto* graph;  // for initializers; null for functions
};

// A value a node reads or defines: a local slot (>= 0), none (kNoValue:
// the name ""), or a value of the scopes around (kFree).
constexpr int kNoValue = -1;
constexpr int kFree = -2;

// A node of a plan: its values as slots, when values die after it, and
// what it binds to.
struct PlannedNode {
  const onnx::NodeProto* node;
  absl::string_view domain;  // canonical
  std::vector<int> inputs;   // slots (kNoValue, kFree)
  std::vector<int> outputs;  // slots (kNoValue)
  // Local slots freed after the node runs (their last use).
  std::vector<int> free_after;
  // The model-local function the node calls, and its instance for the
  // node (made on first call); null when none.
  const onnx::FunctionProto* local = nullptr;
  mutable const onnx::FunctionProto* instance = nullptr;
  // Whether input 0 is local, read once and dies here, and the op (of
  // ai.onnx) hands it on unchanged: a donor when the scope owns it.
  bool donates_input0 = false;
  bool identity = false;
  // The binding for the opset `bound_opset` of `domain` (-1: none yet).
  mutable int64_t bound_opset = -1;
  mutable const schema::OpSchema* op = nullptr;
  mutable GraphOpFn graph_op = nullptr;
  mutable KernelFn kernel = nullptr;
  mutable bool deterministic = true;
  // Whether the node has computed its outputs, and whether its graph-level
  // op or kernel asked for its operator version in any run.
  mutable bool ran = false;
  mutable bool read_version = false;
};

// When the values of a body die, and what it reads from around it.
struct Plan {
  std::string what;                // Body::what
  const onnx::GraphProto* graph;   // null for functions
  // Local names by slot, and slots by name (views of the body's protos).
  std::vector<absl::string_view> names;
  absl::flat_hash_map<absl::string_view, int> slots;
  // The slots of the body's inputs (kNoValue for ""), in order.
  std::vector<int> inputs;
  // Initializers (dense or sparse) and their slots, in the graph's order.
  struct Initializer {
    int slot;
    const onnx::TensorProto* dense;
    const onnx::SparseTensorProto* sparse;
  };
  std::vector<Initializer> initializers;
  // Local values no node uses (inputs, initializers), freed at once.
  std::vector<int> free_at_start;
  std::vector<PlannedNode> nodes;
  // The body's outputs: names, slots (kNoValue, kFree), and whether the
  // same name comes again later.
  std::vector<std::string> output_names;
  std::vector<int> outputs;
  std::vector<bool> output_again;
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

  // Set when the op asked for the operator version (since_version).
  mutable bool version_read = false;

  // The operator version the node binds to (KernelCall::since_version):
  // an op must ask here, not `schema`, for behaviour that differs between
  // the versions it serves.
  int since_version() const {
    version_read = true;
    return schema.since_version;
  }
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

// A row of a graph-level op table, as KernelRow.
struct GraphOpRow {
  const char* op;
  int first;  // the since_versions it computes, inclusive
  int last;
  GraphOpFn fn;
  const char* domain = "";  // "" for ai.onnx
};

// Constant, Identity, the sequence ops and the optional ops.
absl::Span<const GraphOpRow> ValueOps();
// If, Loop, Scan, SequenceMap, and FlexAttention (ai.onnx.preview) with
// its subgraphs.
absl::Span<const GraphOpRow> ControlFlowOps();

// What the runs of one model keep: the model-local functions, the plans of
// its bodies (by the address of their nodes) and the function instances of
// its nodes. Valid while the model lives unchanged.
struct RunnerCache {
  explicit RunnerCache(const google::protobuf::RepeatedPtrField<onnx::FunctionProto>& functions);

  absl::flat_hash_map<std::string, const onnx::FunctionProto*> functions;
  absl::flat_hash_map<const void*, std::unique_ptr<Plan>> plans;
  absl::flat_hash_map<std::string, std::unique_ptr<onnx::FunctionProto>> instances;
  // Initializers converted from their protos on first use, by the address
  // of their TensorProto or SparseTensorProto: every run reads them in
  // place instead of converting them again.
  absl::flat_hash_map<const void*, std::unique_ptr<const Value>> initializers;
  // The values of Constant nodes (of ai.onnx), by the address of their
  // NodeProto, kept from their first run likewise.
  absl::flat_hash_map<const void*, std::unique_ptr<Value>> constants;
};

// Runs bodies: graphs, subgraphs and function bodies, with the limits of
// one EvaluateModel call.
class Runner {
 public:
  Runner(const EvalOptions& options, RunnerCache& cache);

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
    return cache_.functions;
  }
  // The limits of the run.
  const EvalOptions& options() const { return options_; }
  // What the runs of the model keep.
  RunnerCache& cache() { return cache_; }

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
  // Runs the body of `plan` in `scope` (its inputs bound); its outputs.
  absl::StatusOr<std::vector<Value>> RunBody(const Plan& plan, Scope& scope,
                                             const Context& context, int depth);
  // Runs one node of a body in `scope`.
  absl::Status RunNode(const PlannedNode& planned, Scope& scope, const Context& context,
                       int depth);
  // The outputs of `planned`'s node (bound to its op) from `inputs`.
  absl::StatusOr<std::vector<Value>> Dispatch(const PlannedNode& planned,
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
  // The plan of subgraph `graph`, and of function body `function`.
  absl::StatusOr<const Plan*> PlanForGraph(const onnx::GraphProto& graph, int depth);
  absl::StatusOr<const Plan*> PlanForFunction(const onnx::FunctionProto& function, int depth);

  const EvalOptions& options_;
  RunnerCache& cache_;
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
