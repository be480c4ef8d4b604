// Compositions: downgrades that write a node as several ops of the target
// version where the target cannot take what the node uses directly (see
// compositions.h): reductions with axes known at run time, Clip bounds
// known at run time, ArgMax/ArgMin selecting the last index, Split sizes
// at run time. Shape and layout compositions are in shape_compositions.cc,
// ops that did not exist yet in composed_ops.cc.

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
#include "adapters/adapter_helpers.h"
#include "adapters/composer.h"
#include "adapters/compositions.h"
#include "adapters/compositions_internal.h"
#include "adapters/rewrites.h"
#include "base/status_macros.h"

namespace onnxconvert::adapters {
namespace {

using compositions_internal::Given;
using compositions_internal::kMaxReversedIndices;
using compositions_internal::kRounding;
using onnx::TensorProto;

bool IsFloat(int32_t elem) {
  return elem == TensorProto::FLOAT || elem == TensorProto::DOUBLE ||
         elem == TensorProto::FLOAT16 || elem == TensorProto::BFLOAT16;
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
      {ChangeKind::kNodeReplaced,
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
      {ChangeKind::kNodeReplaced,
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
        {ChangeKind::kNodeReplaced,
         absl::StrCat("Clip -> ", low ? absl::StrCat("Max with '", low_name, "'") : "",
                      low && high ? ", then " : "",
                      high ? absl::StrCat("Min with '", high_name, "'") : "",
                      ": the bounds are known only at run time")});
    return absl::OkStatus();
  }
  if (low) {
    ctx.node.set_input(0, compose.Before("Max", {x, low_name}));
    ctx.node.set_input(1, "");
    ctx.changes.push_back({ChangeKind::kNodeInserted,
                           absl::StrCat("Max with min '", low_name, "', known only at run time")});
  }
  if (high) {
    const std::string output = ctx.node.output(0);
    compose.After("Min", {ctx.rewriter.DetachOutput(0), high_name}, output);
    ctx.node.set_input(2, "");
    ctx.changes.push_back({ChangeKind::kNodeInserted,
                           absl::StrCat("Min with max '", high_name, "', known only at run time")});
  }
  return absl::OkStatus();
}

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
        {ChangeKind::kNodeInserted, absl::StrCat("Gather reversing axis ", axis, " (", size, ")")});
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
    ctx.changes.push_back({ChangeKind::kNodeInserted,
                           absl::StrCat("Slice reversing axis ", axis, " (its size from Shape)")});
  }
  ctx.node.set_input(0, reversed);
  const std::string output = ctx.node.output(0);
  compose.After("Sub", {last, ctx.rewriter.DetachOutput(0)}, output);
  ctx.changes.push_back({ChangeKind::kNodeInserted,
                         "Sub mapping the index in the reversed input back (size - 1 - index)"});
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
      {ChangeKind::kAttributeToInput,
       absl::StrCat("num_outputs = ", parts, " written as sizes '", split,
                    "' computed from the shape (ceil(size / ", parts, ") each, the rest last)")});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
