// Shape, Split and Pad across the versions that changed their attributes:
// Shape's start/end (15), Split's num_outputs (18), and Pad's axes input
// (18). (Negative axes below 11 are resolved for every op in
// negative_axes.cc.)

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/composer.h"
#include "adapters/compositions.h"
#include "adapters/families.h"
#include "base/status_macros.h"

namespace onnxconvert::adapters {
namespace {

constexpr int64_t kToTheEnd = std::numeric_limits<int64_t>::max();

}  // namespace

// Shape<start, end>(X) -> Slice(Shape(X), [start], [end], [0]).
absl::Status ShapeRangeToSlice(AdapterContext& ctx) {
  const onnx::AttributeProto* start = FindAttribute(ctx.node, "start");
  const onnx::AttributeProto* end = FindAttribute(ctx.node, "end");
  int64_t first = start != nullptr ? start->i() : 0;
  int64_t last = end != nullptr ? end->i() : kToTheEnd;
  RemoveAttribute(ctx.node, "start");
  RemoveAttribute(ctx.node, "end");
  if (first == 0 && last == kToTheEnd) return absl::OkStatus();
  onnx::NodeProto slice;
  slice.set_op_type("Slice");
  slice.set_name(ctx.rewriter.FreshName(ctx.node.name().empty() ? "Shape_range" : ctx.node.name()));
  const std::string original = ctx.node.output(0);
  slice.add_input(ctx.rewriter.DetachOutput(0));
  for (int64_t value : {first, last, int64_t{0}}) {
    absl::StatusOr<std::string> name = ctx.rewriter.AddConstant(Int64Tensor({value}));
    if (!name.ok()) return name.status();
    slice.add_input(*name);
  }
  slice.add_output(original);
  ctx.rewriter.InsertAfter(std::move(slice));
  ctx.changes.push_back(
      {ChangeKind::kNodeInserted,
       absl::StrCat("Slice [", first, ", ", last == kToTheEnd ? "end" : absl::StrCat(last),
                    ") of the shape, for start/end")});
  return absl::OkStatus();
}

namespace {

bool HasSplitInput(const onnx::NodeProto& node) {
  return node.input_size() > 1 && !node.input(1).empty();
}

}  // namespace

// Split-13 without `split` divides equally among its outputs; Split-18 says
// so with num_outputs.
absl::Status SplitNumOutputsUp(AdapterContext& ctx) {
  if (HasSplitInput(ctx.node)) return absl::OkStatus();
  AddIntAttribute(ctx.node, "num_outputs", ctx.node.output_size());
  ctx.changes.push_back(
      {ChangeKind::kAttributeSet, absl::StrCat("num_outputs = ", ctx.node.output_size())});
  return absl::OkStatus();
}

// num_outputs -> nothing when the axis divides evenly, else explicit sizes
// (Split-18 makes the last part smaller; Split-13 would need equal parts),
// computed in the graph when the axis size is unknown.
absl::Status SplitNumOutputsDown(AdapterContext& ctx) {
  const onnx::AttributeProto* count = FindAttribute(ctx.node, "num_outputs");
  if (count == nullptr) return absl::OkStatus();
  int64_t parts = count->i();
  RemoveAttribute(ctx.node, "num_outputs");
  if (HasSplitInput(ctx.node)) return absl::OkStatus();
  const onnx::TensorShapeProto* shape = ShapeOf(ctx, ctx.node.input(0));
  const onnx::AttributeProto* axis_attribute = FindAttribute(ctx.node, "axis");
  int64_t axis = axis_attribute != nullptr ? axis_attribute->i() : 0;
  if (shape != nullptr && axis < 0) axis += shape->dim_size();
  if (parts > 0 && (shape == nullptr || axis < 0 || axis >= shape->dim_size() ||
                    !shape->dim(axis).has_dim_value())) {
    return SplitSizesAtRunTime(ctx, axis, parts);
  }
  if (parts <= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("num_outputs = ", parts, " gives no parts for ", ctx.to.Label()));
  }
  int64_t size = shape->dim(axis).dim_value();
  if (size % parts == 0) return absl::OkStatus();
  int64_t chunk = (size + parts - 1) / parts;
  std::vector<int64_t> sizes;
  for (int64_t left = size; left > 0; left -= chunk) sizes.push_back(std::min(chunk, left));
  if (static_cast<int64_t>(sizes.size()) != parts) {
    return absl::FailedPreconditionError(absl::StrCat(
        "axis ", axis, " of size ", size, " splits into ", sizes.size(), " parts of ", chunk,
        ", not ", parts, "; ", ctx.to.Label(), " cannot express the empty parts"));
  }
  absl::StatusOr<std::string> name = ctx.rewriter.AddConstant(Int64Tensor(sizes));
  if (!name.ok()) return name.status();
  while (ctx.node.input_size() < 2) ctx.node.add_input("");
  ctx.node.set_input(1, *name);
  ctx.changes.push_back({ChangeKind::kAttributeToInput,
                         absl::StrCat("num_outputs = ", parts, " written as sizes '", *name, "'")});
  return absl::OkStatus();
}

