// Graph-level ops on values that are not only tensors: Constant (whose
// value is an attribute), Identity of any value, the sequence ops
// (SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence) and
// the optional ops (Optional, OptionalHasElement, OptionalGetElement).

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/axis_ops.h"
#include "eval/runner.h"

namespace onnxconvert::eval {
namespace {

using Outputs = absl::StatusOr<std::vector<Value>>;

Outputs One(Value value) {
  std::vector<Value> outputs;
  outputs.push_back(std::move(value));
  return outputs;
}

// The type tensor(`elem_type`) without a shape.
onnx::TypeProto ElementOnly(int32_t elem_type) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(elem_type);
  return type;
}

// The one integer of a scalar (or one-element) tensor input `i`.
absl::StatusOr<int64_t> ScalarInput(const OpCall& call, int i) {
  OC_ASSIGN_OR_RETURN(const Tensor* tensor, call.TensorInput(i));
  absl::StatusOr<std::vector<int64_t>> values = ToInt64s(*tensor);
  if (!values.ok() || values->size() != 1) {
    return call.Error(absl::StrCat("input ", i, " is not one integer"));
  }
  return values->front();
}

// A position in a sequence of `size` (negative: from the back), which must
// be in [-size, size) or, with `or_end`, [-size, size].
absl::StatusOr<int64_t> Position(const OpCall& call, int64_t position, int64_t size,
                                 bool or_end) {
  int64_t high = or_end ? size : size - 1;
  if (position < -size || position > high) {
    return call.Error(absl::StrCat("position ", position, " is out of range for a sequence of ",
                                   size));
  }
  return position < 0 ? position + size : position;
}

// The tensor of a value_<type> or value_<type>s attribute of Constant:
// `one` as a scalar when `scalar`, else the elements of `list` (rank 1).
template <typename T, typename List>
Tensor AttributeTensor(int32_t elem_type, bool scalar, const T& one, const List& list) {
  Tensor t = scalar ? Tensor(elem_type, {})
                    : Tensor(elem_type, {static_cast<int64_t>(list.size())});
  for (int64_t i = 0; i < t.size(); ++i) {
    const T& value = scalar ? one : list[static_cast<int>(i)];
    if constexpr (std::is_same_v<T, std::string>) {
      t.strings()[i] = value;
    } else {
      t.data<T>()[i] = value;
    }
  }
  return t;
}

// Constant: the value its one value attribute holds.
Outputs ConstantOp(const OpCall& call) {
  const onnx::AttributeProto* found = nullptr;
  for (const onnx::AttributeProto& a : call.node.attribute()) {
    if (found != nullptr) return call.Error("sets more than one value attribute");
    found = &a;
  }
  if (found == nullptr) return call.Error("sets no value attribute");
  const onnx::AttributeProto& a = *found;
  int64_t limit = call.runner.options().max_tensor_elements;
  const std::string& name = a.name();
  if (name == "value") {
    absl::StatusOr<Tensor> tensor = FromProto(a.t(), limit);
    if (!tensor.ok()) return call.Error(tensor.status().message());
    return One(*std::move(tensor));
  }
  if (name == "sparse_value") {
    absl::StatusOr<Tensor> tensor = FromSparseProto(a.sparse_tensor(), limit);
    if (!tensor.ok()) return call.Error(tensor.status().message());
    return One(*std::move(tensor));
  }
  if (name == "value_float" || name == "value_floats") {
    return One(AttributeTensor(onnx::TensorProto::FLOAT, name == "value_float", a.f(), a.floats()));
  }
  if (name == "value_int" || name == "value_ints") {
    return One(AttributeTensor(onnx::TensorProto::INT64, name == "value_int", a.i(), a.ints()));
  }
  if (name == "value_string" || name == "value_strings") {
    return One(
        AttributeTensor(onnx::TensorProto::STRING, name == "value_string", a.s(), a.strings()));
  }
  return call.Error(absl::StrCat("attribute '", name, "' is not a value attribute"));
}

Outputs IdentityOp(const OpCall& call) {
  if (call.input(0) == nullptr) return call.Error("input 0 is absent");
  return One(*call.input(0));
}

Outputs SequenceEmptyOp(const OpCall& call) {
  int64_t dtype = call.Int("dtype", onnx::TensorProto::FLOAT);
  return One(Value::Sequence(ElementOnly(static_cast<int32_t>(dtype)), {}));
}

Outputs SequenceConstructOp(const OpCall& call) {
  std::vector<Value> elements;
  int32_t elem_type = onnx::TensorProto::UNDEFINED;
  for (int i = 0; i < static_cast<int>(call.inputs.size()); ++i) {
    OC_ASSIGN_OR_RETURN(const Tensor* tensor, call.TensorInput(i));
    if (i > 0 && tensor->elem_type() != elem_type) {
      return call.Error(absl::StrCat("input ", i, " is ", ElementTypeName(tensor->elem_type()),
                                     ", input 0 ", ElementTypeName(elem_type)));
    }
    elem_type = tensor->elem_type();
    elements.emplace_back(*tensor);
  }
  return One(Value::Sequence(ElementOnly(elem_type), std::move(elements)));
}

Outputs SequenceInsertOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(const Value* sequence, call.SequenceInput(0));
  OC_ASSIGN_OR_RETURN(const Tensor* tensor, call.TensorInput(1));
  int32_t elem_type = sequence->element_type().tensor_type().elem_type();
  if (elem_type != 0 && tensor->elem_type() != elem_type) {
    return call.Error(absl::StrCat("inserts ", ElementTypeName(tensor->elem_type()),
                                   " into a sequence of ", ElementTypeName(elem_type)));
  }
  int64_t size = static_cast<int64_t>(sequence->elements().size());
  int64_t at = size;
  if (call.input(2) != nullptr) {
    OC_ASSIGN_OR_RETURN(int64_t position, ScalarInput(call, 2));
    OC_ASSIGN_OR_RETURN(at, Position(call, position, size, /*or_end=*/true));
  }
  Value result = *sequence;
  result.elements().insert(result.elements().begin() + at, Value(*tensor));
  return One(std::move(result));
}

