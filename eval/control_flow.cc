// Control flow: If, Loop (every version: trip count and condition, loop-
// carried values of any kind, scan outputs), Scan (8, with its batch axis
// and sequence lengths; 9 and later, with axes and directions) and
// SequenceMap; and FlexAttention (ai.onnx.preview), whose score_mod and
// prob_mod subgraphs map its scores and probabilities. Their bodies run in
// a scope below the node's, so they read the values around them.

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/axis_ops.h"
#include "eval/runner.h"
#include "schema/inference.h"

namespace onnxconvert::eval {
namespace {

using Outputs = absl::StatusOr<std::vector<Value>>;

// Bytes of gathered scan outputs, charged to the live bytes while gathered.
class Gathered {
 public:
  explicit Gathered(const OpCall& call) : call_(call) {}
  ~Gathered() { call_.runner.Refund(bytes_); }
  Gathered(const Gathered&) = delete;
  Gathered& operator=(const Gathered&) = delete;

  // Charges `tensor`'s bytes, or fails past the limit.
  absl::Status Add(const Tensor& tensor) {
    OC_RETURN_IF_ERROR(call_.Charge(tensor.ByteSize()));
    bytes_ += tensor.ByteSize();
    return absl::OkStatus();
  }

 private:
  const OpCall& call_;
  int64_t bytes_ = 0;
};

// The truth of a one-element tensor value (a condition).
absl::StatusOr<bool> Truth(const OpCall& call, const Value& value, absl::string_view what) {
  if (!value.is_tensor() || value.tensor().size() != 1) {
    return call.Error(absl::StrCat(what, " is not a tensor of one element"));
  }
  bool truth = false;
  if (!VisitElementType(value.tensor().elem_type(),
                        [&](auto v) { truth = ToDouble(value.tensor().data<decltype(v)>()[0]) != 0; })) {
    return call.Error(absl::StrCat(what, " is not a number or bool"));
  }
  return truth;
}

Tensor BoolScalar(bool value) {
  Tensor t(onnx::TensorProto::BOOL, {});
  t.data<bool>()[0] = value;
  return t;
}

// The type of `tensor` without its axes `drop` (ascending).
onnx::TypeProto TypeWithout(const Tensor& tensor, std::initializer_list<int64_t> drop) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < tensor.rank(); ++d) {
    if (std::find(drop.begin(), drop.end(), d) == drop.end()) dims.push_back(tensor.dims()[d]);
  }
  return TensorType(tensor.elem_type(), dims);
}

// The types of a body's outputs for a run of no iterations, which shows
// none: as the body declares them where that gives an element type, else
// as inference gives them (once) from the types the body's inputs would
// have had and those of the values it reads around it.
class NoIterationTypes {
 public:
  NoIterationTypes(const OpCall& call, const onnx::GraphProto& body,
                   std::vector<onnx::TypeProto> inputs)
      : call_(call), body_(body), inputs_(std::move(inputs)) {}

  // The type of body output `k`, a tensor type with an element type; an
  // error naming the node when neither the body nor inference gives one.
  absl::StatusOr<onnx::TypeProto> Output(int k) {
    const onnx::TypeProto& declared = body_.output(k).type();
    if (declared.has_tensor_type() && declared.tensor_type().elem_type() != 0) return declared;
    if (!inferred_) {
      OC_ASSIGN_OR_RETURN(inferred_, Infer());
    }
    const onnx::TypeProto& inferred = (*inferred_)[k];
    if (inferred.has_tensor_type() && inferred.tensor_type().elem_type() != 0) return inferred;
    return call_.Error(absl::StrCat(
        "no iteration runs, and the element type of scan output '", body_.output(k).name(),
        "' is neither declared by the body nor inferred from its inputs"));
  }
  // The name of body output `k`.
  const std::string& Name(int k) const { return body_.output(k).name(); }

