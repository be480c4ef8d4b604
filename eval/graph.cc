// The graph runner: scopes, plans (when values die), nodes bound to their
// operator versions and dispatched to a function, a graph-level op, a
// kernel or a spec function body.

#include "eval/graph.h"

#include <algorithm>
#include <exception>
#include <new>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/evaluator.h"
#include "eval/kernel.h"
#include "eval/runner.h"
#include "ir/memory_budget.h"
#include "ir/status_macros.h"
#include "schema/type_strings.h"

namespace onnxconvert::eval {
namespace {

// The payload of an error that names the op of the node it comes from.
constexpr absl::string_view kFailedOpPayload = "type.onnx-convert/eval.failed_op";

absl::Status ResourceError(absl::string_view what) {
  return absl::ResourceExhaustedError(what);
}

// The graph-level op for `op` of `domain` at `since_version`, or null.
GraphOpFn FindGraphOp(absl::string_view domain, absl::string_view op, int since_version) {
  if (!domain.empty()) return nullptr;
  for (absl::Span<const GraphOpRow> table : {ValueOps(), ControlFlowOps()}) {
    for (const GraphOpRow& row : table) {
      if (row.op == op && row.first <= since_version && since_version <= row.last) return row.fn;
    }
  }
  return nullptr;
}

// The subgraphs among `node`'s attributes.
std::vector<const onnx::GraphProto*> Subgraphs(const onnx::NodeProto& node) {
  std::vector<const onnx::GraphProto*> graphs;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g()) graphs.push_back(&attribute.g());
    for (const onnx::GraphProto& g : attribute.graphs()) graphs.push_back(&g);
  }
  return graphs;
}

// "node 'n' (Op)" while planning, before the node binds to a version.
std::string PlanLabel(const onnx::NodeProto& node) {
  if (!node.name().empty()) return absl::StrCat("node '", node.name(), "' (", node.op_type(), ")");
  return absl::StrCat("node (", node.op_type(), ") of '",
                      node.output_size() > 0 ? node.output(0) : "", "'");
}

// Whether `value` has the type `declared` gives (element type, rank and
// fixed dims of a tensor; the kind of anything else); the mismatch if not.
std::optional<std::string> TypeMismatch(const Value& value, const onnx::TypeProto& declared) {
  auto kind_of = [](const onnx::TypeProto& type) -> std::optional<Value::Kind> {
    switch (type.value_case()) {
      case onnx::TypeProto::kTensorType: return Value::Kind::kTensor;
      case onnx::TypeProto::kSequenceType: return Value::Kind::kSequence;
      case onnx::TypeProto::kOptionalType: return Value::Kind::kOptional;
      case onnx::TypeProto::kMapType: return Value::Kind::kMap;
      default: return std::nullopt;
    }
  };
  std::optional<Value::Kind> kind = kind_of(declared);
  if (!kind) return std::nullopt;
  std::string expected = schema::TypeString(declared);
  if (value.kind() != *kind) {
    return absl::StrCat("expected ", expected, ", got ", TypeString(value));
  }
  if (!value.is_tensor()) return std::nullopt;
  const onnx::TypeProto::Tensor& tensor = declared.tensor_type();
  const Tensor& actual = value.tensor();
  bool same = tensor.elem_type() == 0 || tensor.elem_type() == actual.elem_type();
  if (same && tensor.has_shape()) {
    same = tensor.shape().dim_size() == actual.rank();
    for (int i = 0; same && i < tensor.shape().dim_size(); ++i) {
      const onnx::TensorShapeProto::Dimension& dim = tensor.shape().dim(i);
      same = !dim.has_dim_value() || dim.dim_value() < 0 || dim.dim_value() == actual.dims()[i];
    }
  }
  if (same) return std::nullopt;
  std::vector<std::string> dims;
  if (tensor.has_shape()) {
    for (const auto& dim : tensor.shape().dim()) {
      dims.push_back(dim.has_dim_value() ? absl::StrCat(dim.dim_value())
                                         : dim.has_dim_param() ? dim.dim_param() : "?");
    }
  }
  return absl::StrCat("expected ", ElementTypeName(tensor.elem_type()),
                      tensor.has_shape() ? absl::StrCat("[", absl::StrJoin(dims, ","), "]") : "",
                      ", got ", TypeString(value));
}

