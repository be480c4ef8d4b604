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
#include "base/status_macros.h"
#include "eval/evaluator.h"
#include "eval/kernel.h"
#include "eval/runner.h"
#include "ir/memory_budget.h"
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
  for (absl::Span<const GraphOpRow> table : {ValueOps(), ControlFlowOps()}) {
    for (const GraphOpRow& row : table) {
      if (row.domain == domain && row.op == op && row.first <= since_version &&
          since_version <= row.last) {
        return row.fn;
      }
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
    opsets[std::string(CanonicalDomain(opset.domain()))] = opset.version();
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
  return absl::StrCat(CanonicalDomain(domain), "\n", name, "\n", overload);
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
  Body body{absl::StrCat("function '", name, "'"), {}, {}, &function.node(), nullptr};
  for (const std::string& input : function.input()) body.inputs.push_back(input);
  for (const std::string& output : function.output()) body.outputs.push_back(output);
  return body;
}

// ---------------------------------------------------------------------------
// Scope.

Scope::Scope(Runner& runner, Scope* parent, const Plan& plan)
    : runner_(runner), parent_(parent), plan_(plan), slots_(plan.names.size()) {}

Scope::~Scope() {
  for (const Slot& slot : slots_) {
    if (slot.state == Slot::kOwned) runner_.Refund(slot.value.ByteSize());
    if (slot.state == Slot::kShared) runner_.Refund(slot.borrowed->ByteSize());
  }
}

absl::StatusOr<const Value*> Scope::Read(int index, bool& found) {
  Slot& slot = slots_[index];
  found = true;
  switch (slot.state) {
    case Slot::kOwned: return &slot.value;
    case Slot::kBorrowed:
    case Slot::kShared: return slot.borrowed;
    case Slot::kAbsent: return nullptr;
    case Slot::kDeferred: {
      const onnx::TensorProto* dense = slot.dense;
      const onnx::SparseTensorProto* sparse = slot.sparse;
      slot.state = Slot::kEmpty;
      const void* key = dense != nullptr ? static_cast<const void*>(dense) : sparse;
      auto& cached = runner_.cache().initializers[key];
      if (cached == nullptr) {
        int64_t limit = runner_.options().max_tensor_elements;
        absl::StatusOr<Tensor> tensor =
            dense != nullptr ? FromProto(*dense, limit) : FromSparseProto(*sparse, limit);
        if (!tensor.ok()) {
          runner_.cache().initializers.erase(key);
          return tensor.status();
        }
        cached = std::make_unique<const Value>(*std::move(tensor));
      }
      OC_RETURN_IF_ERROR(Share(index, cached.get()));
      return slot.borrowed;
    }
    case Slot::kEmpty: break;
  }
  found = false;
  return nullptr;
}

absl::StatusOr<const Value*> Scope::Lookup(const std::string& name) {
  if (name.empty()) return nullptr;
  for (Scope* scope = this; scope != nullptr; scope = scope->parent_) {
    auto it = scope->plan_.slots.find(name);
    if (it == scope->plan_.slots.end()) continue;
    bool found = false;
    absl::StatusOr<const Value*> value = scope->Read(it->second, found);
    if (found) return value;
  }
  return absl::NotFoundError(absl::StrCat("value '", name, "' is not defined"));
}

absl::StatusOr<const Value*> Scope::LookupSlot(int slot, const std::string& name) {
  if (slot >= 0) {
    bool found = false;
    absl::StatusOr<const Value*> value = Read(slot, found);
    if (found) return value;
  }
  if (name.empty()) return nullptr;
  if (parent_ != nullptr) return parent_->Lookup(name);
  return absl::NotFoundError(absl::StrCat("value '", name, "' is not defined"));
}

absl::Status Scope::Set(int index, Value value) {
  Erase(index);
  int64_t bytes = value.ByteSize();
  OC_RETURN_IF_ERROR(runner_.Charge(bytes));
  Slot& slot = slots_[index];
  slot.state = Slot::kOwned;
  slot.value = std::move(value);
  return absl::OkStatus();
}

absl::Status Scope::Share(int index, const Value* value) {
  Erase(index);
  OC_RETURN_IF_ERROR(runner_.Charge(value->ByteSize()));
  Slot& slot = slots_[index];
  slot.state = Slot::kShared;
  slot.borrowed = value;
  return absl::OkStatus();
}

void Scope::Borrow(int index, const Value* value) {
  Slot& slot = slots_[index];
  Erase(index);
  if (value == nullptr) {
    slot.state = Slot::kAbsent;
  } else {
    slot.state = Slot::kBorrowed;
    slot.borrowed = value;
  }
}

void Scope::Defer(int index, const onnx::TensorProto* dense,
                  const onnx::SparseTensorProto* sparse) {
  Erase(index);
  Slot& slot = slots_[index];
  slot.state = Slot::kDeferred;
  slot.dense = dense;
  slot.sparse = sparse;
}

void Scope::Erase(int index) {
  Slot& slot = slots_[index];
  if (slot.state == Slot::kOwned) {
    runner_.Refund(slot.value.ByteSize());
    slot.value = Value();
  }
  if (slot.state == Slot::kShared) runner_.Refund(slot.borrowed->ByteSize());
  slot.state = Slot::kEmpty;
}

absl::StatusOr<Value> Scope::Take(int slot, const std::string& name) {
  if (slot >= 0 && slots_[slot].state == Slot::kOwned) {
    Value value = std::move(slots_[slot].value);
    slots_[slot].value = Value();
    slots_[slot].state = Slot::kEmpty;
    runner_.Refund(value.ByteSize());
    return value;
  }
  OC_ASSIGN_OR_RETURN(const Value* value, LookupSlot(slot, name));
  if (value == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("value '", name, "' is absent"));
  }
  Value copy = *value;
  if (slot >= 0) Erase(slot);
  return copy;
}