 private:
  // The inferred types of the body's outputs (unset where unknown).
  absl::StatusOr<std::vector<onnx::TypeProto>> Infer() const {
    onnx::ModelProto model;
    for (const auto& [domain, version] : call_.context.opsets) {
      onnx::OperatorSetIdProto* opset = model.add_opset_import();
      opset->set_domain(domain);
      opset->set_version(version);
    }
    onnx::GraphProto& graph = *model.mutable_graph();
    graph = body_;
    for (int i = 0; i < graph.input_size() && i < static_cast<int>(inputs_.size()); ++i) {
      *graph.mutable_input(i)->mutable_type() = inputs_[i];
    }
    // The values around the body become inputs of the model's graph.
    absl::StatusOr<std::vector<std::string>> outer =
        call_.runner.FreeValues(body_, call_.depth + 1);
    if (!outer.ok()) return Prefixed(outer.status(), call_.Label());
    for (const std::string& name : *outer) {
      absl::StatusOr<const Value*> value = call_.scope.Lookup(name);
      if (!value.ok() || *value == nullptr) continue;
      onnx::ValueInfoProto* input = graph.add_input();
      input->set_name(name);
      *input->mutable_type() = (*value)->Type();
    }
    absl::StatusOr<schema::InferenceResult> result = schema::InferModel(model);
    if (!result.ok()) {
      return call_.Error(absl::StrCat("inferring the types of the body's outputs: ",
                                      result.status().message()));
    }
    std::vector<onnx::TypeProto> types(body_.output_size());
    auto it = result->graphs.find(&model.graph());
    if (it == result->graphs.end()) return types;
    for (int k = 0; k < body_.output_size(); ++k) {
      auto found = it->second.types.find(body_.output(k).name());
      if (found != it->second.types.end() && found->second != nullptr) types[k] = *found->second;
    }
    return types;
  }

  const OpCall& call_;
  const onnx::GraphProto& body_;
  std::vector<onnx::TypeProto> inputs_;
  std::optional<std::vector<onnx::TypeProto>> inferred_;
};

// The scan output of no iterations: no elements, of the element type and
// (where all of its dims are known) the shape `type` gives one iteration's
// value, with an axis of 0 inserted at `axis`.
Tensor EmptyScanOutput(const onnx::TypeProto& type, int64_t axis) {
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  std::vector<int64_t> dims;
  bool known = tensor.has_shape();
  for (const auto& dim : tensor.shape().dim()) {
    known = known && dim.has_dim_value() && dim.dim_value() >= 0;
    dims.push_back(dim.dim_value());
  }
  if (!known) dims.clear();
  axis = std::clamp<int64_t>(axis < 0 ? axis + static_cast<int64_t>(dims.size()) + 1 : axis, 0,
                             static_cast<int64_t>(dims.size()));
  dims.insert(dims.begin() + axis, 0);
  return Tensor(tensor.elem_type(), std::move(dims));
}

// `parts` (one per iteration) stacked along `axis` into scan output `k`;
// without parts, its empty scan output of the type `types` gives it.
absl::StatusOr<Tensor> StackScan(const OpCall& call, const std::vector<Tensor>& parts,
                                 int64_t axis, NoIterationTypes& types, int k) {
  if (parts.empty()) {
    OC_ASSIGN_OR_RETURN(onnx::TypeProto type, types.Output(k));
    return EmptyScanOutput(type, axis);
  }
  absl::StatusOr<int64_t> at = NormalizeAxis(axis, parts.front().rank() + 1);
  if (!at.ok()) return call.Error(absl::StrCat("scan output axis: ", at.status().message()));
  std::vector<const Tensor*> pointers;
  for (const Tensor& part : parts) pointers.push_back(&part);
  absl::StatusOr<Tensor> stacked = StackAxis(pointers, *at);
  if (!stacked.ok()) {
    return call.Error(absl::StrCat("scan output '", types.Name(k), "': ",
                                   stacked.status().message()));
  }
  return stacked;
}

