// Resize across its versions: 10 -> 11 added the ROI input and the
// coordinate transformation modes (version 10 sampled asymmetrically, and
// nearest rounded down), 13 made ROI and scales optional, and 18 added
// antialias, axes and keep_aspect_ratio_policy.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter.h"
#include "adapters/rewrites.h"
#include "ir/status_macros.h"

namespace onnxconvert::adapters {
namespace {

std::string StringAttribute(const onnx::NodeProto& node, absl::string_view name,
                            absl::string_view fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute != nullptr ? attribute->s() : std::string(fallback);
}

// An empty float tensor, for the ROI or scales a version requires but the
// node does not use.
absl::StatusOr<std::string> EmptyFloats(AdapterContext& ctx) {
  onnx::TensorProto empty;
  empty.set_data_type(onnx::TensorProto::FLOAT);
  empty.add_dims(0);
  return ctx.add_constant(std::move(empty));
}

bool Given(const onnx::NodeProto& node, int input) {
  return node.input_size() > input && !node.input(input).empty();
}

// Resize-10(X, scales) -> Resize-11(X, roi = [], scales), asymmetric.
absl::Status ResizeUp10To11(AdapterContext& ctx) {
  absl::StatusOr<std::string> roi = EmptyFloats(ctx);
  if (!roi.ok()) return roi.status();
  std::string scales = ctx.node.input(1);
  ctx.node.set_input(1, *roi);
  ctx.node.add_input(scales);
  SetStringAttribute(ctx.node, "coordinate_transformation_mode", "asymmetric");
  if (StringAttribute(ctx.node, "mode", "nearest") == "nearest") {
    SetStringAttribute(ctx.node, "nearest_mode", "floor");
  }
  ctx.changes.push_back({"input-added", absl::StrCat("empty roi '", *roi, "'")});
  ctx.changes.push_back({"attribute-set",
                         "coordinate_transformation_mode = asymmetric (and nearest_mode = floor)"
                         ", the sampling of Resize-10"});
  return absl::OkStatus();
}

// Resize-11 -> Resize-10 when the node samples as version 10 did.
absl::Status ResizeDown11To10(AdapterContext& ctx) {
  std::string mode = StringAttribute(ctx.node, "mode", "nearest");
  std::string transform = StringAttribute(ctx.node, "coordinate_transformation_mode", "half_pixel");
  std::string rounding = StringAttribute(ctx.node, "nearest_mode", "round_prefer_floor");
  std::string why;
  if (Given(ctx.node, 3)) why = "it resizes to explicit sizes";
  else if (mode == "cubic") why = "mode cubic does not exist in Resize-10";
  else if (transform != "asymmetric") why = absl::StrCat("coordinate_transformation_mode is ", transform);
  else if (mode == "nearest" && rounding != "floor") why = absl::StrCat("nearest_mode is ", rounding);
  else if (FindAttribute(ctx.node, "exclude_outside") != nullptr &&
           FindAttribute(ctx.node, "exclude_outside")->i() != 0) {
    why = "exclude_outside is set";
  }
  if (!why.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(ctx.to.Label(), " samples asymmetrically with nearest rounding down; ", why));
  }
  std::string scales = ctx.node.input(2);
  ctx.node.mutable_input()->DeleteSubrange(1, ctx.node.input_size() - 1);
  ctx.node.add_input(scales);
  for (const char* name : {"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                           "exclude_outside", "extrapolation_value"}) {
    RemoveAttribute(ctx.node, name);
  }
  ctx.changes.push_back({"input-removed", "roi dropped; sampling attributes dropped"});
  return absl::OkStatus();
}

// Resize-13 -> Resize-11: fill the ROI and scales Resize-11 requires.
absl::Status ResizeDown13To11(AdapterContext& ctx) {
  for (int input : {1, 2}) {
    if (Given(ctx.node, input)) continue;
    absl::StatusOr<std::string> empty = EmptyFloats(ctx);
    if (!empty.ok()) return empty.status();
    while (ctx.node.input_size() <= input) ctx.node.add_input("");
    ctx.node.set_input(input, *empty);
    ctx.changes.push_back({"input-added", absl::StrCat("empty ", input == 1 ? "roi" : "scales",
                                                       " '", *empty, "'")});
  }
  return absl::OkStatus();
}

// Resize-11 -> Resize-13: everything 11 accepts, 13 means the same way.
absl::Status ResizeUp11To13(AdapterContext& ctx) {
  ctx.changes.push_back({"version-bump", "roi and scales stay as given"});
  return absl::OkStatus();
}

// Resize-18's `axes` names the axes scales cover; Resize-13 needs a scale
// for every axis: 1 on the others. (Sizes would need the other dims.)
absl::Status ScalesForEveryAxis(AdapterContext& ctx) {
  const onnx::AttributeProto* axes = FindAttribute(ctx.node, "axes");
  int64_t rank = RankOf(ctx, ctx.node.input(0));
  const onnx::TensorProto* scales_value = Given(ctx.node, 2) ? ctx.constant_of(ctx.node.input(2))
                                                             : nullptr;
  std::optional<std::vector<double>> scales =
      scales_value != nullptr ? FloatValues(*scales_value) : std::nullopt;
  if (Given(ctx.node, 3) || rank < 0 || !scales ||
      scales->size() != static_cast<size_t>(axes->ints_size())) {
    return absl::FailedPreconditionError(
        "axes is set; Resize-13 needs scales for every axis, and the scales are not a constant "
        "over a known rank");
  }
  std::vector<double> full(rank, 1.0);
  for (int k = 0; k < axes->ints_size(); ++k) {
    int64_t axis = axes->ints(k) < 0 ? axes->ints(k) + rank : axes->ints(k);
    if (axis < 0 || axis >= rank) {
      return absl::FailedPreconditionError(absl::StrCat("axis ", axes->ints(k), " is out of range"));
    }
    full[axis] = (*scales)[k];
  }
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_dims(rank);
  for (double v : full) tensor.add_float_data(static_cast<float>(v));
  absl::StatusOr<std::string> name = ctx.add_constant(std::move(tensor));
  if (!name.ok()) return name.status();
  ctx.node.set_input(2, *name);
  RemoveAttribute(ctx.node, "axes");
  ctx.changes.push_back({"input-added", absl::StrCat("scales for every axis '", *name, "'")});
  return absl::OkStatus();
}

// Resize-18 -> Resize-13 when antialias, axes and the aspect policy are
// left at what version 13 does.
absl::Status ResizeDown18To13(AdapterContext& ctx) {
  const onnx::AttributeProto* antialias = FindAttribute(ctx.node, "antialias");
  if (antialias != nullptr && antialias->i() != 0) {
    return absl::FailedPreconditionError("antialias is set, which Resize-13 cannot do");
  }
  if (FindAttribute(ctx.node, "axes") != nullptr) OC_RETURN_IF_ERROR(ScalesForEveryAxis(ctx));
  if (StringAttribute(ctx.node, "keep_aspect_ratio_policy", "stretch") != "stretch") {
    return absl::FailedPreconditionError(
        "keep_aspect_ratio_policy is not stretch, which Resize-13 cannot do");
  }
  for (const char* name : {"antialias", "keep_aspect_ratio_policy"}) RemoveAttribute(ctx.node, name);
  return absl::OkStatus();
}

}  // namespace

void RegisterResizeAdapters(RewriteTable& table) {
  table.Register("", "Resize", 10, 11, ResizeUp10To11, "roi added, asymmetric sampling");
  table.Register("", "Resize", 11, 10, ResizeDown11To10, "asymmetric sampling only");
  table.Register("", "Resize", 11, 13, ResizeUp11To13, "roi and scales kept");
  table.Register("", "Resize", 13, 11, ResizeDown13To11, "roi and scales filled");
  table.Register("", "Resize", 18, 13, ResizeDown18To13, "version-18 attributes at default");
}

}  // namespace onnxconvert::adapters