Outputs SequenceAtOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(const Value* sequence, call.SequenceInput(0));
  OC_ASSIGN_OR_RETURN(int64_t position, ScalarInput(call, 1));
  int64_t size = static_cast<int64_t>(sequence->elements().size());
  OC_ASSIGN_OR_RETURN(int64_t at, Position(call, position, size, /*or_end=*/false));
  return One(sequence->elements()[at]);
}

Outputs SequenceEraseOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(const Value* sequence, call.SequenceInput(0));
  int64_t size = static_cast<int64_t>(sequence->elements().size());
  int64_t position = -1;
  if (call.input(1) != nullptr) {
    OC_ASSIGN_OR_RETURN(position, ScalarInput(call, 1));
  }
  OC_ASSIGN_OR_RETURN(int64_t at, Position(call, position, size, /*or_end=*/false));
  Value result = *sequence;
  result.elements().erase(result.elements().begin() + at);
  return One(std::move(result));
}

Outputs SequenceLengthOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(const Value* sequence, call.SequenceInput(0));
  int64_t size = static_cast<int64_t>(sequence->elements().size());
  return One(Int64Tensor({size}, /*scalar=*/true));
}

// The sizes SplitToSequence cuts an axis of `extent` into, from its split
// input (absent: all 1; a scalar: chunks of that size, the last shorter).
absl::StatusOr<std::vector<int64_t>> SplitSizes(const OpCall& call, int64_t extent) {
  const Value* split = call.input(1);
  if (split == nullptr) return std::vector<int64_t>(extent, 1);
  OC_ASSIGN_OR_RETURN(const Tensor* tensor, call.TensorInput(1));
  absl::StatusOr<std::vector<int64_t>> values = ToInt64s(*tensor);
  if (!values.ok()) return call.Error("split is not integers");
  if (tensor->rank() == 0) {
    int64_t chunk = values->front();
    if (chunk <= 0) return call.Error(absl::StrCat("split ", chunk, " is not positive"));
    std::vector<int64_t> sizes;
    for (int64_t at = 0; at < extent; at += chunk) sizes.push_back(std::min(chunk, extent - at));
    return sizes;
  }
  int64_t total = 0;
  for (int64_t size : *values) {
    if (size < 0) return call.Error(absl::StrCat("split ", size, " is negative"));
    total += size;
  }
  if (total != extent) {
    return call.Error(absl::StrCat("the splits add up to ", total, ", the axis has ", extent));
  }
  return values;
}

