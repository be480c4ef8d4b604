// Compositions: downgrades that write a node as several ops of the target
// version where the target cannot take what the node uses directly (see
// compositions.h), and ops that did not exist yet but are compositions of
// older ones (ConstantOfShape below 9, Equal on floats below 11).

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
#include "adapters/rewrites.h"
#include "base/status_macros.h"

namespace onnxconvert::adapters {
namespace {

using onnx::TensorProto;

// The report's kind for a change whose float results may round differently
// from the node's own kernel (or overflow where it would not).
constexpr char kRounding[] = "rounding-changed";
// The report's kind for a change of what a NaN input gives.
constexpr char kNanChanged[] = "nan-changed";

bool IsFloat(int32_t elem) {
  return elem == TensorProto::FLOAT || elem == TensorProto::DOUBLE ||
         elem == TensorProto::FLOAT16 || elem == TensorProto::BFLOAT16;
}

// Whether input `i` of the node is given.
bool Given(const AdapterContext& ctx, int i) {
  return i < ctx.node.input_size() && !ctx.node.input(i).empty();
}

// Whether input `i` of the node is given and known only at run time.
bool AtRunTime(const AdapterContext& ctx, int i) {
  return Given(ctx, i) && ctx.rewriter.ConstantOf(ctx.node.input(i)) == nullptr;
}


// ---------------------------------------------------------------------------
// Reductions with axes known at run time.

// What a reduction does to X before the sum, and to the sum after.
enum class Before { kNone, kAbs, kSquare, kExp };
enum class After { kNone, kSqrt, kLog, kDivideByCount };

struct ReduceComposition {
  const char* op;
  Before before;
  After after;
  bool float_only;  // the ops before or after take float types only
  // How float results may differ from the op's kernel.
  const char* rounding;
  // With noop_with_empty_axes = 1 and empty axes the op returns X; the
  // composition does too.
  bool noop_is_identity;
};

constexpr char kSumOrder[] =
    "summed by ReduceSum: the order of the additions, and so the last bit, may differ from the "
    "op's kernel";

constexpr ReduceComposition kReduceCompositions[] = {
    {"ReduceSumSquare", Before::kSquare, After::kNone, false, kSumOrder, false},
    {"ReduceL1", Before::kAbs, After::kNone, false, kSumOrder, false},
    {"ReduceL2", Before::kSquare, After::kSqrt, true, kSumOrder, false},
    {"ReduceLogSum", Before::kNone, After::kLog, true, kSumOrder, false},
    {"ReduceLogSumExp", Before::kExp, After::kLog, true,
     "exp(X) is summed without subtracting the maximum: the last bit may differ, and it "
     "overflows to inf where exp(X) does",
     false},
    {"ReduceMean", Before::kNone, After::kDivideByCount, true,
     "the mean is the sum divided by the count: the last bit may differ", true},
};

constexpr const char* kBeforeText[] = {"X", "|X|", "X*X", "exp(X)"};
constexpr const char* kAfterText[] = {"", ", then Sqrt", ", then Log",
                                      ", divided by the count of reduced elements"};

// Reductions that are not sums: reduced one axis at a time, each axis
// whether or not the run-time axes name it.
// (ReduceSum-13 too, below 13: the sums of the others' compositions go on
// down that way.)
constexpr const char* kPerAxisReductions[] = {"ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum"};

// ReduceMax/Min/Prod-18 with axes known at run time, for a rank R known
// now: flags[i] = whether the axes name axis i (all of them for empty axes
// unless noop_with_empty_axes); for each axis, the reduction over it
// (keepdims) and the tensor are concatenated along it and a Slice with
// run-time bounds keeps the one or the other, which leaves the keepdims
// result; without keepdims a Reshape to the kept dims (Compress) follows.
// Exact, axes of size 0 included (their reduction is the op's identity).
// (An If per axis would do, but If before 11 needs both branches' shapes
// equal.) Slice takes run-time bounds from opset 10.
absl::Status ReduceEachAxis(AdapterContext& ctx) {
  const std::string x = ctx.node.input(0);
  const std::string axes = ctx.node.input(1);
  const int64_t rank = RankOf(ctx, x);
  const int32_t elem = ElemOf(ctx, x);
  if (rank < 0 || elem == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("input '", axes, "' (axes) is not a constant, and ", ctx.to.Label(),
                     " needs it as an attribute (the ", rank < 0 ? "rank" : "element type", " of '",
                     x, "', which reducing axis by axis needs, is unknown)"));
  }
  const onnx::AttributeProto* keep = FindAttribute(ctx.node, "keepdims");
  const onnx::AttributeProto* noop = FindAttribute(ctx.node, "noop_with_empty_axes");
  const bool keepdims = keep == nullptr || keep->i() != 0;
  const bool noop_if_empty = noop != nullptr && noop->i() != 0;
  std::vector<int64_t> every_axis;
  for (int64_t i = 0; i < rank; ++i) every_axis.push_back(i);
  Composer compose(ctx);
  std::vector<int64_t> from_the_back;
  for (int64_t i = 0; i < rank; ++i) from_the_back.push_back(i - rank);
  OC_ASSIGN_OR_RETURN(std::string zero_scalar, compose.Ints({0}, /*scalar=*/true));
  OC_ASSIGN_OR_RETURN(std::string all_axes, compose.Ints(every_axis));
  OC_ASSIGN_OR_RETURN(std::string all_axes_back, compose.Ints(from_the_back));
  // flags[i]: some axis is i or i - R. Ops that take int64 since opset 7
  // (Equal, Or, Cast, ReduceSum with constant axes, Gather, If), so that
  // the composition converts further down.
  OC_ASSIGN_OR_RETURN(std::string column, compose.BeforeOverAxes("Unsqueeze", axes, {1}));
  std::string hits =
      compose.Before("Cast",
                     {compose.Before("Or", {compose.Before("Equal", {column, all_axes}),
                                            compose.Before("Equal", {column, all_axes_back})})},
                     {IntAttribute("to", TensorProto::INT64)});
  OC_ASSIGN_OR_RETURN(std::string hit_count, compose.BeforeOverAxes("ReduceSum", hits, {0},
                                                                    {IntAttribute("keepdims", 0)}));
  std::string flags = compose.Before("Cast", {hit_count}, {IntAttribute("to", TensorProto::BOOL)});
  if (!noop_if_empty) {
    std::string empty = compose.Before("Equal", {compose.Before("Size", {axes}), zero_scalar});
    flags = compose.Before("Or", {flags, empty});
  }
  const std::string kind = ctx.node.op_type();
  OC_ASSIGN_OR_RETURN(std::string one, compose.Ints({1}));
  std::string reduced = x;
  for (int64_t i = 0; i < rank; ++i) {
    OC_ASSIGN_OR_RETURN(std::string index, compose.Ints({i}));
    onnx::AttributeProto axis_list;
    axis_list.set_name("axes");
    axis_list.set_type(onnx::AttributeProto::INTS);
    axis_list.add_ints(i);
    // [reduction; tensor] along axis i, then the reduction (start 0, end 1)
    // where flagged, else the tensor (start 1, end 1 + size).
    std::string both =
        compose.Before("Concat", {compose.Before(kind, {reduced}, {axis_list}), reduced},
                       {IntAttribute("axis", i)});
    std::string keep = compose.Before(
        "Sub", {one, compose.Before("Cast", {compose.Before("Gather", {flags, index})},
                                    {IntAttribute("to", TensorProto::INT64)})});
    std::string size = compose.Before("Gather", {compose.Before("Shape", {reduced}), index});
    std::string end = compose.Before("Add", {one, compose.Before("Mul", {size, keep})});
    reduced = compose.Before("Slice", {both, keep, end, index});
  }
  ctx.node.clear_attribute();
  ctx.node.clear_input();
  ctx.node.add_input(reduced);
  if (keepdims) {
    ctx.node.set_op_type("Identity");
  } else {
    std::string shape = compose.Before("Shape", {reduced});
    std::string kept = compose.Before("Compress", {shape, compose.Before("Not", {flags})},
                                      {IntAttribute("axis", 0)});
    ctx.node.set_op_type("Reshape");
    ctx.node.add_input(kept);
  }
  ctx.changes.push_back(
      {"node-replaced",
       absl::StrCat(kind, " -> an If per axis (", rank, ") reducing it where the axes '", axes,
                    "' (known only at run time) name it",
                    keepdims ? "" : ", then a Reshape dropping the reduced axes")});
  return absl::OkStatus();
}

}  // namespace