// The body output `k` as a tensor, for a scan output.
absl::StatusOr<Tensor> ScanPart(const OpCall& call, std::vector<Value>& outputs, size_t k) {
  if (!outputs[k].is_tensor()) {
    return call.Error(absl::StrCat("body output ", k, " is a ", KindName(outputs[k].kind()),
                                   ", and scan outputs are tensors"));
  }
  return std::move(outputs[k].tensor());
}

Outputs IfOp(const OpCall& call) {
  if (call.input(0) == nullptr) return call.Error("the condition is absent");
  OC_ASSIGN_OR_RETURN(bool truth, Truth(call, *call.input(0), "the condition"));
  absl::string_view branch = truth ? "then_branch" : "else_branch";
  OC_ASSIGN_OR_RETURN(const onnx::GraphProto* graph, call.Graph(branch));
  OC_ASSIGN_OR_RETURN(std::vector<Value> outputs, call.RunGraph(*graph, {}, branch));
  if (static_cast<int>(outputs.size()) < call.node.output_size()) {
    return call.Error(absl::StrCat(branch, " computes ", outputs.size(), " outputs, the node has ",
                                   call.node.output_size()));
  }
  return outputs;
}

Outputs LoopOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(const onnx::GraphProto* body, call.Graph("body"));
  int carried_count = std::max(0, static_cast<int>(call.inputs.size()) - 2);
  int scan_count = body->output_size() - 1 - carried_count;
  if (body->input_size() != 2 + carried_count || scan_count < 0) {
    return call.Error(absl::StrCat("the body takes ", body->input_size(), " inputs and gives ",
                                   body->output_size(), " outputs for ", carried_count,
                                   " loop-carried values"));
  }
  std::optional<int64_t> trip_count;
  if (const Value* m = call.input(0)) {
    if (!m->is_tensor() || m->tensor().size() != 1) {
      return call.Error("the trip count is not one integer");
    }
    absl::StatusOr<std::vector<int64_t>> values = ToInt64s(m->tensor());
    if (!values.ok()) return call.Error("the trip count is not an integer");
    trip_count = values->front();
  }
  bool condition = true;
  if (const Value* c = call.input(1)) {
    OC_ASSIGN_OR_RETURN(condition, Truth(call, *c, "the condition"));
  }
  std::vector<Value> carried;
  for (int i = 2; i < static_cast<int>(call.inputs.size()); ++i) {
    if (call.input(i) == nullptr) return call.Error(absl::StrCat("input ", i, " is absent"));
    carried.push_back(*call.input(i));
  }
  // The types of the first iteration's inputs, for scan outputs of none.
  std::vector<onnx::TypeProto> first_inputs;
  if ((trip_count && *trip_count <= 0) || !condition) {
    first_inputs.push_back(TensorType(onnx::TensorProto::INT64, {}));
    first_inputs.push_back(TensorType(onnx::TensorProto::BOOL, {}));
    for (const Value& value : carried) first_inputs.push_back(value.Type());
  }
  NoIterationTypes types(call, *body, std::move(first_inputs));
  std::vector<std::vector<Tensor>> scans(scan_count);
  Gathered gathered(call);
  for (int64_t i = 0; (!trip_count || i < *trip_count) && condition; ++i) {
    if (i >= call.runner.options().max_iterations) {
      return absl::ResourceExhaustedError(absl::StrCat(
          call.Label(), ": the loop runs more than ", call.runner.options().max_iterations,
          " iterations"));
    }
    std::vector<Value> inputs;
    inputs.emplace_back(Int64Tensor({i}, /*scalar=*/true));
    inputs.emplace_back(BoolScalar(condition));
    for (Value& value : carried) inputs.push_back(std::move(value));
    OC_ASSIGN_OR_RETURN(std::vector<Value> outputs,
                        call.RunGraph(*body, std::move(inputs), absl::StrCat("body, iteration ", i)));
    OC_ASSIGN_OR_RETURN(condition, Truth(call, outputs[0], "the body's condition output"));
    for (int k = 0; k < carried_count; ++k) carried[k] = std::move(outputs[1 + k]);
    for (int k = 0; k < scan_count; ++k) {
      OC_ASSIGN_OR_RETURN(Tensor part, ScanPart(call, outputs, 1 + carried_count + k));
      OC_RETURN_IF_ERROR(gathered.Add(part));
      scans[k].push_back(std::move(part));
    }
  }
  std::vector<Value> results = std::move(carried);
  for (int k = 0; k < scan_count; ++k) {
    OC_ASSIGN_OR_RETURN(Tensor stacked, StackScan(call, scans[k], 0, types, 1 + carried_count + k));
    scans[k].clear();
    results.emplace_back(std::move(stacked));
  }
  return results;
}