// Whether op `op` of ai.onnx hands input 0's elements on unchanged, so
// that it may take them over (KernelCall::donor) when input 0 dies there.
bool PassesInput0On(absl::string_view op) {
  return op == "Identity" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" ||
         op == "Flatten";
}

// The opsets `imports` name, by canonical domain.
absl::flat_hash_map<std::string, int64_t> OpsetMap(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  absl::flat_hash_map<std::string, int64_t> opsets;
  for (const onnx::OperatorSetIdProto& opset : imports) {
    opsets[std::string(schema::Registry::CanonicalDomain(opset.domain()))] = opset.version();
  }
  return opsets;
}

}  // namespace

// ---------------------------------------------------------------------------
// Labels and errors.

std::string NodeLabel(const onnx::NodeProto& node, int since_version) {
  std::string op = node.domain().empty() || node.domain() == "ai.onnx"
                       ? node.op_type()
                       : absl::StrCat(node.domain(), ".", node.op_type());
  if (since_version > 0) absl::StrAppend(&op, "-", since_version);
  if (!node.name().empty()) return absl::StrCat("node '", node.name(), "' (", op, ")");
  return absl::StrCat("node (", op, ") of '", node.output_size() > 0 ? node.output(0) : "",
                      "'");
}

absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  absl::Status out(status.code(), absl::StrCat(prefix, ": ", status.message()));
  status.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

std::optional<std::string> FailedOp(const absl::Status& status) {
  auto payload = status.GetPayload(kFailedOpPayload);
  if (!payload) return std::nullopt;
  return std::string(*payload);
}

std::string FunctionKey(absl::string_view domain, absl::string_view name,
                        absl::string_view overload) {
  return absl::StrCat(schema::Registry::CanonicalDomain(domain), "\n", name, "\n", overload);
}

Body BodyOfGraph(const onnx::GraphProto& graph) {
  Body body{absl::StrCat("graph '", graph.name(), "'"), {}, {}, &graph.node(), &graph};
  for (const auto& input : graph.input()) body.inputs.push_back(input.name());
  for (const auto& output : graph.output()) body.outputs.push_back(output.name());
  return body;
}

Body BodyOfFunction(const onnx::FunctionProto& function) {
  std::string name = function.domain().empty()
                         ? function.name()
                         : absl::StrCat(function.domain(), ".", function.name());
  Body body{absl::StrCat("function '", name, "'"),
            {function.input().begin(), function.input().end()},
            {function.output().begin(), function.output().end()},
            &function.node(),
            nullptr};
  return body;
}

// ---------------------------------------------------------------------------
// Scope.

Scope::~Scope() {
  for (const auto& [name, value] : values_) runner_.Refund(value.ByteSize());
}

absl::StatusOr<const Value*> Scope::Lookup(const std::string& name) {
  if (name.empty()) return nullptr;
  for (Scope* scope = this; scope != nullptr; scope = scope->parent_) {
    if (auto it = scope->values_.find(name); it != scope->values_.end()) return &it->second;
    if (auto it = scope->borrowed_.find(name); it != scope->borrowed_.end()) return it->second;
    if (scope->absent_.contains(name)) return nullptr;
    if (auto it = scope->deferred_.find(name); it != scope->deferred_.end()) {
      Deferred deferred = it->second;
      scope->deferred_.erase(it);
      int64_t limit = runner_.options().max_tensor_elements;
      absl::StatusOr<Tensor> tensor = deferred.dense != nullptr
                                          ? FromProto(*deferred.dense, limit)
                                          : FromSparseProto(*deferred.sparse, limit);
      if (!tensor.ok()) return tensor.status();
      OC_RETURN_IF_ERROR(scope->Set(name, *std::move(tensor)));
      return &scope->values_.at(name);
    }
  }
  return absl::NotFoundError(absl::StrCat("value '", name, "' is not defined"));
}