absl::Status ReduceAxesAtRunTime(AdapterContext& ctx) {
  for (const char* op : kPerAxisReductions) {
    if (ctx.from.name == op) return ReduceEachAxis(ctx);
  }
  const ReduceComposition* row = nullptr;
  for (const ReduceComposition& r : kReduceCompositions) {
    if (ctx.from.name == r.op) row = &r;
  }
  const std::string axes = ctx.node.input(1);
  if (row == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "input '", axes, "' (axes) is not a constant, and ", ctx.to.Label(),
        " needs it as an attribute (", ctx.from.name, " has no form through ReduceSum-13)"));
  }
  const std::string x = ctx.node.input(0);
  int32_t elem = ElemOf(ctx, x);
  if (row->float_only && !IsFloat(elem)) {
    return absl::FailedPreconditionError(
        absl::StrCat("input '", axes, "' (axes) is not a constant, and ", ctx.from.name,
                     " through ReduceSum-13 needs a float type; '", x, "' is ",
                     elem == 0 ? "of an unknown type" : "not float"));
  }
  const onnx::AttributeProto* noop = FindAttribute(ctx.node, "noop_with_empty_axes");
  if (noop != nullptr && noop->i() != 0 && !row->noop_is_identity) {
    return absl::FailedPreconditionError(absl::StrCat(
        "input '", axes, "' (axes) is not a constant and noop_with_empty_axes = 1: ", ctx.from.name,
        " then returns X unchanged for empty axes, which ReduceSum-13 of ",
        kBeforeText[static_cast<int>(row->before)], " cannot"));
  }
  Composer compose(ctx);
  switch (row->before) {
    case Before::kNone:
      break;
    case Before::kAbs:
      ctx.node.set_input(0, compose.Before("Abs", {x}));
      break;
    case Before::kSquare:
      ctx.node.set_input(0, compose.Before("Mul", {x, x}));
      break;
    case Before::kExp:
      ctx.node.set_input(0, compose.Before("Exp", {x}));
      break;
  }
  ctx.node.set_op_type("ReduceSum");
  if (row->after != After::kNone) {
    const std::string output = ctx.node.output(0);
    const std::string sum = ctx.rewriter.DetachOutput(0);
    switch (row->after) {
      case After::kNone:
        break;
      case After::kSqrt:
        compose.After("Sqrt", {sum}, output);
        break;
      case After::kLog:
        compose.After("Log", {sum}, output);
        break;
      case After::kDivideByCount: {
        // count = Size(X) / Size(sum): the product of the reduced axes'
        // sizes for any axes, empty ones (all or none) included.
        OC_ASSIGN_OR_RETURN(std::string zero, compose.Ints({0}, /*scalar=*/true));
        std::string whole = compose.After("Size", {x});
        // (1 where the sum is empty, and so the mean: no division by 0.)
        std::string sum_size = compose.After("Size", {sum});
        std::string kept = compose.After(
            "Add", {sum_size, compose.After("Cast", {compose.After("Equal", {sum_size, zero})}, "",
                                            {IntAttribute("to", TensorProto::INT64)})});
        std::string count = compose.After("Div", {whole, kept});
        std::string typed = compose.After("Cast", {count}, "", {IntAttribute("to", elem)});
        compose.After("Div", {sum, typed}, output);
        break;
      }
    }
  }
  ctx.changes.push_back(
      {"node-replaced",
       absl::StrCat(ctx.from.name, " -> ReduceSum of ", kBeforeText[static_cast<int>(row->before)],
                    kAfterText[static_cast<int>(row->after)], ": axes '", axes,
                    "' are known only at run time")});
  if (IsFloat(elem)) ctx.changes.push_back({kRounding, row->rounding});
  return absl::OkStatus();
}