// A Scan's attributes and values: states first, then scan inputs.
struct ScanSetup {
  const onnx::GraphProto* body;
  int state_count;
  int scan_inputs;
  int scan_outputs;
  std::vector<int64_t> input_axes;
  std::vector<int64_t> input_reversed;
  std::vector<int64_t> output_axes;
  std::vector<int64_t> output_reversed;
};

// The attributes of a Scan whose values start at input `first`; per-input
// lists default to 0.
absl::StatusOr<ScanSetup> SetUpScan(const OpCall& call, int first) {
  ScanSetup setup;
  OC_ASSIGN_OR_RETURN(setup.body, call.Graph("body"));
  setup.scan_inputs = static_cast<int>(call.Int("num_scan_inputs", -1));
  int values = static_cast<int>(call.inputs.size()) - first;
  setup.state_count = values - setup.scan_inputs;
  setup.scan_outputs = setup.body->output_size() - setup.state_count;
  if (setup.scan_inputs < 0 || setup.state_count < 0 || setup.scan_outputs < 0 ||
      setup.body->input_size() != values) {
    return call.Error(absl::StrCat("num_scan_inputs ", setup.scan_inputs, " does not fit ",
                                   values, " inputs and a body of ", setup.body->input_size(),
                                   " inputs and ", setup.body->output_size(), " outputs"));
  }
  auto per = [&](absl::string_view name, int count) -> absl::StatusOr<std::vector<int64_t>> {
    std::vector<int64_t> list = call.Ints(name);
    if (list.empty()) list.assign(count, 0);
    if (static_cast<int>(list.size()) != count) {
      return call.Error(absl::StrCat("attribute '", name, "' has ", list.size(), " entries for ",
                                     count));
    }
    return list;
  };
  bool legacy = call.since_version() < 9;
  OC_ASSIGN_OR_RETURN(setup.input_reversed,
                      per(legacy ? "directions" : "scan_input_directions", setup.scan_inputs));
  OC_ASSIGN_OR_RETURN(setup.input_axes, per("scan_input_axes", setup.scan_inputs));
  OC_ASSIGN_OR_RETURN(setup.output_reversed, per("scan_output_directions", setup.scan_outputs));
  OC_ASSIGN_OR_RETURN(setup.output_axes, per("scan_output_axes", setup.scan_outputs));
  return setup;
}

