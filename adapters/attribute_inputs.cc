// Attributes that became inputs: the axes of reductions (ReduceSum at 13,
// the other reductions at 18), of Squeeze and Unsqueeze (13), Split's
// `split` (13), Slice's starts/ends/axes (10), Pad's pads/value (11), Clip's
// min/max (11), Dropout's ratio (12), DFT's axis (20), Upsample's scales (9), TopK's k (10) and Reshape's shape (5). Upgrading moves the attribute into a new constant input;
// downgrading moves a constant input back into the attribute; an input
// known only at run time becomes a composition of older ops where one
// exists (Clip's bounds, the axes of reductions: compositions.h), else is
// refused.

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/composer.h"
#include "adapters/compositions.h"
#include "adapters/families.h"
#include "adapters/rewrites.h"
#include "base/status_macros.h"

namespace onnxconvert::adapters {
namespace {

// How a moved attribute's value is stored as an input.
enum class Form {
  kInts,          // INTS attribute -> 1-D int64 tensor
  kIntScalar,     // INT attribute -> 0-D int64 tensor
  kLikeInput0,    // FLOAT attribute -> 0-D tensor of input 0's element type
  kFloatScalar,   // FLOAT attribute -> 0-D float tensor
  kFloats,        // FLOATS attribute -> 1-D float tensor
  kIntVector,     // INT attribute -> 1-D int64 tensor of one value
};

// One attribute and the input slot that replaces it.
struct Slot {
  const char* attribute;
  int input;
  Form form;
  // Nonzero: the absent input means this axis counted from the back, which
  // is not what the absent attribute means (its default): a step writes
  // the one it converts from explicitly.
  int64_t absent_input_axis = 0;
};

// An op version change that moved attributes into inputs.
struct MovedAttributes {
  const char* op;
  int older;  // since_version with the attributes
  int newer;  // since_version with the inputs
  std::initializer_list<Slot> slots;
  // Downgrading when a slot's input is known only at run time: the
  // composition of older ops that takes it as it is (compositions.h), or
  // null to refuse.
  AdapterFn at_run_time = nullptr;
  // An input after the slots that the older form lacks and may drop when
  // it is a constant every element of which is `neutral_value` (what the
  // older form does), or -1.
  int neutral_input = -1;
  int64_t neutral_value = 0;
};

const MovedAttributes kMoved[] = {
    {"ReduceSum", 11, 13, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"Squeeze", 11, 13, {{"axes", 1, Form::kInts}}},
    {"Unsqueeze", 11, 13, {{"axes", 1, Form::kInts}}},
    {"Split", 11, 13, {{"split", 1, Form::kInts}}},
    {"ReduceMean", 13, 18, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"ReduceMax", 13, 18, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"ReduceMin", 13, 18, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"ReduceProd", 13, 18, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"ReduceL1", 13, 18, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"ReduceL2", 13, 18, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"ReduceLogSum", 13, 18, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"ReduceLogSumExp", 13, 18, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"ReduceSumSquare", 13, 18, {{"axes", 1, Form::kInts}}, ReduceAxesAtRunTime},
    {"Slice", 1, 10,
     {{"starts", 1, Form::kInts}, {"ends", 2, Form::kInts}, {"axes", 3, Form::kInts}},
     nullptr, /*neutral_input=*/4, /*neutral_value=*/1},
    {"Pad", 2, 11, {{"pads", 1, Form::kInts}, {"value", 2, Form::kLikeInput0}}},
    {"Clip", 6, 11, {{"min", 1, Form::kLikeInput0}, {"max", 2, Form::kLikeInput0}},
     ClipBoundsAtRunTime},
    {"Dropout", 10, 12, {{"ratio", 1, Form::kFloatScalar}}, nullptr,
     /*neutral_input=*/2, /*neutral_value=*/0},
    {"DFT", 17, 20, {{"axis", 2, Form::kIntScalar, /*absent_input_axis=*/-2}}},
    {"Upsample", 7, 9, {{"scales", 1, Form::kFloats}}},
    {"TopK", 1, 10, {{"k", 1, Form::kIntVector}}},
    {"Reshape", 1, 5, {{"shape", 1, Form::kInts}}},
};

// Whether `value` is a constant whose every element is `expected`.
bool AllEqual(const onnx::TensorProto* value, int64_t expected) {
  if (value == nullptr) return false;
  std::optional<std::vector<int64_t>> ints = IntValues(*value);
  return ints.has_value() &&
         std::all_of(ints->begin(), ints->end(), [&](int64_t v) { return v == expected; });
}

// Whether `ctx`'s node is a Dropout of constant ratio 0, which keeps every
// element (scale 1, mask all true) whatever its training_mode: exporters
// write training_mode true for attention dropouts of p = 0 (torchvision's
// Swin Transformer).
bool DropoutKeepsAll(const AdapterContext& ctx) {
  if (ctx.from.name != "Dropout" || ctx.node.input_size() < 2) return false;
  const onnx::TensorProto* ratio = ctx.rewriter.ConstantOf(ctx.node.input(1));
  if (ratio == nullptr) return false;
  std::optional<std::vector<double>> values = FloatValues(*ratio);
  return values.has_value() && !values->empty() &&
         std::all_of(values->begin(), values->end(), [](double v) { return v == 0.0; });
}

// Whether `form` is an integer attribute's.
bool IntForm(Form form) {
  return form == Form::kInts || form == Form::kIntScalar || form == Form::kIntVector;
}

// Sets `value` (empty) to the attribute's value as a tensor in the form the
// input takes.
absl::Status AsTensor(AdapterContext& ctx, const onnx::AttributeProto& a, Form form,
                      onnx::TensorProto& value) {
  switch (form) {
    case Form::kInts:
      schema::SetInt64Tensor(a.ints(), /*scalar=*/false, value);
      return absl::OkStatus();
    case Form::kIntScalar:
      schema::SetInt64Tensor({a.i()}, /*scalar=*/true, value);
      return absl::OkStatus();
    case Form::kIntVector:
      schema::SetInt64Tensor({a.i()}, /*scalar=*/false, value);
      return absl::OkStatus();
    case Form::kFloatScalar:
      schema::SetFloatTensor({a.f()}, /*scalar=*/true, value);
      return absl::OkStatus();
    case Form::kFloats:
      schema::SetFloatTensor(a.floats(), /*scalar=*/false, value);
      return absl::OkStatus();
    case Form::kLikeInput0: {
      const onnx::TypeProto* type = ctx.rewriter.TypeOf(ctx.node.input(0));
      int32_t elem = type != nullptr && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
      if (elem == onnx::TensorProto::FLOAT) {
        value.set_data_type(elem);
        value.add_float_data(a.f());
      } else if (elem == onnx::TensorProto::DOUBLE) {
        value.set_data_type(elem);
        value.add_double_data(a.f());
      } else {
        return absl::FailedPreconditionError(absl::StrCat(
            "attribute '", a.name(), "' must become an input of the element type of '",
            ctx.node.input(0), "', which is ", elem == 0 ? "unknown" : "not float or double"));
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status AttributeToInput(AdapterContext& ctx) {
  const MovedAttributes& moved = ctx.TableRow<MovedAttributes>();
  for (const Slot& slot : moved.slots) {
    const onnx::AttributeProto* attribute = FindAttribute(ctx.node, slot.attribute);
    std::optional<onnx::AttributeProto> written;  // the default, where absences differ
    const schema::AttrSpec* spec =
        attribute == nullptr ? ctx.from.FindAttr(slot.attribute) : nullptr;
    if (attribute == nullptr && slot.absent_input_axis != 0 && spec != nullptr &&
        spec->has_default) {
      written.emplace();
      written->set_name(slot.attribute);
      written->set_type(onnx::AttributeProto::INT);
      written->set_i(spec->default_value.i);
      attribute = &*written;
    }
    if (attribute == nullptr) continue;  // the input's absence means the same default
    // One tensor per thread, cleared for each value: most values are equal
    // to one added before, which AddConstant then leaves where it is.
    static thread_local onnx::TensorProto value;
    value.Clear();
    OC_RETURN_IF_ERROR(AsTensor(ctx, *attribute, slot.form, value));
    absl::StatusOr<std::string> name = ctx.rewriter.AddConstant(std::move(value));
    if (!name.ok()) return name.status();
    while (ctx.node.input_size() <= slot.input) ctx.node.add_input("");
    ctx.node.set_input(slot.input, *name);
    ctx.changes.push_back({ChangeKind::kAttributeToInput,
                           absl::StrCat(slot.attribute, " moved to input '", *name, "'")});
  }
  for (const Slot& slot : moved.slots) RemoveAttribute(ctx.node, slot.attribute);
  // A legacy optimisation hint (Reshape-1), meaningless to later versions.
  if (FindAttribute(ctx.node, "consumed_inputs") != nullptr &&
      ctx.to.FindAttr("consumed_inputs") == nullptr) {
    RemoveAttribute(ctx.node, "consumed_inputs");
    ctx.changes.push_back(
        {ChangeKind::kAttributeRemoved, "consumed_inputs (a legacy hint) dropped"});
  }
  return absl::OkStatus();
}

// The constant's values as an attribute of the form `form`.
absl::Status SetFromTensor(const onnx::TensorProto& value, const Slot& slot,
                           onnx::AttributeProto& attribute) {
  attribute.set_name(slot.attribute);
  std::optional<std::vector<int64_t>> int_values = IntValues(value);
  std::optional<std::vector<double>> float_values = FloatValues(value);
  if (!int_values && !float_values) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the constant for '", slot.attribute, "' has an element type an attribute cannot hold"));
  }
  std::vector<int64_t> ints = int_values.value_or(std::vector<int64_t>());
  std::vector<double> floats = float_values.value_or(std::vector<double>());
  switch (slot.form) {
    case Form::kInts:
      attribute.set_type(onnx::AttributeProto::INTS);
      for (int64_t v : ints) attribute.add_ints(v);
      return absl::OkStatus();
    case Form::kIntScalar:
    case Form::kIntVector:
      if (ints.size() != 1) break;
      attribute.set_type(onnx::AttributeProto::INT);
      attribute.set_i(ints[0]);
      return absl::OkStatus();
    case Form::kFloats:
      attribute.set_type(onnx::AttributeProto::FLOATS);
      for (double v : floats) attribute.add_floats(static_cast<float>(v));
      return absl::OkStatus();
    case Form::kLikeInput0:
    case Form::kFloatScalar:
      if (floats.size() != 1) break;
      attribute.set_type(onnx::AttributeProto::FLOAT);
      attribute.set_f(static_cast<float>(floats[0]));
      return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      absl::StrCat("the constant for '", slot.attribute, "' is not a single value"));
}

// Whether `input` is one of `moved`'s slots.
bool IsMovedSlot(const MovedAttributes& moved, int input) {
  for (const Slot& slot : moved.slots) {
    if (slot.input == input) return true;
  }
  return false;
}

absl::Status InputToAttribute(AdapterContext& ctx) {
  const MovedAttributes& moved = ctx.TableRow<MovedAttributes>();
  if (moved.at_run_time != nullptr) {
    for (const Slot& slot : moved.slots) {
      if (ctx.node.input_size() <= slot.input || ctx.node.input(slot.input).empty() ||
          ctx.rewriter.ConstantOf(ctx.node.input(slot.input)) != nullptr) {
        continue;
      }
      OC_RETURN_IF_ERROR(moved.at_run_time(ctx));
      // Replaced by the composition, or left with constant slots only.
      if (ctx.node.op_type() != moved.op) return absl::OkStatus();
      break;
    }
  }
  int first_moved = ctx.node.input_size();
  for (const Slot& slot : moved.slots) first_moved = std::min(first_moved, slot.input);
  // Inputs after the moved ones have no place in the older form.
  for (int i = first_moved; i < ctx.node.input_size(); ++i) {
    if (i == moved.neutral_input && DropoutKeepsAll(ctx)) {
      ctx.changes.push_back(
          {ChangeKind::kInputDropped,
           absl::StrCat("input '", ctx.node.input(i), "' dropped: the ratio is 0, so ",
                        ctx.from.Label(), " keeps every element in training too")});
      ctx.node.set_input(i, "");
      continue;
    }
    if (i == moved.neutral_input &&
        AllEqual(ctx.rewriter.ConstantOf(ctx.node.input(i)), moved.neutral_value)) {
      ctx.changes.push_back(
          {ChangeKind::kInputDropped,
           absl::StrCat("input '", ctx.node.input(i), "' is all ", moved.neutral_value, ", what ",
                        ctx.to.Label(), " does without it")});
      ctx.node.set_input(i, "");
      continue;
    }
    if (i == moved.neutral_input && !ctx.node.input(i).empty()) {
      if (ctx.from.name == "Slice" && ctx.rewriter.ConstantOf(ctx.node.input(i)) != nullptr) {
        // Steps other than 1: the node becomes Gathers and Slice-1 (or an
        // Identity), or is refused.
        return SliceStepsByGather(ctx);
      }
      return absl::FailedPreconditionError(
          absl::StrCat("input #", i, " ('", ctx.node.input(i), "') is ",
                       ctx.rewriter.ConstantOf(ctx.node.input(i)) == nullptr
                           ? "known only at run time"
                           : "not all " + std::to_string(moved.neutral_value),
                       ", which ", ctx.to.Label(), " cannot express: it has no such input",
                       ctx.from.name == "Dropout" ? " (it runs in inference only)" : ""));
    }
    if (!IsMovedSlot(moved, i) && !ctx.node.input(i).empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "input #", i, " ('", ctx.node.input(i), "') has no place in ", ctx.to.Label()));
    }
  }
  first_moved = ctx.node.input_size();
  for (const Slot& slot : moved.slots) {
    bool absent = ctx.node.input_size() <= slot.input || ctx.node.input(slot.input).empty();
    if (absent && slot.absent_input_axis != 0) {
      int64_t rank = RankOf(ctx, ctx.node.input(0));
      if (rank < 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "input '", slot.attribute, "' is absent (axis ", slot.absent_input_axis,
            "), and the rank of '", ctx.node.input(0), "' that ", ctx.to.Label(),
            " needs to name that axis is unknown"));
      }
      AddIntAttribute(ctx.node, slot.attribute, rank + slot.absent_input_axis);
      ctx.changes.push_back({ChangeKind::kAttributeSet,
                             absl::StrCat(slot.attribute, " = ", rank + slot.absent_input_axis,
                                          ", what the absent input means")});
      continue;
    }
    if (absent) continue;
    // A copy: the input is deleted below.
    const std::string name = ctx.node.input(slot.input);
    const onnx::TensorProto* value = ctx.rewriter.ConstantOf(name);
    onnx::TensorProto from_shapes;  // the value the static shapes give, if used
    if (value == nullptr && IntForm(slot.form)) {
      if (std::optional<std::vector<int64_t>> ints = ctx.rewriter.StaticInts(name)) {
        schema::SetInt64Tensor(*ints, slot.form == Form::kIntScalar, from_shapes);
        value = &from_shapes;
      }
    }
    if (value == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "input '", name, "' (", slot.attribute, ") is not a constant, and ", ctx.to.Label(),
          " needs it as an attribute (where the graph's static shapes decide it, "
          "`onnx-convert optimize` folds it to one first)"));
    }
    onnx::AttributeProto attribute;
    absl::Status status = SetFromTensor(*value, slot, attribute);
    if (!status.ok()) return status;
    *ctx.node.add_attribute() = std::move(attribute);
    first_moved = std::min(first_moved, slot.input);
    ctx.changes.push_back(
        {ChangeKind::kInputToAttribute,
         absl::StrCat("input '", name, "' moved to attribute ", slot.attribute,
                      value == &from_shapes ? ": its value follows from the graph's static shapes"
                                            : "")});
  }
  if (first_moved < ctx.node.input_size()) {
    ctx.node.mutable_input()->DeleteSubrange(first_moved, ctx.node.input_size() - first_moved);
  }
  // Dropout's mask is all true in inference from 12 on; before, it is not
  // filled in inference.
  // Read, it is made all true beside the node (ConstantOfShape of X's
  // shape), which is what Dropout-12 gives.
  if (ctx.from.name == "Dropout" && ctx.node.output_size() > 1 && !ctx.node.output(1).empty()) {
    const std::string mask = ctx.node.output(1);
    ctx.node.mutable_output()->RemoveLast();
    onnx::TensorProto all_true;
    all_true.set_data_type(onnx::TensorProto::BOOL);
    all_true.add_dims(1);
    all_true.add_int32_data(1);
    onnx::AttributeProto value;
    value.set_name("value");
    value.set_type(onnx::AttributeProto::TENSOR);
    *value.mutable_t() = std::move(all_true);
    Composer compose(ctx);
    compose.After("ConstantOfShape", {compose.After("Shape", {ctx.node.input(0)})}, mask, {value});
    ctx.changes.push_back({ChangeKind::kNodeInserted,
                           absl::StrCat("mask '", mask, "' all true, as ", ctx.from.Label(),
                                        " gives it in inference, "
                                        "from ConstantOfShape")});
  }
  // Dropout's seed only matters in training, which the older form cannot do.
  if (ctx.from.name == "Dropout" && ctx.to.FindAttr("seed") == nullptr) {
    RemoveAttribute(ctx.node, "seed");
  }
  // Trailing empty inputs (absent optionals) have no place in the older form.
  while (ctx.node.input_size() > 0 && ctx.node.input(ctx.node.input_size() - 1).empty()) {
    ctx.node.mutable_input()->RemoveLast();
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterAttributeInputAdapters(RewriteTable& table) {
  for (const MovedAttributes& moved : kMoved) {
    std::string names;
    for (const Slot& slot : moved.slots) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", slot.attribute);
    }
    table.Register("", moved.op, moved.older, moved.newer, AttributeToInput,
                   absl::StrCat(names, " attributes to inputs"), &moved);
    table.Register("", moved.op, moved.newer, moved.older, InputToAttribute,
                   absl::StrCat(names, " inputs to attributes",
                                moved.at_run_time != nullptr
                                    ? " (composed from older ops when known only at run time)"
                                    : ""),
                   &moved);
  }
}

}  // namespace onnxconvert::adapters