std::optional<Value> Scope::TakeOwned(int index) {
  Slot& slot = slots_[index];
  if (slot.state != Slot::kOwned) return std::nullopt;
  std::optional<Value> value(std::move(slot.value));
  slot.value = Value();
  slot.state = Slot::kEmpty;
  runner_.Refund(value->ByteSize());
  return value;
}

// ---------------------------------------------------------------------------
// OpCall.

const onnx::AttributeProto* OpCall::attribute(absl::string_view name) const {
  return NodeAttribute(node, name);
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

RunnerCache::RunnerCache(
    const google::protobuf::RepeatedPtrField<onnx::FunctionProto>& model_functions) {
  for (const onnx::FunctionProto& function : model_functions) {
    functions[FunctionKey(function.domain(), function.name(), function.overload())] = &function;
  }
}

Runner::Runner(const EvalOptions& options, RunnerCache& cache)
    : options_(options), cache_(cache) {}

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
  if (auto it = cache_.plans.find(&graph.node()); it != cache_.plans.end()) {
    return it->second.get();
  }
  return PlanFor(BodyOfGraph(graph), depth);
}

absl::StatusOr<const Plan*> Runner::PlanForFunction(const onnx::FunctionProto& function,
                                                    int depth) {
  if (auto it = cache_.plans.find(&function.node()); it != cache_.plans.end()) {
    return it->second.get();
  }
  return PlanFor(BodyOfFunction(function), depth);
}

absl::StatusOr<std::vector<std::string>> Runner::FreeValues(const onnx::GraphProto& graph,
                                                            int depth) {
  OC_ASSIGN_OR_RETURN(const Plan* plan, PlanForGraph(graph, depth));
  return plan->free_values;
}