absl::Status ClipBoundsAtRunTime(AdapterContext& ctx) {
  const bool low = AtRunTime(ctx, 1);
  const bool high = AtRunTime(ctx, 2);
  const bool constant_low = Given(ctx, 1) && !low;
  const bool constant_high = Given(ctx, 2) && !high;
  const std::string x = ctx.node.input(0);
  const std::string low_name = low ? ctx.node.input(1) : "";
  const std::string high_name = high ? ctx.node.input(2) : "";
  Composer compose(ctx);
  if (!constant_low && !constant_high) {
    // No bound left for Clip: the node becomes the Max (or the Min).
    ctx.node.clear_input();
    ctx.node.add_input(x);
    ctx.node.add_input(low ? low_name : high_name);
    ctx.node.set_op_type(low ? "Max" : "Min");
    if (low && high) {
      const std::string output = ctx.node.output(0);
      compose.After("Min", {ctx.rewriter.DetachOutput(0), high_name}, output);
    }
    ctx.changes.push_back(
        {"node-replaced",
         absl::StrCat("Clip -> ", low ? absl::StrCat("Max with '", low_name, "'") : "",
                      low && high ? ", then " : "",
                      high ? absl::StrCat("Min with '", high_name, "'") : "",
                      ": the bounds are known only at run time")});
    return absl::OkStatus();
  }
  if (low) {
    ctx.node.set_input(0, compose.Before("Max", {x, low_name}));
    ctx.node.set_input(1, "");
    ctx.changes.push_back(
        {"node-inserted", absl::StrCat("Max with min '", low_name, "', known only at run time")});
  }
  if (high) {
    const std::string output = ctx.node.output(0);
    compose.After("Min", {ctx.rewriter.DetachOutput(0), high_name}, output);
    ctx.node.set_input(2, "");
    ctx.changes.push_back(
        {"node-inserted", absl::StrCat("Min with max '", high_name, "', known only at run time")});
  }
  return absl::OkStatus();
}

namespace {

// The largest axis whose reversed indices are written out as a constant.
constexpr int64_t kMaxReversedIndices = 1 << 16;

}  // namespace