absl::Status Scope::Set(const std::string& name, Value value) {
  Erase(name);
  int64_t bytes = value.ByteSize();
  OC_RETURN_IF_ERROR(runner_.Charge(bytes));
  values_.insert_or_assign(name, std::move(value));
  return absl::OkStatus();
}

void Scope::Borrow(const std::string& name, const Value* value) {
  if (value == nullptr) {
    absent_.insert(name);
  } else {
    borrowed_[name] = value;
  }
}

void Scope::Defer(const std::string& name, const onnx::TensorProto* dense,
                  const onnx::SparseTensorProto* sparse) {
  deferred_[name] = Deferred{dense, sparse};
}

bool Scope::Defines(const std::string& name) const {
  return values_.contains(name) || borrowed_.contains(name) || deferred_.contains(name) ||
         absent_.contains(name);
}

void Scope::Erase(const std::string& name) {
  if (auto it = values_.find(name); it != values_.end()) {
    runner_.Refund(it->second.ByteSize());
    values_.erase(it);
  }
  borrowed_.erase(name);
  deferred_.erase(name);
  absent_.erase(name);
}

absl::StatusOr<Value> Scope::Take(const std::string& name) {
  if (auto it = values_.find(name); it != values_.end()) {
    Value value = std::move(it->second);
    runner_.Refund(value.ByteSize());
    values_.erase(it);
    return value;
  }
  OC_ASSIGN_OR_RETURN(const Value* value, Lookup(name));
  if (value == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("value '", name, "' is absent"));
  }
  Value copy = *value;
  Erase(name);
  return copy;
}

std::optional<Value> Scope::TakeOwned(const std::string& name) {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  std::optional<Value> value(std::move(it->second));
  values_.erase(it);
  runner_.Refund(value->ByteSize());
  return value;
}

// ---------------------------------------------------------------------------
// OpCall.