absl::StatusOr<const Plan*> Runner::PlanFor(const Body& body, int depth) {
  if (auto it = cache_.plans.find(body.nodes); it != cache_.plans.end()) {
    return it->second.get();
  }
  if (depth > options_.max_depth) {
    return ResourceError(absl::StrCat("subgraphs and functions nest deeper than ",
                                      options_.max_depth));
  }
  auto plan = std::make_unique<Plan>();
  plan->what = body.what;
  plan->graph = body.graph;
  const auto& nodes = *body.nodes;
  plan->nodes.resize(nodes.size());
  // Each local value: its slot, where it is defined (-1: input or
  // initializer) and where it is last used (-2: nowhere). Keys view the
  // body's names, which outlive the plan.
  struct Local {
    int slot;
    int defined;
    int last_use;
  };
  size_t expected = body.inputs.size();
  if (body.graph != nullptr) expected += body.graph->initializer_size();
  for (const onnx::NodeProto& node : nodes) expected += node.output_size();
  absl::flat_hash_map<absl::string_view, Local> locals_at;
  locals_at.reserve(expected);
  std::vector<absl::string_view>& locals = plan->names;
  locals.reserve(expected);
  // `by` names the definer for the error (a node's label is built only
  // then: `at` >= 0). The slot defined, or kNoValue for "".
  auto define = [&](absl::string_view name, int at, absl::string_view by) -> absl::StatusOr<int> {
    if (name.empty()) return kNoValue;
    int slot = static_cast<int>(locals.size());
    if (!locals_at.emplace(name, Local{slot, at, -2}).second) {
      std::string label = at >= 0 ? PlanLabel(nodes[at]) : std::string(by);
      return absl::InvalidArgumentError(absl::StrCat(
          body.what, ": value '", name, "' is defined twice (again by ", label, ")"));
    }
    locals.push_back(name);
    return slot;
  };
  for (absl::string_view input : body.inputs) {
    OC_ASSIGN_OR_RETURN(int slot, define(input, -1, "an input"));
    plan->inputs.push_back(slot);
  }
  auto slot_of = [&](absl::string_view name) -> absl::StatusOr<int> {
    if (auto it = locals_at.find(name); it != locals_at.end()) return it->second.slot;
    return define(name, -1, "");
  };
  if (body.graph != nullptr) {
    for (const auto& t : body.graph->initializer()) {
      OC_ASSIGN_OR_RETURN(int slot, slot_of(t.name()));
      if (slot >= 0) plan->initializers.push_back({slot, &t, nullptr});
    }
    for (const auto& t : body.graph->sparse_initializer()) {
      OC_ASSIGN_OR_RETURN(int slot, slot_of(t.values().name()));
      if (slot >= 0) plan->initializers.push_back({slot, nullptr, &t});
    }
  }
  absl::flat_hash_set<absl::string_view> free_seen;
  std::optional<absl::flat_hash_map<absl::string_view, int>> produced_by;
  // The slot `name` reads (kFree for a value of the scopes around).
  auto use = [&](absl::string_view name, int i) -> absl::StatusOr<int> {
    if (name.empty()) return kNoValue;
    if (auto it = locals_at.find(name); it != locals_at.end()) {
      it->second.last_use = i;
      return it->second.slot;
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
    if (free_seen.insert(name).second) plan->free_values.emplace_back(name);
    return kFree;
  };
  for (int i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& node = nodes[i];
    PlannedNode& planned = plan->nodes[i];
    planned.node = &node;
    planned.domain = CanonicalDomain(node.domain());
    planned.inputs.reserve(node.input_size());
    for (const std::string& input : node.input()) {
      OC_ASSIGN_OR_RETURN(int slot, use(input, i));
      planned.inputs.push_back(slot);
    }
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (!attribute.has_g() && attribute.graphs_size() == 0) continue;
      for (const onnx::GraphProto* graph : Subgraphs(node)) {
        absl::StatusOr<const Plan*> inner = PlanForGraph(*graph, depth + 1);
        if (!inner.ok()) {
          return Prefixed(inner.status(), absl::StrCat(body.what, ", ", PlanLabel(node)));
        }
        for (const std::string& name : (*inner)->free_values) {
          OC_RETURN_IF_ERROR(use(name, i).status());
        }
      }
      break;
    }
    planned.outputs.reserve(node.output_size());
    for (const std::string& output : node.output()) {
      OC_ASSIGN_OR_RETURN(int slot, define(output, i, ""));
      planned.outputs.push_back(slot);
    }
    if (!cache_.functions.empty()) {
      auto found = cache_.functions.find(FunctionKey(planned.domain, node.op_type(),
                                                     node.overload()));
      if (found != cache_.functions.end()) planned.local = found->second;
    }
  }
  absl::flat_hash_set<absl::string_view> kept;
  for (size_t k = 0; k < body.outputs.size(); ++k) {
    absl::string_view output = body.outputs[k];
    plan->output_names.emplace_back(output);
    plan->output_again.push_back(std::find(body.outputs.begin() + k + 1, body.outputs.end(),
                                           output) != body.outputs.end());
    if (output.empty()) {
      plan->outputs.push_back(kNoValue);
    } else if (auto it = locals_at.find(output); it != locals_at.end()) {
      kept.insert(output);
      plan->outputs.push_back(it->second.slot);
    } else {
      if (free_seen.insert(output).second) plan->free_values.emplace_back(output);
      plan->outputs.push_back(kFree);
    }
  }
  for (absl::string_view name : locals) {
    if (kept.contains(name)) continue;
    const Local& local = locals_at.at(name);
    int last = local.last_use != -2 ? local.last_use : local.defined;
    if (last < 0) {
      plan->free_at_start.push_back(local.slot);
    } else {
      plan->nodes[last].free_after.push_back(local.slot);
    }
  }
  // Ops that pass input 0's elements on unchanged (under other dims) take
  // them over when the node is its last use and the scope owns it.
  for (PlannedNode& planned : plan->nodes) {
    const onnx::NodeProto& node = *planned.node;
    planned.identity = node.op_type() == "Identity";
    if (planned.local != nullptr || !planned.domain.empty() || planned.inputs.empty() ||
        planned.inputs[0] < 0 || !PassesInput0On(node.op_type())) {
      continue;
    }
    int slot = planned.inputs[0];
    bool dies = std::find(planned.free_after.begin(), planned.free_after.end(), slot) !=
                planned.free_after.end();
    bool once = std::count(planned.inputs.begin(), planned.inputs.end(), slot) == 1;
    planned.donates_input0 = dies && once;
  }
  plan->slots.reserve(locals.size());
  for (const auto& [name, local] : locals_at) plan->slots.emplace(name, local.slot);
  const Plan* result = plan.get();
  cache_.plans[body.nodes] = std::move(plan);
  return result;
}