Outputs SplitToSequenceOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* input, call.TensorInput(0));
  absl::StatusOr<int64_t> axis = NormalizeAxis(call.Int("axis", 0), input->rank());
  if (!axis.ok()) return call.Error(axis.status().message());
  int64_t extent = input->dims()[*axis];
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, SplitSizes(call, extent));
  bool squeeze = call.input(1) == nullptr && call.Int("keepdims", 1) == 0;
  std::vector<Value> elements;
  int64_t at = 0;
  for (int64_t size : sizes) {
    elements.emplace_back(squeeze ? TakeAxis(*input, *axis, at)
                                  : SliceAxis(*input, *axis, at, size));
    at += size;
  }
  return One(Value::Sequence(ElementOnly(input->elem_type()), std::move(elements)));
}

Outputs ConcatFromSequenceOp(const OpCall& call) {
  OC_ASSIGN_OR_RETURN(const Value* sequence, call.SequenceInput(0));
  if (sequence->elements().empty()) return call.Error("the sequence is empty");
  std::vector<const Tensor*> parts;
  for (const Value& element : sequence->elements()) {
    if (!element.is_tensor()) return call.Error("the sequence holds values that are not tensors");
    parts.push_back(&element.tensor());
  }
  const onnx::AttributeProto* axis_attribute = call.attribute("axis");
  if (axis_attribute == nullptr) return call.Error("attribute 'axis' is unset");
  bool new_axis = call.Int("new_axis", 0) != 0;
  int64_t rank = parts.front()->rank() + (new_axis ? 1 : 0);
  absl::StatusOr<int64_t> axis = NormalizeAxis(axis_attribute->i(), rank);
  if (!axis.ok()) return call.Error(axis.status().message());
  absl::StatusOr<Tensor> joined = new_axis ? StackAxis(parts, *axis) : ConcatAxis(parts, *axis);
  if (!joined.ok()) return call.Error(joined.status().message());
  return One(*std::move(joined));
}

Outputs OptionalOp(const OpCall& call) {
  if (const Value* content = call.input(0)) {
    onnx::TypeProto type = content->Type();
    return One(Value::Optional(std::move(type), *content));
  }
  const onnx::AttributeProto* type = call.attribute("type");
  if (type == nullptr || !type->has_tp()) {
    return call.Error("without an input, attribute 'type' must say the type");
  }
  return One(Value::Optional(type->tp(), std::nullopt));
}

Outputs OptionalHasElementOp(const OpCall& call) {
  const Value* input = call.input(0);
  bool has = input != nullptr &&
             (input->kind() != Value::Kind::kOptional || input->has_content());
  Tensor out(onnx::TensorProto::BOOL, {});
  out.data<bool>()[0] = has;
  return One(std::move(out));
}

Outputs OptionalGetElementOp(const OpCall& call) {
  const Value* input = call.input(0);
  if (input == nullptr) return call.Error("input 0 is absent");
  if (input->kind() != Value::Kind::kOptional) return One(*input);
  if (!input->has_content()) return call.Error("the optional is empty");
  return One(input->elements().front());
}

constexpr GraphOpRow kRows[] = {
    {"Constant", 1, kLast, ConstantOp},
    {"Identity", 1, kLast, IdentityOp},
    {"SequenceEmpty", 11, kLast, SequenceEmptyOp},
    {"SequenceConstruct", 11, kLast, SequenceConstructOp},
    {"SequenceInsert", 11, kLast, SequenceInsertOp},
    {"SequenceAt", 11, kLast, SequenceAtOp},
    {"SequenceErase", 11, kLast, SequenceEraseOp},
    {"SequenceLength", 11, kLast, SequenceLengthOp},
    {"SplitToSequence", 11, kLast, SplitToSequenceOp},
    {"ConcatFromSequence", 11, kLast, ConcatFromSequenceOp},
    {"Optional", 15, kLast, OptionalOp},
    {"OptionalHasElement", 15, kLast, OptionalHasElementOp},
    {"OptionalGetElement", 15, kLast, OptionalGetElementOp},
};

}  // namespace

absl::Span<const GraphOpRow> ValueOps() { return kRows; }

}  // namespace onnxconvert::eval