absl::Status ArgSelectLastIndex(AdapterContext& ctx) {
  RemoveAttribute(ctx.node, "select_last_index");
  const onnx::AttributeProto* axis_attribute = FindAttribute(ctx.node, "axis");
  const int64_t axis = axis_attribute != nullptr ? axis_attribute->i() : 0;
  const std::string x = ctx.node.input(0);
  const onnx::TensorShapeProto* shape = ShapeOf(ctx, x);
  int64_t size = -1;
  if (shape != nullptr) {
    int64_t a = axis < 0 ? axis + shape->dim_size() : axis;
    if (a >= 0 && a < shape->dim_size() && shape->dim(a).has_dim_value()) {
      size = shape->dim(a).dim_value();
    }
  }
  Composer compose(ctx);
  std::string reversed;
  std::string last;  // size - 1
  if (size > 0 && size <= kMaxReversedIndices) {
    std::vector<int64_t> indices;
    for (int64_t i = size - 1; i >= 0; --i) indices.push_back(i);
    OC_ASSIGN_OR_RETURN(std::string index_name, compose.Ints(indices));
    reversed = compose.Before("Gather", {x, index_name}, {IntAttribute("axis", axis)});
    OC_ASSIGN_OR_RETURN(last, compose.Ints({size - 1}, /*scalar=*/true));
    ctx.changes.push_back(
        {"node-inserted", absl::StrCat("Gather reversing axis ", axis, " (", size, ")")});
  } else {
    OC_ASSIGN_OR_RETURN(std::string starts, compose.Ints({-1}));
    OC_ASSIGN_OR_RETURN(std::string ends, compose.Ints({std::numeric_limits<int64_t>::min()}));
    OC_ASSIGN_OR_RETURN(std::string axes, compose.Ints({axis}));
    OC_ASSIGN_OR_RETURN(std::string steps, compose.Ints({-1}));
    reversed = compose.Before("Slice", {x, starts, ends, axes, steps});
    OC_ASSIGN_OR_RETURN(std::string axis_name, compose.Ints({axis}, /*scalar=*/true));
    OC_ASSIGN_OR_RETURN(std::string one, compose.Ints({1}, /*scalar=*/true));
    std::string dim = compose.Before("Gather", {compose.Before("Shape", {x}), axis_name});
    last = compose.Before("Sub", {dim, one});
    ctx.changes.push_back(
        {"node-inserted", absl::StrCat("Slice reversing axis ", axis, " (its size from Shape)")});
  }
  ctx.node.set_input(0, reversed);
  const std::string output = ctx.node.output(0);
  compose.After("Sub", {last, ctx.rewriter.DetachOutput(0)}, output);
  ctx.changes.push_back(
      {"node-inserted", "Sub mapping the index in the reversed input back (size - 1 - index)"});
  return absl::OkStatus();
}

absl::Status SplitSizesAtRunTime(AdapterContext& ctx, int64_t axis, int64_t parts) {
  Composer compose(ctx);
  const std::string x = ctx.node.input(0);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < parts; ++i) order.push_back(i);
  OC_ASSIGN_OR_RETURN(std::string axis_name, compose.Ints({axis}));
  OC_ASSIGN_OR_RETURN(std::string rest, compose.Ints({parts - 1}));
  OC_ASSIGN_OR_RETURN(std::string count, compose.Ints({parts}));
  OC_ASSIGN_OR_RETURN(std::string order_name, compose.Ints(order));
  OC_ASSIGN_OR_RETURN(std::string zero, compose.Ints({0}, /*scalar=*/true));
  // Part i: what is left after i chunks, between 0 and a chunk. That is the
  // chunk for all but the last part, and the rest for the last, wherever
  // Split-18 defines them; where the size leaves parts empty (5 in 4), they
  // are empty rather than negative.
  std::string size = compose.Before("Gather", {compose.Before("Shape", {x}), axis_name});
  std::string chunk = compose.Before("Div", {compose.Before("Add", {size, rest}), count});
  std::string left = compose.Before("Sub", {size, compose.Before("Mul", {chunk, order_name})});
  std::string split = compose.Before("Max", {compose.Before("Min", {left, chunk}), zero});
  while (ctx.node.input_size() < 2) ctx.node.add_input("");
  ctx.node.set_input(1, split);
  ctx.changes.push_back(
      {"attribute-to-input",
       absl::StrCat("num_outputs = ", parts, " written as sizes '", split,
                    "' computed from the shape (ceil(size / ", parts, ") each, the rest last)")});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters

namespace onnxconvert::adapters {
namespace {

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
    ctx.changes.push_back({"node-replaced", absl::StrCat("ConstantOfShape -> Identity of '", filled,
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
    ctx.changes.push_back({"node-replaced",
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
  ctx.changes.push_back({"node-replaced", absl::StrCat("ConstantOfShape -> Tile of the value to "
                                                       "the shape '", shape_name, "'")});
  return absl::OkStatus();
}

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
      {"node-replaced", "Equal on floats -> not Less, not Greater and neither NaN"});
  return absl::OkStatus();
}

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
      {"node-replaced", absl::StrCat("Shrink -> Clip(x, min ", lambd, ") + Clip(x, max ", -lambd,
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

constexpr RewriteRow kCompositions[] = {
    {"Shrink", 9, 0, ShrinkBelow9, "two Clips and the jump at the edges"},
    {"ConstantOfShape", 9, 0, ConstantOfShapeBelow9, "a constant, or the value tiled"},
    {"Equal", 11, 7, EqualOnFloats, "floats compared through Less and Greater"},
};

}  // namespace

void RegisterCompositionAdapters(RewriteTable& table) { RegisterRows(table, "", kCompositions); }

}  // namespace onnxconvert::adapters

namespace onnxconvert::adapters {
namespace {

// The indices Slice takes along an axis of `dim` elements from `start` to
// `end` by `step` (clamped as Slice-10 clamps them).
std::vector<int64_t> SliceIndices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start = start < -dim ? (step > 0 ? 0 : -1) : start + dim;
  if (end < 0) end = end < -dim ? -1 : end + dim;
  std::vector<int64_t> indices;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    for (int64_t i = start; i < end; i += step) indices.push_back(i);
  } else {
    start = std::clamp<int64_t>(start, -1, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    for (int64_t i = start; i > end; i += step) indices.push_back(i);
  }
  return indices;
}

}  // namespace

absl::Status SliceStepsByGather(AdapterContext& ctx) {
  auto ints = [&](int i) -> std::optional<std::vector<int64_t>> {
    if (!Given(ctx, i)) return std::nullopt;
    const TensorProto* value = ctx.rewriter.ConstantOf(ctx.node.input(i));
    return value == nullptr ? std::nullopt : IntValues(*value);
  };
  std::optional<std::vector<int64_t>> steps = ints(4);
  if (!steps) {
    return absl::FailedPreconditionError(absl::StrCat(
        "input #4 ('", ctx.node.input(4), "') has no place in ", ctx.to.Label(),
        ", and its steps are not known integers"));
  }
  std::optional<std::vector<int64_t>> starts = ints(1);
  std::optional<std::vector<int64_t>> ends = ints(2);
  std::optional<std::vector<int64_t>> axes = ints(3);
  const std::string data = ctx.node.input(0);
  const onnx::TensorShapeProto* shape = ShapeOf(ctx, data);
  auto refuse = [&](absl::string_view why) {
    return absl::FailedPreconditionError(absl::StrCat(
        "steps '", ctx.node.input(4), "' are not all 1, and ", ctx.to.Label(),
        " has no steps; writing the slice as a Gather needs ", why));
  };
  if (!starts || !ends || (Given(ctx, 3) && !axes)) {
    return refuse("constant starts, ends and axes");
  }
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (shape == nullptr || starts->size() != ends->size() || axes->size() != starts->size() ||
      steps->size() != starts->size()) {
    return refuse("the rank of the data");
  }
  const int64_t rank = shape->dim_size();
  Composer compose(ctx);
  std::string gathered = data;
  std::vector<int64_t> kept_starts, kept_ends, kept_axes;
  for (size_t i = 0; i < axes->size(); ++i) {
    int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
    if (axis < 0 || axis >= rank || (*steps)[i] == 0) return refuse("axes within the rank");
    if ((*steps)[i] == 1) {
      kept_starts.push_back((*starts)[i]);
      kept_ends.push_back((*ends)[i]);
      kept_axes.push_back(axis);
      continue;
    }
    const onnx::TensorShapeProto::Dimension& dim = shape->dim(static_cast<int>(axis));
    if (!dim.has_dim_value() || dim.dim_value() > kMaxReversedIndices) {
      return refuse(absl::StrCat("the size of axis ", axis, ", which is unknown"));
    }
    std::vector<int64_t> indices =
        SliceIndices(dim.dim_value(), (*starts)[i], (*ends)[i], (*steps)[i]);
    OC_ASSIGN_OR_RETURN(std::string index_name, compose.Ints(indices));
    gathered = compose.Before("Gather", {gathered, index_name}, {IntAttribute("axis", axis)});
    ctx.changes.push_back({"node-inserted", absl::StrCat("Gather taking axis ", axis, " by step ",
                                                         (*steps)[i], " (", indices.size(),
                                                         " indices)")});
  }
  ctx.node.mutable_input()->DeleteSubrange(1, ctx.node.input_size() - 1);
  ctx.node.set_input(0, gathered);
  if (kept_axes.empty()) {
    // Every sliced axis is gathered: what is left passes the data on.
    ctx.node.set_op_type("Identity");
    return absl::OkStatus();
  }
  // The unit-step axes, in Slice-1's attributes.
  AddIntsAttribute(ctx.node, "starts", kept_starts);
  AddIntsAttribute(ctx.node, "ends", kept_ends);
  AddIntsAttribute(ctx.node, "axes", kept_axes);
  ctx.changes.push_back({"input-to-attribute", "starts, ends and axes of the unit-step axes"});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters

namespace onnxconvert::adapters {

bool LastAxisByReshapeApplies(const AdapterContext& ctx) {
  if ((ctx.from.name != "Unsqueeze" && ctx.from.name != "Squeeze") || ctx.to_opset < 5) {
    return false;
  }
  const onnx::AttributeProto* axes = FindAttribute(ctx.node, "axes");
  return axes != nullptr && axes->ints_size() == 1 && axes->ints(0) == -1 &&
         ctx.node.input_size() == 1 && RankOf(ctx, ctx.node.input(0)) < 0;
}

absl::Status LastAxisByReshape(AdapterContext& ctx) {
  Composer compose(ctx);
  const std::string x = ctx.node.input(0);
  std::string shape = compose.Before("Shape", {x});
  std::string target;
  if (ctx.from.name == "Unsqueeze") {
    OC_ASSIGN_OR_RETURN(std::string one, compose.Ints({1}));
    target = compose.Before("Concat", {shape, one}, {IntAttribute("axis", 0)});
  } else if (ctx.to_opset >= 10) {
    OC_ASSIGN_OR_RETURN(std::string start, compose.Ints({0}));
    OC_ASSIGN_OR_RETURN(std::string end, compose.Ints({-1}));
    target = compose.Before("Slice", {shape, start, end});
  } else {
    onnx::AttributeProto starts, ends;
    starts.set_name("starts");
    starts.set_type(onnx::AttributeProto::INTS);
    starts.add_ints(0);
    ends.set_name("ends");
    ends.set_type(onnx::AttributeProto::INTS);
    ends.add_ints(-1);
    target = compose.Before("Slice", {shape}, {starts, ends});
  }
  std::string op(ctx.from.name);
  ctx.node.set_op_type("Reshape");
  ctx.node.clear_attribute();
  ctx.node.add_input(target);
  ctx.changes.push_back(
      {"node-replaced", absl::StrCat(op, " of the last axis of a value of unknown rank -> ",
                                     "Reshape to its Shape with ",
                                     op == "Unsqueeze" ? "a 1 appended" : "the last dim dropped")});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters

namespace onnxconvert::adapters {

bool SameDim(const onnx::TensorShapeProto::Dimension& a,
             const onnx::TensorShapeProto::Dimension& b) {
  return (a.has_dim_value() && b.has_dim_value() && a.dim_value() == b.dim_value()) ||
         (a.has_dim_param() && b.has_dim_param() && !a.dim_param().empty() &&
          a.dim_param() == b.dim_param());
}

namespace {

// Whether a value of `shape` broadcasts to `full` with nothing but copies:
// rank at most full's, each dim (aligned at the back) 1 or equal to full's.
bool BroadcastsTo(const onnx::TensorShapeProto& shape, const onnx::TensorShapeProto& full) {
  int shift = full.dim_size() - shape.dim_size();
  if (shift < 0) return false;
  for (int d = 0; d < shape.dim_size(); ++d) {
    const auto& dim = shape.dim(d);
    if (!(dim.has_dim_value() && dim.dim_value() == 1) && !SameDim(dim, full.dim(d + shift))) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::Status TileToBroadcastShape(AdapterContext& ctx) {
  // The input whose shape the others broadcast to.
  int full = -1;
  for (int i = 0; i < ctx.node.input_size() && full < 0; ++i) {
    const onnx::TensorShapeProto* candidate = ShapeOf(ctx, ctx.node.input(i));
    if (candidate == nullptr) continue;
    bool all = true;
    for (int j = 0; j < ctx.node.input_size() && all; ++j) {
      const onnx::TensorShapeProto* shape = ShapeOf(ctx, ctx.node.input(j));
      all = ctx.node.input(j) == ctx.node.input(i) ||
            (shape != nullptr && BroadcastsTo(*shape, *candidate));
    }
    if (all) full = i;
  }
  if (full < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        ctx.to.Label(), " does not broadcast, and the shapes of the inputs of ", ctx.from.Label(),
        " are not known to be equal, nor is one of them known to be the shape the others "
        "broadcast to"));
  }
  const std::string target = ctx.node.input(full);
  const onnx::TensorShapeProto target_shape = *ShapeOf(ctx, target);
  const int rank = target_shape.dim_size();
  bool known = true;
  for (const auto& dim : target_shape.dim()) known = known && dim.has_dim_value();
  Composer compose(ctx);
  std::string shape_of_target;  // Shape(target), made once when needed
  for (int i = 0; i < ctx.node.input_size(); ++i) {
    const std::string input = ctx.node.input(i);
    if (input == target) continue;
    const onnx::TensorShapeProto shape = *ShapeOf(ctx, input);
    int shift = rank - shape.dim_size();
    bool same = shift == 0;
    for (int d = 0; same && d < rank; ++d) same = SameDim(shape.dim(d), target_shape.dim(d));
    if (same) continue;
    std::string aligned = input;
    if (shift > 0) {
      std::vector<int64_t> leading;
      for (int d = 0; d < shift; ++d) leading.push_back(d);
      OC_ASSIGN_OR_RETURN(aligned, compose.BeforeOverAxes("Unsqueeze", input, leading));
    }
    // Repeat an axis where the input has 1 and the target another size.
    std::vector<int64_t> mask(rank, 0);
    for (int d = 0; d < rank; ++d) {
      mask[d] = d < shift || !SameDim(shape.dim(d - shift), target_shape.dim(d)) ? 1 : 0;
    }
    std::string repeats;
    if (known) {
      std::vector<int64_t> values;
      for (int d = 0; d < rank; ++d) values.push_back(mask[d] ? target_shape.dim(d).dim_value() : 1);
      OC_ASSIGN_OR_RETURN(repeats, compose.Ints(values));
    } else {
      if (shape_of_target.empty()) shape_of_target = compose.Before("Shape", {target});
      std::vector<int64_t> keep;
      for (int64_t m : mask) keep.push_back(1 - m);
      OC_ASSIGN_OR_RETURN(std::string mask_name, compose.Ints(mask));
      OC_ASSIGN_OR_RETURN(std::string keep_name, compose.Ints(keep));
      repeats = compose.Before("Add", {compose.Before("Mul", {shape_of_target, mask_name}),
                                       keep_name});
    }
    ctx.node.set_input(i, compose.Before("Tile", {aligned, repeats}));
    ctx.changes.push_back({"node-inserted", absl::StrCat("Tile of '", input, "' to the shape of '",
                                                         target, "' (", ctx.to.Label(),
                                                         " does not broadcast)")});
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters

namespace onnxconvert::adapters {

namespace {

// Where output position `o` of an axis of `n` inputs upsampled by `s`
// samples with half-pixel centres, computed in float as the runtime's
// bilinear kernel does: the lower and upper input index and their weights
// (the distances to the other one; 1/2 each where the edge clamps them
// together).
struct LinearTap {
  int64_t low, high;
  float low_weight, high_weight;
};

LinearTap TapAt(int64_t o, int64_t n, int64_t s) {
  float at = (static_cast<float>(o) + 0.5f) / static_cast<float>(s) - 0.5f;
  at = std::max(0.0f, std::min(at, static_cast<float>(n - 1)));
  int64_t low = std::min(static_cast<int64_t>(at), n - 1);
  int64_t high = std::min(low + 1, n - 1);
  float to_low = std::fabs(at - static_cast<float>(low));
  float to_high = std::fabs(at - static_cast<float>(high));
  if (low == high) to_low = to_high = 0.5f;
  return {low, high, to_high, to_low};
}

// A float tensor of `dims` holding `values`.
TensorProto FloatsOf(std::vector<int64_t> dims, const std::vector<float>& values) {
  TensorProto tensor;
  tensor.set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) tensor.add_dims(d);
  for (float v : values) tensor.add_float_data(v);
  return tensor;
}

}  // namespace

absl::Status HalfPixelLinearUpscale(AdapterContext& ctx, absl::Span<const int64_t> factors) {
  const std::string x = ctx.node.input(0);
  const onnx::TensorShapeProto* shape = ShapeOf(ctx, x);
  const int rank = static_cast<int>(factors.size());
  auto refuse = [&](absl::string_view why) {
    return absl::FailedPreconditionError(absl::StrCat(
        ctx.to.Label(), " samples asymmetrically; writing half-pixel bilinear upsampling in ops "
        "of the target needs ", why));
  };
  if (shape == nullptr || shape->dim_size() != rank || rank < 2 ||
      ElemOf(ctx, x) != TensorProto::FLOAT || ctx.to_opset < 7) {
    return refuse("a float input of known rank");
  }
  for (int i = 0; i + 2 < rank; ++i) {
    if (factors[i] != 1) return refuse("the last two axes alone to be scaled");
  }
  std::vector<int64_t> dims;
  for (const auto& dim : shape->dim()) {
    if (!dim.has_dim_value() || dim.dim_value() <= 0) return refuse("the input's sizes");
    dims.push_back(dim.dim_value());
  }
  const int h_axis = rank - 2, w_axis = rank - 1;
  const int64_t h = dims[h_axis], w = dims[w_axis], sh = factors[h_axis], sw = factors[w_axis];
  if (h * w * sh * sw > (int64_t{1} << 22)) return refuse("a smaller output (weights per pixel)");
  Composer compose(ctx);
  // Per output phase (py, px), every output pixel of the phase is, as in
  // the runtime's kernel, (wx_hi*wy_hi)*X[y_lo][x_lo] + (wx_lo*wy_hi)*
  // X[y_lo][x_hi] + (wx_hi*wy_lo)*X[y_hi][x_lo] + (wx_lo*wy_lo)*X[y_hi][x_hi]
  // summed left to right, with the weight products as constants.
  std::vector<std::string> rows;  // one per py: [.., h, w * sw]
  for (int64_t py = 0; py < sh; ++py) {
    std::vector<LinearTap> ys, xs;
    for (int64_t k = 0; k < h; ++k) ys.push_back(TapAt(k * sh + py, h, sh));
    std::vector<int64_t> y_low, y_high;
    for (const LinearTap& t : ys) {
      y_low.push_back(t.low);
      y_high.push_back(t.high);
    }
    OC_ASSIGN_OR_RETURN(std::string y_low_name, compose.Ints(y_low));
    OC_ASSIGN_OR_RETURN(std::string y_high_name, compose.Ints(y_high));
    std::string rows_low = compose.Before("Gather", {x, y_low_name}, {IntAttribute("axis", h_axis)});
    std::string rows_high =
        compose.Before("Gather", {x, y_high_name}, {IntAttribute("axis", h_axis)});
    std::vector<std::string> phases;
    for (int64_t px = 0; px < sw; ++px) {
      std::vector<int64_t> x_low, x_high;
      std::vector<LinearTap> taps;
      for (int64_t j = 0; j < w; ++j) {
        taps.push_back(TapAt(j * sw + px, w, sw));
        x_low.push_back(taps.back().low);
        x_high.push_back(taps.back().high);
      }
      OC_ASSIGN_OR_RETURN(std::string x_low_name, compose.Ints(x_low));
      OC_ASSIGN_OR_RETURN(std::string x_high_name, compose.Ints(x_high));
      const onnx::AttributeProto along_w = IntAttribute("axis", w_axis);
      std::string corners[4] = {
          compose.Before("Gather", {rows_low, x_low_name}, {along_w}),
          compose.Before("Gather", {rows_low, x_high_name}, {along_w}),
          compose.Before("Gather", {rows_high, x_low_name}, {along_w}),
          compose.Before("Gather", {rows_high, x_high_name}, {along_w})};
      std::vector<float> weights[4];
      for (int64_t k = 0; k < h; ++k) {
        for (int64_t j = 0; j < w; ++j) {
          const LinearTap& ty = ys[k];
          const LinearTap& tx = taps[j];
          weights[0].push_back(tx.low_weight * ty.low_weight);
          weights[1].push_back(tx.high_weight * ty.low_weight);
          weights[2].push_back(tx.low_weight * ty.high_weight);
          weights[3].push_back(tx.high_weight * ty.high_weight);
        }
      }
      std::string sum;
      for (int c = 0; c < 4; ++c) {
        OC_ASSIGN_OR_RETURN(std::string weight,
                            ctx.rewriter.AddConstant(FloatsOf({h, w}, weights[c])));
        std::string term = compose.Before("Mul", {weight, corners[c]});
        sum = c == 0 ? term : compose.Before("Add", {sum, term});
      }
      OC_ASSIGN_OR_RETURN(std::string lifted, compose.BeforeOverAxes("Unsqueeze", sum,
                                                                     {w_axis + 1}));
      phases.push_back(lifted);
    }
    std::vector<int64_t> row_dims = dims;
    row_dims[w_axis] = w * sw;
    OC_ASSIGN_OR_RETURN(std::string row_shape, compose.Ints(row_dims));
    std::string row = compose.Before(
        "Reshape", {compose.Before("Concat", phases, {IntAttribute("axis", w_axis + 1)}),
                    row_shape});
    OC_ASSIGN_OR_RETURN(std::string lifted, compose.BeforeOverAxes("Unsqueeze", row,
                                                                   {h_axis + 1}));
    rows.push_back(lifted);
  }
  std::vector<int64_t> out_dims = dims;
  out_dims[h_axis] = h * sh;
  out_dims[w_axis] = w * sw;
  OC_ASSIGN_OR_RETURN(std::string out_shape, compose.Ints(out_dims));
  std::string result = compose.Before(
      "Reshape", {compose.Before("Concat", rows, {IntAttribute("axis", h_axis + 1)}), out_shape});
  ctx.node.set_op_type("Identity");
  ctx.node.clear_input();
  ctx.node.add_input(result);
  ctx.node.clear_attribute();
  ctx.changes.push_back(
      {"node-replaced", absl::StrCat("Resize (bilinear, half-pixel, x", sh, " x", sw,
                                     ") -> per output phase, the four neighbours (Gather) "
                                     "weighted as the runtime's kernel weighs them, interleaved")});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
