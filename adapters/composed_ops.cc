// Ops that did not exist yet at the target version but are compositions of
// older ones: ConstantOfShape below 9, Equal on floats below 11, Shrink
// below 9 (registered in registry.cc).

#include "adapters/compositions.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter.h"
#include "adapters/composer.h"
#include "adapters/compositions.h"
#include "adapters/compositions_internal.h"
#include "adapters/families.h"
#include "base/status_macros.h"

namespace onnxconvert::adapters {
namespace {

using compositions_internal::kRounding;
using compositions_internal::kNanChanged;
using onnx::TensorProto;

// ---------------------------------------------------------------------------
// Ops that did not exist yet.

// The largest ConstantOfShape written out as a constant.
constexpr int64_t kMaxFilledElements = 1 << 16;

// `value` (one element) repeated to `dims`.
TensorProto Filled(const TensorProto& value, absl::Span<const int64_t> dims, int64_t count) {
  TensorProto filled = value;
  filled.clear_dims();
  for (int64_t d : dims) filled.add_dims(d);
  auto repeat = [count](auto& field) {
    if (field.size() != 1) return;
    auto one = field.Get(0);
    field.Clear();
    for (int64_t i = 0; i < count; ++i) field.Add(one);
  };
  if (value.has_raw_data()) {
    std::string all;
    for (int64_t i = 0; i < count; ++i) all += value.raw_data();
    filled.set_raw_data(std::move(all));
  } else {
    repeat(*filled.mutable_float_data());
    repeat(*filled.mutable_int32_data());
    repeat(*filled.mutable_int64_data());
    repeat(*filled.mutable_double_data());
    repeat(*filled.mutable_uint64_data());
    if (filled.string_data_size() == 1) {
      std::string one = filled.string_data(0);
      filled.clear_string_data();
      for (int64_t i = 0; i < count; ++i) filled.add_string_data(one);
    }
  }
  return filled;
}

}  // namespace

// ConstantOfShape-9 below 9: an Identity of a constant when the shape is a
// constant, else the value tiled to the shape (Tile-6), reshaped first to
// as many 1s as the shape has sizes when that count is unknown.
absl::Status ConstantOfShapeBelow9(AdapterContext& ctx) {
  TensorProto value;
  if (const onnx::AttributeProto* attribute = FindAttribute(ctx.node, "value")) {
    value = attribute->t();
  } else {
    value.set_data_type(TensorProto::FLOAT);
    value.add_dims(1);
    value.add_float_data(0);
  }
  RemoveAttribute(ctx.node, "value");
  const std::string shape_name = ctx.node.input(0);
  const TensorProto* shape_value = ctx.rewriter.ConstantOf(shape_name);
  std::optional<std::vector<int64_t>> dims =
      shape_value != nullptr ? IntValues(*shape_value) : std::nullopt;
  int64_t count = 1;
  if (dims) {
    for (int64_t d : *dims) count = d < 0 || count > kMaxFilledElements ? -1 : count * d;
  }
  if (dims && count >= 0 && count <= kMaxFilledElements) {
    OC_ASSIGN_OR_RETURN(std::string filled, ctx.rewriter.AddConstant(Filled(value, *dims, count)));
    ctx.node.set_op_type("Identity");
    ctx.node.set_input(0, filled);
    ctx.changes.push_back({ChangeKind::kNodeReplaced, absl::StrCat("ConstantOfShape -> Identity of '", filled,
                                                         "' (", count, " elements)")});
    return absl::OkStatus();
  }
  const onnx::TensorShapeProto* shape_shape = ShapeOf(ctx, shape_name);
  int64_t rank =
      shape_shape != nullptr && shape_shape->dim_size() == 1 && shape_shape->dim(0).has_dim_value()
          ? shape_shape->dim(0).dim_value()
          : -1;
  value.clear_dims();
  if (rank < 0) {
    // Expand (8) would go at 7: the value reshaped to as many 1s as the shape has sizes
    // (shape * 0 + 1), then tiled.
    value.add_dims(1);
    Composer compose(ctx);
    OC_ASSIGN_OR_RETURN(std::string one, ctx.rewriter.AddConstant(std::move(value)));
    OC_ASSIGN_OR_RETURN(std::string zero, compose.Ints({0}, /*scalar=*/true));
    OC_ASSIGN_OR_RETURN(std::string unit, compose.Ints({1}, /*scalar=*/true));
    std::string ones =
        compose.Before("Add", {compose.Before("Mul", {shape_name, zero}), unit});
    std::string shaped = compose.Before("Reshape", {one, ones});
    ctx.node.set_op_type("Tile");
    ctx.node.clear_input();
    ctx.node.add_input(shaped);
    ctx.node.add_input(shape_name);
    ctx.changes.push_back({ChangeKind::kNodeReplaced,
                           absl::StrCat("ConstantOfShape -> Tile of the value, reshaped to as many "
                                        "1s as '", shape_name, "' has sizes, to that shape")});
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < rank; ++i) value.add_dims(1);
  OC_ASSIGN_OR_RETURN(std::string one, ctx.rewriter.AddConstant(std::move(value)));
  ctx.node.set_op_type("Tile");
  ctx.node.clear_input();
  ctx.node.add_input(one);
  ctx.node.add_input(shape_name);
  ctx.changes.push_back({ChangeKind::kNodeReplaced, absl::StrCat("ConstantOfShape -> Tile of the value to "
                                                       "the shape '", shape_name, "'")});
  return absl::OkStatus();
}

namespace {

// A 0-D tensor of `elem` (float16, float or double) holding `value`.
TensorProto FloatScalar(int32_t elem, double value) {
  TensorProto tensor;
  tensor.set_data_type(elem);
  if (elem == TensorProto::DOUBLE) {
    tensor.add_double_data(value);
  } else if (elem == TensorProto::FLOAT) {
    tensor.add_float_data(static_cast<float>(value));
  } else {  // float16: only the infinities are needed
    tensor.add_int32_data(value > 0 ? 0x7C00 : 0xFC00);
  }
  return tensor;
}

}  // namespace

// Equal-11+ on floats below 11 (Equal-7 compares bool and integers only):
// neither less nor greater, and neither side NaN (v is not NaN when
// v < inf or v > -inf).
absl::Status EqualOnFloats(AdapterContext& ctx) {
  const std::string a = ctx.node.input(0);
  const std::string b = ctx.node.input(1);
  int32_t elem = ElemOf(ctx, a);
  if (elem != TensorProto::FLOAT && elem != TensorProto::DOUBLE && elem != TensorProto::FLOAT16) {
    return absl::OkStatus();  // the caller checks the types
  }
  OC_ASSIGN_OR_RETURN(std::string inf, ctx.rewriter.AddConstant(FloatScalar(elem, INFINITY)));
  OC_ASSIGN_OR_RETURN(std::string minus_inf,
                      ctx.rewriter.AddConstant(FloatScalar(elem, -INFINITY)));
  Composer compose(ctx);
  auto not_nan = [&](const std::string& v) {
    return compose.Before(
        "Or", {compose.Before("Less", {v, inf}), compose.Before("Greater", {v, minus_inf})});
  };
  std::string differ =
      compose.Before("Or", {compose.Before("Less", {a, b}), compose.Before("Greater", {a, b})});
  std::string numbers = compose.Before("And", {not_nan(a), not_nan(b)});
  ctx.node.set_op_type("And");
  ctx.node.set_input(0, compose.Before("Not", {differ}));
  ctx.node.set_input(1, numbers);
  ctx.changes.push_back(
      {ChangeKind::kNodeReplaced, "Equal on floats -> not Less, not Greater and neither NaN"});
  return absl::OkStatus();
}

namespace {

// A float of `elem` (float or double) holding `value`, 0-D.
TensorProto TypedScalar(int32_t elem, double value) {
  TensorProto tensor;
  tensor.set_data_type(elem);
  if (elem == TensorProto::DOUBLE)
    tensor.add_double_data(value);
  else
    tensor.add_float_data(static_cast<float>(value));
  return tensor;
}

}  // namespace

// Shrink-9 below 9 (its body needs Where-9): with l = lambd and b = bias,
// max(x, l) + min(x, -l) + (l - b) * ([x > l] - [x < -l]), which is
// x - b above l, x + b below -l and 0 between, infinities included (no
// mask multiplies an infinite x).
absl::Status ShrinkBelow9(AdapterContext& ctx) {
  const std::string x = ctx.node.input(0);
  int32_t elem = ElemOf(ctx, x);
  if (elem != TensorProto::FLOAT && elem != TensorProto::DOUBLE) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Shrink does not exist before opset 9, and its composition of Clip and Greater needs '", x,
        "' to be float or double; it is ", elem == 0 ? "of an unknown type" : "not"));
  }
  const onnx::AttributeProto* lambd_attribute = FindAttribute(ctx.node, "lambd");
  const onnx::AttributeProto* bias_attribute = FindAttribute(ctx.node, "bias");
  const double lambd = lambd_attribute != nullptr ? lambd_attribute->f() : 0.5;
  const double bias = bias_attribute != nullptr ? bias_attribute->f() : 0.0;
  Composer compose(ctx);
  // Clip-6 rather than Max and Min: it takes the bounds as attributes and
  // needs no broadcasting, down to opset 6. The other bound is set to the
  // infinity: unset, it would be the float limit, and clip infinite x.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::string above_low =
      compose.Before("Clip", {x}, {FloatAttribute("max", kInf), FloatAttribute("min", lambd)});
  std::string below_high =
      compose.Before("Clip", {x}, {FloatAttribute("max", -lambd), FloatAttribute("min", -kInf)});
  ctx.node.clear_input();
  if (lambd == bias) {
    ctx.node.add_input(above_low);
    ctx.node.add_input(below_high);
  } else {
    OC_ASSIGN_OR_RETURN(std::string low, ctx.rewriter.AddConstant(TypedScalar(elem, -lambd)));
    OC_ASSIGN_OR_RETURN(std::string high, ctx.rewriter.AddConstant(TypedScalar(elem, lambd)));
    OC_ASSIGN_OR_RETURN(std::string jump,
                        ctx.rewriter.AddConstant(TypedScalar(elem, lambd - bias)));
    std::string above =
        compose.Before("Cast", {compose.Before("Greater", {x, high})}, {IntAttribute("to", elem)});
    std::string below =
        compose.Before("Cast", {compose.Before("Less", {x, low})}, {IntAttribute("to", elem)});
    std::string side = compose.Before("Sub", {above, below});
    ctx.node.add_input(compose.Before("Add", {above_low, below_high}));
    ctx.node.add_input(compose.Before("Mul", {side, jump}));
  }
  ctx.node.set_op_type("Add");
  RemoveAttribute(ctx.node, "lambd");
  RemoveAttribute(ctx.node, "bias");
  ctx.changes.push_back(
      {ChangeKind::kNodeReplaced, absl::StrCat("Shrink -> Clip(x, min ", lambd, ") + Clip(x, max ", -lambd,
                                     ")", lambd != bias ? " + the jump at the edges" : "")});
  if (lambd != bias) {
    ctx.changes.push_back(
        {kRounding,
         "x - bias and x + bias are computed as x -+ lambd +- (lambd - bias): the "
         "last bit may differ"});
  }
  // Without Where (9) nothing turns a NaN into a number: the Clips and the
  // sum pass it on.
  ctx.changes.push_back({kNanChanged, "a NaN in x gives NaN, where Shrink-9 gives 0"});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