absl::StatusOr<std::vector<Value>> Runner::RunBody(const Plan& plan, Scope& scope,
                                                   const Context& context, int depth) {
  for (int slot : plan.free_at_start) scope.Erase(slot);
  for (const PlannedNode& planned : plan.nodes) {
    OC_RETURN_IF_ERROR(RunNode(planned, scope, context, depth));
    for (int slot : planned.free_after) scope.Erase(slot);
  }
  std::vector<Value> outputs;
  outputs.reserve(plan.outputs.size());
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const std::string& name = plan.output_names[k];
    int slot = plan.outputs[k];
    absl::StatusOr<Value> value = [&]() -> absl::StatusOr<Value> {
      if (!plan.output_again[k]) return scope.Take(slot, name);
      OC_ASSIGN_OR_RETURN(const Value* found, scope.LookupSlot(slot, name));
      if (found == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("value '", name, "' is absent"));
      }
      return *found;
    }();
    if (!value.ok()) {
      // An output nothing computed: a function's optional output the call
      // does not use. The caller refuses it if it does.
      if (plan.graph == nullptr) {
        outputs.emplace_back();
        continue;
      }
      return Prefixed(value.status(), absl::StrCat(plan.what, ", output '", name, "'"));
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
  OC_ASSIGN_OR_RETURN(const Plan* plan, PlanForGraph(graph, depth));
  Scope scope(*this, parent, *plan);
  for (size_t i = 0; i < inputs.size(); ++i) {
    int slot = plan->inputs[i];
    if (slot >= 0) OC_RETURN_IF_ERROR(scope.Set(slot, std::move(inputs[i])));
  }
  for (const Plan::Initializer& init : plan->initializers) {
    if (!scope.Defines(init.slot)) scope.Defer(init.slot, init.dense, init.sparse);
  }
  for (int i = 0; i < graph.input_size(); ++i) {
    int slot = plan->inputs[i];
    if (slot >= 0 && !scope.Defines(slot)) {
      return absl::InvalidArgumentError(absl::StrCat("graph '", graph.name(), "': input '",
                                                     graph.input(i).name(), "' is not given"));
    }
  }
  return RunBody(*plan, scope, context, depth);
}