// One scan over `states` and `scan_inputs` (their scan axes normalized in
// `axes`), `length` iterations: the final states, then the scan outputs.
Outputs RunScan(const OpCall& call, const ScanSetup& setup, std::vector<Value> states,
                const std::vector<const Tensor*>& scan_inputs, const std::vector<int64_t>& axes,
                int64_t length, absl::string_view where) {
  if (length > call.runner.options().max_iterations) {
    return absl::ResourceExhaustedError(absl::StrCat(call.Label(), ": the scan runs more than ",
                                                     call.runner.options().max_iterations,
                                                     " iterations"));
  }
  // The types of the first iteration's inputs, for scan outputs of none.
  std::vector<onnx::TypeProto> first_inputs;
  if (length == 0) {
    for (const Value& state : states) first_inputs.push_back(state.Type());
    for (int j = 0; j < setup.scan_inputs; ++j) {
      first_inputs.push_back(TypeWithout(*scan_inputs[j], {axes[j]}));
    }
  }
  NoIterationTypes types(call, *setup.body, std::move(first_inputs));
  std::vector<std::vector<Tensor>> scans(setup.scan_outputs);
  Gathered gathered(call);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Value> inputs = std::move(states);
    for (int j = 0; j < setup.scan_inputs; ++j) {
      int64_t at = setup.input_reversed[j] != 0 ? length - 1 - t : t;
      inputs.emplace_back(TakeAxis(*scan_inputs[j], axes[j], at));
    }
    OC_ASSIGN_OR_RETURN(std::vector<Value> outputs,
                        call.RunGraph(*setup.body, std::move(inputs),
                                      absl::StrCat(where, "iteration ", t)));
    states.assign(std::make_move_iterator(outputs.begin()),
                  std::make_move_iterator(outputs.begin() + setup.state_count));
    for (int k = 0; k < setup.scan_outputs; ++k) {
      OC_ASSIGN_OR_RETURN(Tensor part, ScanPart(call, outputs, setup.state_count + k));
      OC_RETURN_IF_ERROR(gathered.Add(part));
      scans[k].push_back(std::move(part));
    }
  }
  std::vector<Value> results = std::move(states);
  for (int k = 0; k < setup.scan_outputs; ++k) {
    if (setup.output_reversed[k] != 0) std::reverse(scans[k].begin(), scans[k].end());
    OC_ASSIGN_OR_RETURN(Tensor stacked, StackScan(call, scans[k], setup.output_axes[k], types,
                                                  setup.state_count + k));
    scans[k].clear();
    results.emplace_back(std::move(stacked));
  }
  return results;
}

// Scan 9 and later: scan axes and directions per input and output.
Outputs ScanOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(ScanSetup setup, SetUpScan(call, 0));
  std::vector<Value> states;
  for (int i = 0; i < setup.state_count; ++i) {
    if (call.input(i) == nullptr) return call.Error(absl::StrCat("input ", i, " is absent"));
    states.push_back(*call.input(i));
  }
  std::vector<const Tensor*> scan_inputs;
  std::vector<int64_t> axes;
  int64_t length = -1;
  for (int j = 0; j < setup.scan_inputs; ++j) {
    OC_ASSIGN_OR_RETURN(const Tensor* input, call.TensorInput(setup.state_count + j));
    absl::StatusOr<int64_t> axis = NormalizeAxis(setup.input_axes[j], input->rank());
    if (!axis.ok()) return call.Error(absl::StrCat("scan input ", j, ": ", axis.status().message()));
    int64_t extent = input->dims()[*axis];
    if (length >= 0 && extent != length) {
      return call.Error(absl::StrCat("scan input ", j, " has ", extent, " steps, input 0 ", length));
    }
    length = extent;
    scan_inputs.push_back(input);
    axes.push_back(*axis);
  }
  return RunScan(call, setup, std::move(states), scan_inputs, axes, std::max<int64_t>(length, 0),
                 "body, ");
}

// `tensor` ([length, ...]) extended with zeros to `extent` on axis 0.
Tensor PadSteps(const Tensor& tensor, int64_t extent) {
  std::vector<int64_t> dims = tensor.dims();
  dims[0] = extent;
  Tensor out(tensor.elem_type(), std::move(dims));
  CopyElements(tensor, 0, out, 0, tensor.size());
  return out;
}