namespace {

// Pad-18 whose `axes` are known only at run time (the input's rank known):
// the pads scattered into zeros for every axis at the positions the axes
// name (a negative axis counted from the back), in the graph.
absl::Status PadAxesAtRunTime(AdapterContext& ctx, int64_t rank) {
  const std::string axes = ctx.node.input(3);
  Composer compose(ctx);
  OC_ASSIGN_OR_RETURN(std::string zero, compose.Ints({0}, /*scalar=*/true));
  OC_ASSIGN_OR_RETURN(std::string rank_name, compose.Ints({rank}, /*scalar=*/true));
  OC_ASSIGN_OR_RETURN(std::string zeros, compose.Ints(std::vector<int64_t>(2 * rank, 0)));
  std::string negative = compose.Before("Cast", {compose.Before("Less", {axes, zero})},
                                        {IntAttribute("to", onnx::TensorProto::INT64)});
  std::string fixed =
      compose.Before("Add", {axes, compose.Before("Mul", {negative, rank_name})});
  std::string positions = compose.Before(
      "Concat", {fixed, compose.Before("Add", {fixed, rank_name})}, {IntAttribute("axis", 0)});
  ctx.node.set_input(1, compose.Before("ScatterElements", {zeros, positions, ctx.node.input(1)},
                                       {IntAttribute("axis", 0)}));
  ctx.node.mutable_input()->RemoveLast();
  ctx.changes.push_back({ChangeKind::kNodeInserted, absl::StrCat("pads for all ", rank,
                                                                 " axes scattered in "
                                                                 "at the axes '",
                                                                 axes, "' name")});
  return absl::OkStatus();
}

}  // namespace

// Pad-18's `axes` input names the axes `pads` covers; Pad-13 pads every
// axis: the pads are spread to the input's rank, 0 on the others.
absl::Status PadAxesToFullPads(AdapterContext& ctx) {
  if (ctx.node.input_size() < 4 || ctx.node.input(3).empty()) return absl::OkStatus();
  const std::string axes_name = ctx.node.input(3);
  const onnx::TensorProto* axes_value = ctx.rewriter.ConstantOf(axes_name);
  const onnx::TensorProto* pads_value =
      ctx.node.input_size() > 1 ? ctx.rewriter.ConstantOf(ctx.node.input(1)) : nullptr;
  std::optional<std::vector<int64_t>> axes = axes_value ? IntValues(*axes_value) : std::nullopt;
  std::optional<std::vector<int64_t>> pads = pads_value ? IntValues(*pads_value) : std::nullopt;
  int64_t rank = RankOf(ctx, ctx.node.input(0));
  if (!axes && rank >= 0) return PadAxesAtRunTime(ctx, rank);
  if (!axes || rank < 0 || (pads && pads->size() != 2 * axes->size())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pads over axes '", axes_name, "' need constant axes and a known rank of '",
        ctx.node.input(0), "' to be written for every axis, as ", ctx.to.Label(), " wants"));
  }
  if (!pads) {
    // Pads known at run time: zeros, the given begins and ends scattered in.
    std::vector<int64_t> positions;
    for (int64_t axis : *axes) positions.push_back(axis < 0 ? axis + rank : axis);
    for (int64_t axis : *axes) positions.push_back((axis < 0 ? axis + rank : axis) + rank);
    absl::StatusOr<std::string> full = ScatterIntoConstant(
        ctx, Int64Tensor(std::vector<int64_t>(2 * rank, 0)), positions, ctx.node.input(1));
    if (!full.ok()) return full.status();
    ctx.node.set_input(1, *full);
    ctx.node.mutable_input()->RemoveLast();
    return absl::OkStatus();
  }
  std::vector<int64_t> full(2 * rank, 0);
  for (size_t k = 0; k < axes->size(); ++k) {
    int64_t axis = (*axes)[k] < 0 ? (*axes)[k] + rank : (*axes)[k];
    if (axis < 0 || axis >= rank) {
      return absl::FailedPreconditionError(
          absl::StrCat("axis ", (*axes)[k], " is out of range for rank ", rank));
    }
    full[axis] = (*pads)[k];
    full[axis + rank] = (*pads)[k + axes->size()];
  }
  absl::StatusOr<std::string> name = ctx.rewriter.AddConstant(Int64Tensor(full));
  if (!name.ok()) return name.status();
  ctx.node.set_input(1, *name);
  ctx.node.mutable_input()->RemoveLast();
  ctx.changes.push_back(
      {ChangeKind::kInputRemoved, absl::StrCat("axes folded into full pads '", *name, "'")});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
