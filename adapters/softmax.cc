// Softmax, LogSoftmax and Hardmax between opset 11 and 13: version 13 applies
// the op along one axis; earlier versions coerce the input to 2-D at `axis`
// and apply it over the flattened trailing dims. The two agree exactly when
// `axis` is the last axis, which is what exporters write; for other axes a
// downgrade swaps the axis last with Transposes, and an upgrade applies
// version 13 to a Flatten of the input, reshaped back.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/families.h"

namespace onnxconvert::adapters {
namespace {

// The node's `axis`, or the default of the version it binds to now.
int64_t AxisOf(const AdapterContext& ctx) {
  if (const onnx::AttributeProto* axis = FindAttribute(ctx.node, "axis")) return axis->i();
  const schema::AttrSpec* spec = ctx.from.FindAttr("axis");
  return spec != nullptr && spec->has_default ? spec->default_value.i : 1;
}

onnx::NodeProto Unary(AdapterContext& ctx, const char* op, const std::string& in,
                      const std::string& out) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(ctx.rewriter.FreshName(
      absl::StrCat(ctx.node.name().empty() ? "softmax" : ctx.node.name(), "_", op)));
  node.add_input(in);
  node.add_output(out);
  return node;
}

// Version 13 over one axis -> the old version over the last axis, with
// that axis swapped to the end and back.
absl::Status AxisLastByTranspose(AdapterContext& ctx, int64_t axis, int64_t rank) {
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[axis], perm[rank - 1]);
  std::string moved = ctx.rewriter.FreshName(absl::StrCat(ctx.node.input(0), "_moved"));
  onnx::NodeProto before = Unary(ctx, "Transpose", ctx.node.input(0), moved);
  AddIntsAttribute(before, "perm", perm);
  ctx.rewriter.InsertBefore(std::move(before));
  ctx.node.set_input(0, moved);
  const std::string original = ctx.node.output(0);
  onnx::NodeProto after = Unary(ctx, "Transpose", ctx.rewriter.DetachOutput(0), original);
  AddIntsAttribute(after, "perm", perm);  // a swap is its own inverse
  ctx.rewriter.InsertAfter(std::move(after));
  RemoveAttribute(ctx.node, "axis");
  AddIntAttribute(ctx.node, "axis", rank - 1);
  ctx.changes.push_back(
      {ChangeKind::kNodeInserted, absl::StrCat("Transposes moving axis ", axis, " last and back")});
  return absl::OkStatus();
}

// The old version over the dims from `axis` on, flattened -> version 13
// over the flattened axis of a Flatten, reshaped back.
absl::Status FlattenedAxes(AdapterContext& ctx, int64_t axis) {
  const std::string input = ctx.node.input(0);
  std::string dims = ctx.rewriter.FreshName(absl::StrCat(input, "_dims"));
  ctx.rewriter.InsertBefore(Unary(ctx, "Shape", input, dims));
  std::string flat = ctx.rewriter.FreshName(absl::StrCat(input, "_flat"));
  onnx::NodeProto flatten = Unary(ctx, "Flatten", input, flat);
  AddIntAttribute(flatten, "axis", axis);
  ctx.rewriter.InsertBefore(std::move(flatten));
  ctx.node.set_input(0, flat);
  const std::string original = ctx.node.output(0);
  onnx::NodeProto reshape = Unary(ctx, "Reshape", ctx.rewriter.DetachOutput(0), original);
  reshape.add_input(dims);
  ctx.rewriter.InsertAfter(std::move(reshape));
  RemoveAttribute(ctx.node, "axis");
  AddIntAttribute(ctx.node, "axis", 1);
  ctx.changes.push_back(
      {ChangeKind::kNodeInserted, absl::StrCat("Flatten at axis ", axis, " and Reshape back")});
  return absl::OkStatus();
}

}  // namespace

absl::Status SoftmaxAxisSemantics(AdapterContext& ctx) {
  const bool down = ctx.to.since_version < ctx.from.since_version;
  int64_t rank = RankOf(ctx, ctx.node.input(0));
  int64_t axis = AxisOf(ctx);
  if (rank < 0 && axis != -1) {
    // Axis -1 is the last at any rank. Another axis: an upgrade flattens at
    // it, which needs no rank (Flatten takes negative axes too); a downgrade
    // would have to move it last, which does.
    if (!down) return FlattenedAxes(ctx, axis);
    return absl::FailedPreconditionError(
        absl::StrCat("the rank of input '", ctx.node.input(0), "' is unknown, so axis ", axis,
                     " cannot be moved last for the earlier version"));
  }
  int64_t normalized = rank < 0 ? -1 : axis < 0 ? axis + rank : axis;
  if (rank >= 0 && (normalized < 0 || normalized >= rank)) {
    return absl::FailedPreconditionError(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  if (rank >= 0 && normalized != rank - 1) {
    return down ? AxisLastByTranspose(ctx, normalized, rank) : FlattenedAxes(ctx, normalized);
  }
  // Both versions default to different axes; spell it out when it was left
  // to the default, so the meaning cannot shift.
  if (FindAttribute(ctx.node, "axis") == nullptr) {
    AddIntAttribute(ctx.node, "axis", axis);
    ctx.changes.push_back(
        {ChangeKind::kAttributeSet, absl::StrCat("axis = ", axis, " made explicit")});
  }
  ctx.changes.push_back(
      {ChangeKind::kVersionBump, absl::StrCat(ctx.from.Label(), " -> ", ctx.to.Label(), ": axis ",
                                              axis, " is the last axis")});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