// Scan 8: axis 0 of every value is a batch; the scan axis is 1, and each
// batch entry scans its own sequence length (optional input 0).
Outputs ScanBatchOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(ScanSetup setup, SetUpScan(call, 1));
  std::vector<const Tensor*> values;
  for (int i = 1; i < static_cast<int>(call.inputs.size()); ++i) {
    OC_ASSIGN_OR_RETURN(const Tensor* value, call.TensorInput(i));
    if (value->rank() < (i > setup.state_count ? 2 : 1)) {
      return call.Error(absl::StrCat("input ", i, " has no batch axis"));
    }
    values.push_back(value);
  }
  if (values.empty()) return call.Error("no states and no scan inputs");
  int64_t batch = values.front()->dims()[0];
  int64_t steps = setup.scan_inputs > 0 ? values[setup.state_count]->dims()[1] : 0;
  for (size_t i = 0; i < values.size(); ++i) {
    bool scanned = static_cast<int>(i) >= setup.state_count;
    if (values[i]->dims()[0] != batch || (scanned && values[i]->dims()[1] != steps)) {
      return call.Error(absl::StrCat("input ", i + 1, " does not have ", batch,
                                     " batch entries", scanned ? absl::StrCat(" of ", steps, " steps") : ""));
    }
  }
  std::vector<int64_t> lengths(batch, steps);
  if (call.input(0) != nullptr) {
    OC_ASSIGN_OR_RETURN(const Tensor* given, call.TensorInput(0));
    absl::StatusOr<std::vector<int64_t>> ints = ToInt64s(*given);
    if (!ints.ok() || static_cast<int64_t>(ints->size()) != batch) {
      return call.Error("sequence_lens is not one integer per batch entry");
    }
    lengths = *ints;
    for (int64_t length : lengths) {
      if (length < 0 || length > steps) {
        return call.Error(absl::StrCat("sequence length ", length, " is outside [0, ", steps, "]"));
      }
    }
  }
  std::vector<std::vector<Tensor>> per_output(setup.state_count + setup.scan_outputs);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Value> states;
    for (int i = 0; i < setup.state_count; ++i) states.emplace_back(TakeAxis(*values[i], 0, b));
    std::vector<Tensor> entries;
    for (int j = 0; j < setup.scan_inputs; ++j) {
      entries.push_back(TakeAxis(*values[setup.state_count + j], 0, b));
    }
    std::vector<const Tensor*> scan_inputs;
    for (const Tensor& entry : entries) scan_inputs.push_back(&entry);
    std::vector<int64_t> axes(setup.scan_inputs, 0);
    OC_ASSIGN_OR_RETURN(std::vector<Value> outputs,
                        RunScan(call, setup, std::move(states), scan_inputs, axes, lengths[b],
                                absl::StrCat("body, batch entry ", b, ", ")));
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (!outputs[k].is_tensor()) return call.Error("Scan-8 states are tensors");
      Tensor& out = outputs[k].tensor();
      bool scanned = static_cast<int>(k) >= setup.state_count;
      per_output[k].push_back(scanned && lengths[b] < steps ? PadSteps(out, steps)
                                                            : std::move(out));
    }
  }
  // The types of a batch entry's inputs, for outputs of no batch entries.
  std::vector<onnx::TypeProto> entry_inputs;
  if (batch == 0) {
    for (int i = 0; i < static_cast<int>(values.size()); ++i) {
      entry_inputs.push_back(i < setup.state_count ? TypeWithout(*values[i], {0})
                                                   : TypeWithout(*values[i], {0, 1}));
    }
  }
  NoIterationTypes types(call, *setup.body, std::move(entry_inputs));
  std::vector<Value> results;
  for (size_t k = 0; k < per_output.size(); ++k) {
    std::vector<const Tensor*> parts;
    for (const Tensor& part : per_output[k]) parts.push_back(&part);
    if (parts.empty()) {
      OC_ASSIGN_OR_RETURN(onnx::TypeProto type, types.Output(static_cast<int>(k)));
      results.emplace_back(EmptyScanOutput(type, 0));
      continue;
    }
    absl::StatusOr<Tensor> stacked = StackAxis(parts, 0);
    if (!stacked.ok()) return call.Error(stacked.status().message());
    results.emplace_back(*std::move(stacked));
  }
  return results;
}