const onnx::AttributeProto* OpCall::attribute(absl::string_view name) const {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t OpCall::Int(absl::string_view name, int64_t fallback) const {
  const onnx::AttributeProto* a = attribute(name);
  return a != nullptr ? a->i() : fallback;
}

std::vector<int64_t> OpCall::Ints(absl::string_view name) const {
  const onnx::AttributeProto* a = attribute(name);
  if (a == nullptr) return {};
  return {a->ints().begin(), a->ints().end()};
}

std::string OpCall::Label() const { return NodeLabel(node, schema.since_version); }

absl::Status OpCall::Error(absl::string_view why) const {
  return absl::InvalidArgumentError(absl::StrCat(Label(), ": ", why));
}

absl::StatusOr<const Tensor*> OpCall::TensorInput(int i) const {
  const Value* value = input(i);
  if (value == nullptr) return Error(absl::StrCat("input ", i, " is absent"));
  if (!value->is_tensor()) {
    return Error(absl::StrCat("input ", i, " is a ", KindName(value->kind()), ", not a tensor"));
  }
  return &value->tensor();
}

absl::StatusOr<const Value*> OpCall::SequenceInput(int i) const {
  const Value* value = input(i);
  if (value == nullptr) return Error(absl::StrCat("input ", i, " is absent"));
  if (value->kind() != Value::Kind::kSequence) {
    return Error(absl::StrCat("input ", i, " is a ", KindName(value->kind()), ", not a sequence"));
  }
  return value;
}

absl::StatusOr<const onnx::GraphProto*> OpCall::Graph(absl::string_view name) const {
  const onnx::AttributeProto* a = attribute(name);
  if (a == nullptr || !a->has_g()) return Error(absl::StrCat("attribute '", name, "' is unset"));
  return &a->g();
}

absl::StatusOr<std::vector<Value>> OpCall::RunGraph(const onnx::GraphProto& graph,
                                                    std::vector<Value> inputs,
                                                    absl::string_view where) const {
  absl::StatusOr<std::vector<Value>> outputs =
      runner.RunGraph(graph, &scope, std::move(inputs), context, depth + 1);
  if (!outputs.ok()) return Prefixed(outputs.status(), absl::StrCat(Label(), ", ", where));
  return outputs;
}

absl::Status OpCall::Charge(int64_t bytes) const {
  if (bytes < 0) {
    runner.Refund(-bytes);
    return absl::OkStatus();
  }
  absl::Status charged = runner.Charge(bytes);
  if (!charged.ok()) return Prefixed(charged, Label());
  return charged;
}

// ---------------------------------------------------------------------------
// Runner.

Runner::Runner(const EvalOptions& options,
               const google::protobuf::RepeatedPtrField<onnx::FunctionProto>& functions)
    : options_(options) {
  for (const onnx::FunctionProto& function : functions) {
    functions_[FunctionKey(function.domain(), function.name(), function.overload())] = &function;
  }
}

absl::Status Runner::Charge(int64_t bytes) {
  live_bytes_ += bytes;
  peak_live_bytes_ = std::max(peak_live_bytes_, live_bytes_);
  if (live_bytes_ > options_.max_live_bytes) {
    live_bytes_ -= bytes;
    return ResourceError(absl::StrCat("the values alive at once would take more than ",
                                      options_.max_live_bytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<const Plan*> Runner::PlanForGraph(const onnx::GraphProto& graph, int depth) {
  return PlanFor(BodyOfGraph(graph), depth);
}

absl::StatusOr<std::vector<std::string>> Runner::FreeValues(const onnx::GraphProto& graph,
                                                            int depth) {
  OC_ASSIGN_OR_RETURN(const Plan* plan, PlanForGraph(graph, depth));
  return plan->free_values;
}

absl::StatusOr<const Plan*> Runner::PlanFor(const Body& body, int depth) {
  if (auto it = plans_.find(body.nodes); it != plans_.end()) return it->second.get();
  if (depth > options_.max_depth) {
    return ResourceError(absl::StrCat("subgraphs and functions nest deeper than ",
                                      options_.max_depth));
  }
  auto plan = std::make_unique<Plan>();
  const auto& nodes = *body.nodes;
  plan->free_after.resize(nodes.size());
  // Each local value: where it is defined (-1: input or initializer) and
  // where it is last used (-2: nowhere). Keys view the body's names, which
  // outlive the planning.
  struct Local {
    int defined;
    int last_use;
  };
  size_t expected = body.inputs.size();
  if (body.graph != nullptr) expected += body.graph->initializer_size();
  for (const onnx::NodeProto& node : nodes) expected += node.output_size();
  absl::flat_hash_map<absl::string_view, Local> locals_at;
  locals_at.reserve(expected);
  std::vector<absl::string_view> locals;
  locals.reserve(expected);
  // `by` names the definer for the error (a node's label is built only
  // then: `at` >= 0).
  auto define = [&](const std::string& name, int at, absl::string_view by) -> absl::Status {
    if (name.empty()) return absl::OkStatus();
    if (!locals_at.emplace(name, Local{at, -2}).second) {
      std::string label = at >= 0 ? PlanLabel(nodes[at]) : std::string(by);
      return absl::InvalidArgumentError(absl::StrCat(
          body.what, ": value '", name, "' is defined twice (again by ", label, ")"));
    }
    locals.push_back(name);
    return absl::OkStatus();
  };
  for (const std::string& input : body.inputs) OC_RETURN_IF_ERROR(define(input, -1, "an input"));
  if (body.graph != nullptr) {
    for (const auto& t : body.graph->initializer()) {
      if (!locals_at.contains(t.name())) OC_RETURN_IF_ERROR(define(t.name(), -1, ""));
    }
    for (const auto& t : body.graph->sparse_initializer()) {
      if (!locals_at.contains(t.values().name())) {
        OC_RETURN_IF_ERROR(define(t.values().name(), -1, ""));
      }
    }
  }
  absl::flat_hash_set<absl::string_view> free_seen;
  std::optional<absl::flat_hash_map<absl::string_view, int>> produced_by;
  auto use = [&](const std::string& name, int i) -> absl::Status {
    if (name.empty()) return absl::OkStatus();
    if (auto it = locals_at.find(name); it != locals_at.end()) {
      it->second.last_use = i;
      return absl::OkStatus();
    }
    // A node defining it later: out of order. Where each value is made is
    // mapped only once a name is not local (a free value or an error).
    if (!produced_by) {
      produced_by.emplace();
      for (int j = 0; j < nodes.size(); ++j) {
        for (const std::string& output : nodes[j].output()) {
          if (!output.empty()) produced_by->emplace(output, j);
        }
      }
    }
    if (auto it = produced_by->find(name); it != produced_by->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          body.what, ": ", PlanLabel(nodes[i]), " reads '", name, "' before ",
          PlanLabel(nodes[it->second]), " defines it (the nodes are not in topological order)"));
    }
    if (free_seen.insert(name).second) plan->free_values.push_back(name);
    return absl::OkStatus();
  };
  for (int i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& node = nodes[i];
    for (const std::string& input : node.input()) OC_RETURN_IF_ERROR(use(input, i));
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (!attribute.has_g() && attribute.graphs_size() == 0) continue;
      for (const onnx::GraphProto* graph : Subgraphs(node)) {
        absl::StatusOr<const Plan*> inner = PlanForGraph(*graph, depth + 1);
        if (!inner.ok()) {
          return Prefixed(inner.status(), absl::StrCat(body.what, ", ", PlanLabel(node)));
        }
        for (const std::string& name : (*inner)->free_values) OC_RETURN_IF_ERROR(use(name, i));
      }
      break;
    }
    for (const std::string& output : node.output()) {
      OC_RETURN_IF_ERROR(define(output, i, ""));
    }
  }
  absl::flat_hash_set<absl::string_view> kept;
  for (const std::string& output : body.outputs) {
    if (locals_at.contains(output)) {
      kept.insert(output);
    } else if (free_seen.insert(output).second) {
      plan->free_values.push_back(output);
    }
  }
  for (absl::string_view name : locals) {
    if (kept.contains(name)) continue;
    const Local& local = locals_at.at(name);
    int last = local.last_use != -2 ? local.last_use : local.defined;
    if (last < 0) {
      plan->free_at_start.emplace_back(name);
    } else {
      plan->free_after[last].emplace_back(name);
    }
  }
  const Plan* result = plan.get();
  plans_[body.nodes] = std::move(plan);
  return result;
}

absl::StatusOr<std::vector<Value>> Runner::RunBody(const Body& body, Scope& scope,
                                                   const Context& context, int depth) {
  OC_ASSIGN_OR_RETURN(const Plan* plan, PlanFor(body, depth));
  for (const std::string& name : plan->free_at_start) scope.Erase(name);
  for (int i = 0; i < body.nodes->size(); ++i) {
    OC_RETURN_IF_ERROR(RunNode((*body.nodes)[i], scope, context, depth, plan->free_after[i]));
    for (const std::string& name : plan->free_after[i]) scope.Erase(name);
  }
  std::vector<Value> outputs;
  for (size_t k = 0; k < body.outputs.size(); ++k) {
    const std::string& name = body.outputs[k];
    bool again = std::find(body.outputs.begin() + k + 1, body.outputs.end(), name) !=
                 body.outputs.end();
    absl::StatusOr<Value> value = [&]() -> absl::StatusOr<Value> {
      if (!again) return scope.Take(name);
      OC_ASSIGN_OR_RETURN(const Value* found, scope.Lookup(name));
      if (found == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("value '", name, "' is absent"));
      }
      return *found;
    }();
    if (!value.ok()) {
      // An output nothing computed: a function's optional output the call
      // does not use. The caller refuses it if it does.
      if (body.graph == nullptr) {
        outputs.emplace_back();
        continue;
      }
      return Prefixed(value.status(), absl::StrCat(body.what, ", output '", name, "'"));
    }
    outputs.push_back(*std::move(value));
  }
  return outputs;
}

absl::StatusOr<std::vector<Value>> Runner::RunGraph(const onnx::GraphProto& graph, Scope* parent,
                                                    std::vector<Value> inputs,
                                                    const Context& context, int depth) {
  if (depth > options_.max_depth) {
    return ResourceError(absl::StrCat("subgraphs and functions nest deeper than ",
                                      options_.max_depth));
  }
  if (static_cast<int>(inputs.size()) > graph.input_size()) {
    return absl::InvalidArgumentError(absl::StrCat("graph '", graph.name(), "' takes ",
                                                   graph.input_size(), " inputs, given ",
                                                   inputs.size()));
  }
  Scope scope(*this, parent);
  for (size_t i = 0; i < inputs.size(); ++i) {
    OC_RETURN_IF_ERROR(scope.Set(graph.input(i).name(), std::move(inputs[i])));
  }
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (!scope.Defines(t.name())) scope.Defer(t.name(), &t, nullptr);
  }
  for (const onnx::SparseTensorProto& t : graph.sparse_initializer()) {
    if (!scope.Defines(t.values().name())) scope.Defer(t.values().name(), nullptr, &t);
  }
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!scope.Defines(input.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph '", graph.name(), "': input '", input.name(), "' is not given"));
    }
  }
  return RunBody(BodyOfGraph(graph), scope, context, depth);
}