absl::StatusOr<std::vector<Value>> Runner::RunMain(const onnx::GraphProto& graph,
                                                   std::vector<NamedValue> inputs,
                                                   const Context& context) {
  OC_ASSIGN_OR_RETURN(const Plan* plan, PlanForGraph(graph, 0));
  if (!plan->free_values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph '", graph.name(), "' reads values nothing defines: '",
        absl::StrJoin(plan->free_values, "', '"), "'"));
  }
  Scope scope(*this, nullptr, *plan);
  for (NamedValue& input : inputs) {
    int index = -1;
    for (int i = 0; i < graph.input_size(); ++i) {
      if (graph.input(i).name() == input.name) {
        index = i;
        break;
      }
    }
    if (index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("the graph has no input '", input.name, "'"));
    }
    int slot = plan->inputs[index];
    if (slot < 0) continue;
    if (scope.Defines(slot)) {
      return absl::InvalidArgumentError(absl::StrCat("input '", input.name, "' is given twice"));
    }
    if (std::optional<std::string> mismatch =
            TypeMismatch(input.value, graph.input(index).type())) {
      return absl::InvalidArgumentError(absl::StrCat("input '", input.name, "': ", *mismatch));
    }
    OC_RETURN_IF_ERROR(scope.Set(slot, std::move(input.value)));
  }
  for (const Plan::Initializer& init : plan->initializers) {
    if (!scope.Defines(init.slot)) scope.Defer(init.slot, init.dense, init.sparse);
  }
  for (int i = 0; i < graph.input_size(); ++i) {
    int slot = plan->inputs[i];
    if (slot >= 0 && !scope.Defines(slot)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", graph.input(i).name(), "' is not given"));
    }
  }
  return RunBody(*plan, scope, context, 0);
}