Outputs SequenceMapOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(const onnx::GraphProto* body, call.Graph("body"));
  OC_ASSIGN_OR_RETURN(const Value* sequence, call.SequenceInput(0));
  size_t length = sequence->elements().size();
  for (size_t j = 1; j < call.inputs.size(); ++j) {
    const Value* extra = call.input(static_cast<int>(j));
    if (extra == nullptr) return call.Error(absl::StrCat("input ", j, " is absent"));
    if (extra->kind() == Value::Kind::kSequence && extra->elements().size() != length) {
      return call.Error(absl::StrCat("input ", j, " has ", extra->elements().size(),
                                     " elements, input 0 ", length));
    }
  }
  std::vector<std::vector<Value>> gathered(body->output_size());
  for (size_t i = 0; i < length; ++i) {
    std::vector<Value> inputs;
    for (const Value* input : call.inputs) {
      inputs.push_back(input->kind() == Value::Kind::kSequence ? input->elements()[i] : *input);
    }
    OC_ASSIGN_OR_RETURN(std::vector<Value> outputs,
                        call.RunGraph(*body, std::move(inputs), absl::StrCat("body, element ", i)));
    for (size_t k = 0; k < gathered.size(); ++k) gathered[k].push_back(std::move(outputs[k]));
  }
  std::vector<Value> results;
  for (int k = 0; k < body->output_size(); ++k) {
    onnx::TypeProto type = body->output(k).type();
    if (type.has_tensor_type()) type.mutable_tensor_type()->clear_shape();
    results.push_back(Value::Sequence(std::move(type), std::move(gathered[k])));
  }
  return results;
}

// FlexAttention's subgraph attribute `name` as the kernel applies it (empty
// when unset): run below the node on the whole tensor, giving one tensor.
AttentionMod SubgraphMod(const OpCall& call, const char* name) {
  if (call.attribute(name) == nullptr) return nullptr;
  return [&call, name](Tensor tensor) -> absl::StatusOr<Tensor> {
    OC_ASSIGN_OR_RETURN(const onnx::GraphProto* graph, call.Graph(name));
    std::vector<Value> inputs;
    inputs.emplace_back(std::move(tensor));
    OC_ASSIGN_OR_RETURN(std::vector<Value> outputs,
                        call.RunGraph(*graph, std::move(inputs), name));
    if (outputs.size() != 1 || !outputs[0].is_tensor()) {
      return call.Error(absl::StrCat(name, " must give one tensor"));
    }
    return std::move(outputs[0].tensor());
  };
}

Outputs FlexAttentionOp(const OpCall& call) {
  std::vector<const Tensor*> tensors;
  for (int i = 0; i < static_cast<int>(call.inputs.size()); ++i) {
    OC_ASSIGN_OR_RETURN(const Tensor* tensor, call.TensorInput(i));
    tensors.push_back(tensor);
  }
  KernelCall kernel_call{call.node, call.since_version(), std::move(tensors)};
  OC_ASSIGN_OR_RETURN(Tensor y, FlexAttention(kernel_call, SubgraphMod(call, "score_mod"),
                                              SubgraphMod(call, "prob_mod")));
  std::vector<Value> outputs;
  outputs.emplace_back(std::move(y));
  return outputs;
}

constexpr GraphOpRow kRows[] = {
    {"If", 1, kLast, IfOp},
    {"Loop", 1, kLast, LoopOp},
    {"Scan", 8, 8, ScanBatchOp},
    {"Scan", 9, kLast, ScanOp},
    {"SequenceMap", 17, kLast, SequenceMapOp},
    {"FlexAttention", 1, kLast, FlexAttentionOp, "ai.onnx.preview"},
};

}  // namespace

absl::Span<const GraphOpRow> ControlFlowOps() { return kRows; }

}  // namespace onnxconvert::eval