absl::StatusOr<std::vector<Value>> Runner::RunMain(const onnx::GraphProto& graph,
                                                   std::vector<NamedValue> inputs,
                                                   const Context& context) {
  OC_ASSIGN_OR_RETURN(const Plan* plan, PlanFor(BodyOfGraph(graph), 0));
  if (!plan->free_values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph '", graph.name(), "' reads values nothing defines: '",
        absl::StrJoin(plan->free_values, "', '"), "'"));
  }
  absl::flat_hash_map<std::string, const onnx::ValueInfoProto*> declared;
  for (const onnx::ValueInfoProto& input : graph.input()) declared[input.name()] = &input;
  Scope scope(*this, nullptr);
  for (NamedValue& input : inputs) {
    auto it = declared.find(input.name);
    if (it == declared.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the graph has no input '", input.name, "'"));
    }
    if (scope.Defines(input.name)) {
      return absl::InvalidArgumentError(absl::StrCat("input '", input.name, "' is given twice"));
    }
    if (std::optional<std::string> mismatch = TypeMismatch(input.value, it->second->type())) {
      return absl::InvalidArgumentError(absl::StrCat("input '", input.name, "': ", *mismatch));
    }
    OC_RETURN_IF_ERROR(scope.Set(input.name, std::move(input.value)));
  }
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (!scope.Defines(t.name())) scope.Defer(t.name(), &t, nullptr);
  }
  for (const onnx::SparseTensorProto& t : graph.sparse_initializer()) {
    if (!scope.Defines(t.values().name())) scope.Defer(t.values().name(), nullptr, &t);
  }
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!scope.Defines(input.name())) {
      return absl::InvalidArgumentError(absl::StrCat("input '", input.name(), "' is not given"));
    }
  }
  return RunBody(BodyOfGraph(graph), scope, context, 0);
}