absl::Status Runner::RunNode(const PlannedNode& planned, Scope& scope, const Context& context,
                             int depth) {
  const onnx::NodeProto& node = *planned.node;
  if (++node_runs_ > options_.max_node_runs) {
    return ResourceError(absl::StrCat(PlanLabel(node), ": the run would take more than ",
                                      options_.max_node_runs, " node runs"));
  }
  absl::string_view domain = planned.domain;
  const schema::OpSchema* op = nullptr;
  int since_version = 0;
  const onnx::FunctionProto* local = planned.local;
  if (local == nullptr) {
    auto opset = context.opsets.find(domain);
    if (opset == context.opsets.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(node, 0), ": nothing imports an opset of domain '", domain, "'"));
    }
    if (planned.bound_opset != opset->second) {
      op = schema::Registry::Get().Lookup(domain, node.op_type(), opset->second);
      if (op == nullptr) {
        bool known = schema::Registry::Get().KnowsDomain(domain);
        std::string why = absl::StrCat(NodeLabel(node, 0), ": no operator ", node.op_type(),
                                       " in domain '", domain, "' at opset ", opset->second,
                                       known ? "" : ", and no model-local function of that name");
        return known ? absl::InvalidArgumentError(why) : absl::UnimplementedError(why);
      }
      planned.op = op;
      planned.deterministic = IsDeterministic(domain, node.op_type());
      planned.graph_op = FindGraphOp(domain, node.op_type(), op->since_version);
      planned.kernel = planned.graph_op != nullptr
                           ? nullptr
                           : FindKernel(domain, node.op_type(), op->since_version);
      planned.bound_opset = opset->second;
    }
    op = planned.op;
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
  // A Constant's value is converted on its first run and kept in the
  // cache; later runs read it in place.
  const bool constant = local == nullptr && planned.graph_op != nullptr && domain.empty() &&
                        node.output_size() == 1 && planned.outputs[0] != kNoValue &&
                        node.op_type() == "Constant";
  if (constant) {
    if (auto it = cache_.constants.find(&node); it != cache_.constants.end()) {
      absl::Status shared = scope.Share(planned.outputs[0], it->second.get());
      if (!shared.ok()) return fail(shared);
      return absl::OkStatus();
    }
  }
  std::vector<const Value*> inputs;
  inputs.reserve(planned.inputs.size());
  for (int i = 0; i < static_cast<int>(planned.inputs.size()); ++i) {
    int slot = planned.inputs[i];
    if (slot == kNoValue) {
      inputs.push_back(nullptr);
      continue;
    }
    const std::string& name = node.input(i);
    absl::StatusOr<const Value*> value = scope.LookupSlot(slot, name);
    if (!value.ok()) return fail(Prefixed(value.status(), absl::StrCat("input '", name, "'")));
    inputs.push_back(*value);
  }
  // Ops that pass input 0's elements on unchanged (under other dims) take
  // them over when this node is its last use and the scope owns it: moved,
  // not copied.
  std::optional<Value> donor;
  if (planned.donates_input0 && op != nullptr && inputs[0] != nullptr && inputs[0]->is_tensor()) {
    donor = scope.TakeOwned(planned.inputs[0]);
    if (donor) inputs[0] = &*donor;
  }
  absl::StatusOr<std::vector<Value>> outputs;
  try {
    if (local != nullptr) {
      if (planned.instance == nullptr) planned.instance = &LocalInstance(*local, node);
      outputs = CallFunction(*planned.instance, inputs, context, depth);
    } else if (donor && planned.identity) {
      std::vector<Value> moved;
      moved.push_back(*std::move(donor));
      outputs = std::move(moved);
    } else {
      outputs = Dispatch(planned, std::move(inputs), scope, context, depth,
                         donor ? &*donor : nullptr);
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
    int slot = planned.outputs[i];
    if (slot == kNoValue) continue;
    const std::string& name = node.output(i);
    Value& value = (*outputs)[i];
    if (value.MaxTensorSize() > options_.max_tensor_elements) {
      return fail(ResourceError(absl::StrCat("output '", name, "' holds more than ",
                                             options_.max_tensor_elements, " elements")));
    }
    if (value.is_tensor() && value.tensor().elem_type() == onnx::TensorProto::UNDEFINED) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("output '", name, "' is not computed (the body defines no value)")));
    }
    if (constant) {
      auto& cached = cache_.constants[&node];
      cached = std::make_unique<Value>(std::move(value));
      absl::Status shared = scope.Share(slot, cached.get());
      if (!shared.ok()) return fail(shared);
      continue;
    }
    absl::Status set = scope.Set(slot, std::move(value));
    if (!set.ok()) return fail(set);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Value>> Runner::Dispatch(const PlannedNode& planned,
                                                    std::vector<const Value*> inputs,
                                                    Scope& scope, const Context& context,
                                                    int depth, Value* donor) {
  const onnx::NodeProto& node = *planned.node;
  const schema::OpSchema& schema = *planned.op;
  if (!planned.deterministic) deterministic_ = false;
  if (GraphOpFn fn = planned.graph_op) {
    OpCall call{*this, node, schema, std::move(inputs), scope, context, depth};
    absl::StatusOr<std::vector<Value>> outputs = fn(call);
    planned.read_version |= call.version_read;
    planned.ran |= outputs.ok();
    return outputs;
  }
  if (KernelFn kernel = planned.kernel) {
    std::vector<const Tensor*> tensors;
    tensors.reserve(inputs.size());
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
    absl::StatusOr<std::vector<Tensor>> kernel_outputs = kernel(call);
    planned.read_version |= call.version_read();
    OC_ASSIGN_OR_RETURN(std::vector<Tensor> computed, std::move(kernel_outputs));
    planned.ran = true;
    std::vector<Value> outputs;
    outputs.reserve(computed.size());
    for (Tensor& tensor : computed) outputs.emplace_back(std::move(tensor));
    return outputs;
  }
  auto opset = context.opsets.find(planned.domain);
  OC_ASSIGN_OR_RETURN(const onnx::FunctionProto* body,
                      SpecInstance(node, schema, inputs, opset->second));
  if (body != nullptr) return CallFunction(*body, inputs, context, depth);
  return absl::UnimplementedError("the evaluator has no kernel for this op version");
}