absl::Status Runner::RunNode(const onnx::NodeProto& node, Scope& scope, const Context& context,
                             int depth, absl::Span<const std::string> dying) {
  if (++node_runs_ > options_.max_node_runs) {
    return ResourceError(absl::StrCat(PlanLabel(node), ": the run would take more than ",
                                      options_.max_node_runs, " node runs"));
  }
  absl::string_view domain = schema::Registry::CanonicalDomain(node.domain());
  const schema::OpSchema* op = nullptr;
  int since_version = 0;
  const onnx::FunctionProto* local = nullptr;
  auto found = functions_.empty()
                   ? functions_.end()
                   : functions_.find(FunctionKey(domain, node.op_type(), node.overload()));
  if (found != functions_.end()) {
    local = found->second;
  } else {
    auto opset = context.opsets.find(domain);
    if (opset == context.opsets.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(node, 0), ": nothing imports an opset of domain '", domain, "'"));
    }
    op = schema::Registry::Get().Lookup(domain, node.op_type(), opset->second);
    if (op == nullptr) {
      bool known = schema::Registry::Get().KnowsDomain(domain);
      std::string why = absl::StrCat(NodeLabel(node, 0), ": no operator ", node.op_type(),
                                     " in domain '", domain, "' at opset ", opset->second,
                                     known ? "" : ", and no model-local function of that name");
      return known ? absl::InvalidArgumentError(why) : absl::UnimplementedError(why);
    }
    since_version = op->since_version;
  }
  auto fail = [&](const absl::Status& status) {
    std::string label = NodeLabel(node, since_version);
    std::string kernel_prefix =
        absl::StrCat("node '", node.name(), "' (", node.op_type(), "-", since_version, ")");
    absl::Status out = status;
    absl::string_view message = status.message();
    if (absl::StartsWith(message, kernel_prefix)) {
      out = Prefixed(absl::Status(status.code(), message.substr(kernel_prefix.size() + 2)), label);
    } else if (!absl::StartsWith(message, label)) {
      out = Prefixed(status, label);
    }
    status.ForEachPayload(
        [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
    if (!out.GetPayload(kFailedOpPayload)) {
      out.SetPayload(kFailedOpPayload,
                     absl::Cord(op != nullptr ? op->Label() : absl::StrCat(node.op_type())));
    }
    return out;
  };
  std::vector<const Value*> inputs;
  for (const std::string& name : node.input()) {
    absl::StatusOr<const Value*> value = scope.Lookup(name);
    if (!value.ok()) return fail(Prefixed(value.status(), absl::StrCat("input '", name, "'")));
    inputs.push_back(*value);
  }
  // Ops that pass input 0's elements on unchanged (under other dims) take
  // them over when this node is its last use and the scope owns it: moved,
  // not copied.
  std::optional<Value> donor;
  if (op != nullptr && domain.empty() && !inputs.empty() && inputs[0] != nullptr &&
      inputs[0]->is_tensor() && PassesInput0On(node.op_type())) {
    const std::string& name = node.input(0);
    bool dies = std::find(dying.begin(), dying.end(), name) != dying.end();
    bool once = std::count(node.input().begin(), node.input().end(), name) == 1;
    if (dies && once) {
      donor = scope.TakeOwned(name);
      if (donor) inputs[0] = &*donor;
    }
  }
  absl::StatusOr<std::vector<Value>> outputs;
  try {
    if (local != nullptr) {
      outputs = CallFunction(LocalInstance(*local, node), inputs, context, depth);
    } else if (donor && node.op_type() == "Identity") {
      std::vector<Value> moved;
      moved.push_back(*std::move(donor));
      outputs = std::move(moved);
    } else {
      outputs = Dispatch(node, *op, inputs, scope, context, depth, donor ? &*donor : nullptr);
    }
  } catch (const MemoryBudgetExceeded& e) {
    outputs = BudgetError("the run", e.limit());
  } catch (const std::bad_alloc&) {
    outputs = ResourceError("out of memory");
  } catch (const std::exception& e) {
    outputs = absl::InternalError(absl::StrCat("failed: ", e.what()));
  }
  if (!outputs.ok()) return fail(outputs.status());
  if (static_cast<int>(outputs->size()) < node.output_size()) {
    return fail(absl::InternalError(absl::StrCat("computes ", outputs->size(),
                                                 " outputs, the node names ",
                                                 node.output_size())));
  }
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& name = node.output(i);
    if (name.empty()) continue;
    Value& value = (*outputs)[i];
    if (value.MaxTensorSize() > options_.max_tensor_elements) {
      return fail(ResourceError(absl::StrCat("output '", name, "' holds more than ",
                                             options_.max_tensor_elements, " elements")));
    }
    if (value.is_tensor() && value.tensor().elem_type() == onnx::TensorProto::UNDEFINED) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("output '", name, "' is not computed (the body defines no value)")));
    }
    absl::Status set = scope.Set(name, std::move(value));
    if (!set.ok()) return fail(set);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Value>> Runner::Dispatch(const onnx::NodeProto& node,
                                                    const schema::OpSchema& schema,
                                                    std::vector<const Value*> inputs,
                                                    Scope& scope, const Context& context,
                                                    int depth, Value* donor) {
  absl::string_view domain = schema::Registry::CanonicalDomain(node.domain());
  if (!IsDeterministic(domain, node.op_type())) deterministic_ = false;
  if (GraphOpFn fn = FindGraphOp(domain, node.op_type(), schema.since_version)) {
    OpCall call{*this, node, schema, std::move(inputs), scope, context, depth};
    return fn(call);
  }
  if (KernelFn kernel = FindKernel(domain, node.op_type(), schema.since_version)) {
    std::vector<const Tensor*> tensors;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Value* value = inputs[i];
      if (value != nullptr && !value->is_tensor()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " is a ", KindName(value->kind()), ", and the kernel takes tensors"));
      }
      tensors.push_back(value != nullptr ? &value->tensor() : nullptr);
    }
    KernelCall call{node, schema.since_version, std::move(tensors),
                    donor != nullptr ? &donor->tensor() : nullptr};
    OC_ASSIGN_OR_RETURN(std::vector<Tensor> computed, kernel(call));
    std::vector<Value> outputs;
    outputs.reserve(computed.size());
    for (Tensor& tensor : computed) outputs.emplace_back(std::move(tensor));
    return outputs;
  }
  auto opset = context.opsets.find(domain);
  OC_ASSIGN_OR_RETURN(const onnx::FunctionProto* body,
                      SpecInstance(node, schema, inputs, opset->second));
  if (body != nullptr) return CallFunction(*body, inputs, context, depth);
  return absl::UnimplementedError("the evaluator has no kernel for this op version");
}

// ---------------------------------------------------------------------------
// Entry points.

absl::StatusOr<EvalResult> EvaluateGraph(
    const onnx::GraphProto& graph,
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& opset_imports,
    const google::protobuf::RepeatedPtrField<onnx::FunctionProto>& functions,
    std::vector<NamedValue> inputs, const EvalOptions& options) {
  std::optional<MemoryBudget> budget;
  if (options.memory_budget_bytes > 0) budget.emplace(options.memory_budget_bytes);
  try {
    Runner runner(options, functions);
    Context context{OpsetMap(opset_imports), &runner.functions()};
    OC_ASSIGN_OR_RETURN(std::vector<Value> values,
                        runner.RunMain(graph, std::move(inputs), context));
    EvalResult result;
    for (int i = 0; i < graph.output_size(); ++i) {
      result.outputs.push_back({graph.output(i).name(), std::move(values[i])});
    }
    result.deterministic = runner.deterministic();
    result.node_runs = runner.node_runs();
    result.peak_live_bytes = runner.peak_live_bytes();
    return result;
  } catch (const MemoryBudgetExceeded& e) {
    return BudgetError("the run", e.limit());
  } catch (const std::bad_alloc&) {
    return ResourceError("the run ran out of memory");
  }
}

absl::StatusOr<EvalResult> EvaluateModel(const onnx::ModelProto& model,
                                         std::vector<NamedValue> inputs,
                                         const EvalOptions& options) {
  return EvaluateGraph(model.graph(), model.opset_import(), model.functions(), std::move(inputs),
                       options);
}

}  // namespace onnxconvert::eval