// ---------------------------------------------------------------------------
// Entry points.

namespace {

// Runs `graph` with the plans of `cache`.
absl::StatusOr<EvalResult> Evaluate(
    const onnx::GraphProto& graph,
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& opset_imports,
    RunnerCache& cache, std::vector<NamedValue> inputs, const EvalOptions& options) {
  std::optional<MemoryBudget> budget;
  if (options.memory_budget_bytes > 0) budget.emplace(options.memory_budget_bytes);
  try {
    Runner runner(options, cache);
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

}  // namespace

absl::StatusOr<EvalResult> EvaluateGraph(
    const onnx::GraphProto& graph,
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& opset_imports,
    const google::protobuf::RepeatedPtrField<onnx::FunctionProto>& functions,
    std::vector<NamedValue> inputs, const EvalOptions& options) {
  std::unique_ptr<RunnerCache> cache;
  try {
    cache = std::make_unique<RunnerCache>(functions);
  } catch (const std::bad_alloc&) {
    return ResourceError("the run ran out of memory");
  }
  return Evaluate(graph, opset_imports, *cache, std::move(inputs), options);
}

absl::StatusOr<EvalResult> EvaluateModel(const onnx::ModelProto& model,
                                         std::vector<NamedValue> inputs,
                                         const EvalOptions& options) {
  return EvaluateGraph(model.graph(), model.opset_import(), model.functions(), std::move(inputs),
                       options);
}

PreparedModel::PreparedModel(const onnx::ModelProto& model, const EvalOptions& options)
    : model_(model), options_(options), cache_(std::make_unique<RunnerCache>(model.functions())) {}

PreparedModel::~PreparedModel() = default;

bool PreparedModel::RanVersionBlind(int index) const {
  auto plan = cache_->plans.find(&model_.graph().node());
  if (plan == cache_->plans.end() || index < 0 ||
      index >= static_cast<int>(plan->second->nodes.size())) {
    return false;
  }
  const PlannedNode& node = plan->second->nodes[index];
  return node.ran && !node.read_version && node.local == nullptr &&
         (node.graph_op != nullptr || node.kernel != nullptr);
}

std::vector<NamedValue> PreparedModel::TakeConstants() {
  std::vector<NamedValue> taken;
  for (const onnx::NodeProto& node : model_.graph().node()) {
    auto cached = cache_->constants.find(&node);
    if (cached == cache_->constants.end() || node.output_size() != 1) continue;
    taken.push_back({node.output(0), std::move(*cached->second)});
    cache_->constants.erase(cached);
  }
  return taken;
}

bool SameOpAtVersions(absl::string_view domain, absl::string_view op, int a, int b) {
  if (GraphOpFn fn = FindGraphOp(domain, op, a)) return fn == FindGraphOp(domain, op, b);
  if (FindGraphOp(domain, op, b) != nullptr) return false;
  KernelFn kernel = FindKernel(domain, op, a);
  return kernel != nullptr && kernel == FindKernel(domain, op, b);
}

absl::StatusOr<EvalResult> PreparedModel::Evaluate(std::vector<NamedValue> inputs) {
  return eval::Evaluate(model_.graph(), model_.opset_import(), *cache_, std::move(inputs),
                        options_);
}

}  // namespace onnxconvert::eval
