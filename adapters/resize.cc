// Resize across its versions: 10 -> 11 added the ROI input and the
// coordinate transformation modes (version 10 sampled asymmetrically, and
// nearest rounded down), 13 made ROI and scales optional, and 18 added
// antialias, axes and keep_aspect_ratio_policy.

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/compositions.h"
#include "adapters/families.h"
#include "base/status_macros.h"

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
  return ctx.rewriter.AddConstant(std::move(empty));
}

bool Given(const onnx::NodeProto& node, int input) {
  return node.input_size() > input && !node.input(input).empty();
}

}  // namespace

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
  ctx.changes.push_back({ChangeKind::kInputAdded, absl::StrCat("empty roi '", *roi, "'")});
  ctx.changes.push_back({ChangeKind::kAttributeSet,
                         "coordinate_transformation_mode = asymmetric (and nearest_mode = floor)"
                         ", the sampling of Resize-10"});
  return absl::OkStatus();
}

namespace {

// The sizes a Resize-11+ node resizes to, when known at conversion: its
// constant `sizes`, else its output's inferred sizes (sizes computed in the
// graph from shapes that inference follows).
std::optional<std::vector<int64_t>> KnownSizes(AdapterContext& ctx) {
  if (const onnx::TensorProto* value = ctx.rewriter.ConstantOf(ctx.node.input(3))) {
    return IntValues(*value);
  }
  const onnx::TensorShapeProto* out = ShapeOf(ctx, ctx.node.output(0));
  if (out == nullptr) return std::nullopt;
  std::vector<int64_t> sizes;
  for (const auto& dim : out->dim()) {
    if (!dim.has_dim_value()) return std::nullopt;
    sizes.push_back(dim.dim_value());
  }
  return sizes;
}

// The input's sizes, when all known and positive.
std::optional<std::vector<int64_t>> InputSizes(AdapterContext& ctx) {
  const onnx::TensorShapeProto* shape = ShapeOf(ctx, ctx.node.input(0));
  if (shape == nullptr) return std::nullopt;
  std::vector<int64_t> sizes;
  for (const auto& dim : shape->dim()) {
    if (!dim.has_dim_value() || dim.dim_value() <= 0) return std::nullopt;
    sizes.push_back(dim.dim_value());
  }
  return sizes;
}

// The scale of every axis as Resize-11+ takes it (float): the constant
// scales, or the sizes over the input's sizes; nullopt when not known.
std::optional<std::vector<float>> KnownScales(AdapterContext& ctx) {
  if (Given(ctx.node, 3)) {
    std::optional<std::vector<int64_t>> sizes = KnownSizes(ctx);
    std::optional<std::vector<int64_t>> in = InputSizes(ctx);
    if (!sizes || !in || sizes->size() != in->size()) return std::nullopt;
    std::vector<float> scales;
    for (size_t i = 0; i < in->size(); ++i) {
      scales.push_back(static_cast<float>((*sizes)[i]) / static_cast<float>((*in)[i]));
    }
    return scales;
  }
  if (!Given(ctx.node, 2)) return std::nullopt;
  const onnx::TensorProto* value = ctx.rewriter.ConstantOf(ctx.node.input(2));
  if (value == nullptr) return std::nullopt;
  std::optional<std::vector<double>> floats = FloatValues(*value);
  if (!floats) return std::nullopt;
  return std::vector<float>(floats->begin(), floats->end());
}

// The scales as integers, when each is a whole number from 1 up.
std::optional<std::vector<int64_t>> IntegerFactors(const std::vector<float>& scales) {
  std::vector<int64_t> factors;
  for (float scale : scales) {
    if (!(scale >= 1 && scale <= 1024 && std::floor(scale) == scale)) return std::nullopt;
    factors.push_back(static_cast<int64_t>(scale));
  }
  return factors;
}

// Resize-11+ with `sizes` known at conversion (KnownSizes) of an input of
// known sizes, as the scales Resize-11 computes from them (size / input
// size, in float): true when every size comes back from its scale as
// Resize-10 computes the output (floor(input size * scale)), and input 3
// became a scales input 2.
absl::StatusOr<bool> SizesAsScales(AdapterContext& ctx) {
  std::optional<std::vector<int64_t>> sizes = KnownSizes(ctx);
  std::optional<std::vector<float>> scales = KnownScales(ctx);
  std::optional<std::vector<int64_t>> in = InputSizes(ctx);
  if (!sizes || !scales || !in) return false;
  for (size_t i = 0; i < in->size(); ++i) {
    float extent = static_cast<float>((*in)[i]) * (*scales)[i];
    if (static_cast<int64_t>(std::floor(extent)) != (*sizes)[i]) return false;
  }
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_dims(static_cast<int64_t>(scales->size()));
  for (float scale : *scales) tensor.add_float_data(scale);
  absl::StatusOr<std::string> name = ctx.rewriter.AddConstant(std::move(tensor));
  if (!name.ok()) return name.status();
  std::string sizes_name = ctx.node.input(3);
  while (ctx.node.input_size() < 3) ctx.node.add_input("");
  ctx.node.set_input(2, *name);
  ctx.node.mutable_input()->DeleteSubrange(3, ctx.node.input_size() - 3);
  ctx.changes.push_back(
      {ChangeKind::kInputToInput,
       absl::StrCat("sizes '", sizes_name, "' as the scales they imply, '", *name, "'")});
  return true;
}

}  // namespace

// Resize-11 -> Resize-10 when the node samples as version 10 did.
absl::Status ResizeDown11To10(AdapterContext& ctx) {
  std::string mode = StringAttribute(ctx.node, "mode", "nearest");
  std::string transform = StringAttribute(ctx.node, "coordinate_transformation_mode", "half_pixel");
  std::string rounding = StringAttribute(ctx.node, "nearest_mode", "round_prefer_floor");
  bool exclude = FindAttribute(ctx.node, "exclude_outside") != nullptr &&
                 FindAttribute(ctx.node, "exclude_outside")->i() != 0;
  // Upsampling by whole factors with half-pixel centres: nearest rounding
  // to the closest sample picks what asymmetric flooring picks (no ties);
  // linear becomes a composition.
  if ((transform == "half_pixel" || transform == "pytorch_half_pixel") && !exclude &&
      (mode == "linear" || (mode == "nearest" && (rounding == "round_prefer_floor" ||
                                                  rounding == "round_prefer_ceil")))) {
    std::optional<std::vector<float>> scales = KnownScales(ctx);
    std::optional<std::vector<int64_t>> factors =
        scales ? IntegerFactors(*scales) : std::nullopt;
    if (factors && mode == "linear") return HalfPixelLinearUpscale(ctx, *factors);
    if (factors) {
      transform = "asymmetric";
      rounding = "floor";
      ctx.changes.push_back(
          {ChangeKind::kAttributeSet,
           absl::StrCat("upsampling by whole factors: half-pixel centres with ",
                        StringAttribute(ctx.node, "nearest_mode", "round_prefer_floor"),
                        " pick the samples asymmetric flooring picks")});
    }
  }
  std::string why;
  if (mode == "cubic") why = "mode cubic does not exist in Resize-10";
  else if (transform != "asymmetric") why = absl::StrCat("coordinate_transformation_mode is ", transform);
  else if (mode == "nearest" && rounding != "floor") why = absl::StrCat("nearest_mode is ", rounding);
  else if (exclude) why = "exclude_outside is set";
  if (why.empty() && Given(ctx.node, 3)) {
    absl::StatusOr<bool> scaled = SizesAsScales(ctx);
    if (!scaled.ok()) return scaled.status();
    if (!*scaled) why = "it resizes to explicit sizes, not known at conversion for an input of known sizes";
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
  ctx.changes.push_back({ChangeKind::kInputRemoved, "roi dropped; sampling attributes dropped"});
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
    ctx.changes.push_back(
        {ChangeKind::kInputAdded,
         absl::StrCat("empty ", input == 1 ? "roi" : "scales", " '", *empty, "'")});
  }
  return absl::OkStatus();
}

// Resize-11 -> Resize-13: everything 11 accepts, 13 means the same way.
absl::Status ResizeUp11To13(AdapterContext& ctx) {
  ctx.changes.push_back({ChangeKind::kVersionBump, "roi and scales stay as given"});
  return absl::OkStatus();
}

namespace {

// Resize-18's `axes` names the axes scales cover; Resize-13 needs a scale
// for every axis: 1 on the others. (Sizes would need the other dims.)
absl::Status ScalesForEveryAxis(AdapterContext& ctx) {
  const onnx::AttributeProto* axes = FindAttribute(ctx.node, "axes");
  int64_t rank = RankOf(ctx, ctx.node.input(0));
  if (rank < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "axes is set and the rank of '", ctx.node.input(0), "' is unknown; Resize-13 needs "
        "scales or sizes for every axis"));
  }
  std::vector<int64_t> positions;
  for (int64_t axis : axes->ints()) {
    int64_t resolved = axis < 0 ? axis + rank : axis;
    if (resolved < 0 || resolved >= rank) {
      return absl::FailedPreconditionError(absl::StrCat("axis ", axis, " is out of range"));
    }
    positions.push_back(resolved);
  }
  // The ROI covers the same axes: starts 0 and ends 1 elsewhere.
  if (Given(ctx.node, 1)) {
    std::vector<int64_t> roi_positions = positions;
    for (int64_t axis : positions) roi_positions.push_back(axis + rank);
    onnx::TensorProto base;
    base.set_data_type(onnx::TensorProto::FLOAT);
    base.add_dims(2 * rank);
    for (int64_t i = 0; i < 2 * rank; ++i) base.add_float_data(i < rank ? 0.0f : 1.0f);
    const onnx::TensorProto* roi_value = ctx.rewriter.ConstantOf(ctx.node.input(1));
    std::optional<std::vector<double>> roi =
        roi_value != nullptr ? FloatValues(*roi_value) : std::nullopt;
    std::string full_roi;
    if (roi && roi->size() == roi_positions.size()) {
      for (size_t k = 0; k < roi_positions.size(); ++k) {
        base.set_float_data(static_cast<int>(roi_positions[k]), static_cast<float>((*roi)[k]));
      }
      absl::StatusOr<std::string> name = ctx.rewriter.AddConstant(std::move(base));
      if (!name.ok()) return name.status();
      full_roi = *name;
    } else {
      absl::StatusOr<std::string> name =
          ScatterIntoConstant(ctx, std::move(base), roi_positions, ctx.node.input(1));
      if (!name.ok()) return name.status();
      full_roi = *name;
    }
    ctx.node.set_input(1, full_roi);
  }
  bool sizes = Given(ctx.node, 3);
  if (!sizes && !Given(ctx.node, 2)) {
    return absl::FailedPreconditionError("the node gives neither scales nor sizes");
  }
  int input = sizes ? 3 : 2;
  const std::string given = ctx.node.input(input);
  const onnx::TensorProto* constant = sizes ? nullptr : ctx.rewriter.ConstantOf(given);
  std::optional<std::vector<double>> scales =
      constant != nullptr ? FloatValues(*constant) : std::nullopt;
  std::string full;
  if (scales && scales->size() == positions.size()) {
    std::vector<double> values(rank, 1.0);
    for (size_t k = 0; k < positions.size(); ++k) values[positions[k]] = (*scales)[k];
    onnx::TensorProto tensor;
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_dims(rank);
    for (double v : values) tensor.add_float_data(static_cast<float>(v));
    absl::StatusOr<std::string> name = ctx.rewriter.AddConstant(std::move(tensor));
    if (!name.ok()) return name.status();
    full = *name;
  } else if (!sizes) {
    // Scales known at run time: 1 on every axis, the given ones scattered in.
    onnx::TensorProto ones;
    ones.set_data_type(onnx::TensorProto::FLOAT);
    ones.add_dims(rank);
    for (int64_t i = 0; i < rank; ++i) ones.add_float_data(1.0f);
    absl::StatusOr<std::string> name = ScatterIntoConstant(ctx, std::move(ones), positions, given);
    if (!name.ok()) return name.status();
    full = *name;
  } else {
    // Sizes: the input's own dims, the given ones scattered in.
    onnx::NodeProto shape;
    shape.set_op_type("Shape");
    shape.set_name(ctx.rewriter.FreshName(absl::StrCat(ctx.node.name(), "_dims")));
    shape.add_input(ctx.node.input(0));
    std::string dims = ctx.rewriter.FreshName(absl::StrCat(ctx.node.input(0), "_dims"));
    shape.add_output(dims);
    ctx.rewriter.InsertBefore(std::move(shape));
    onnx::NodeProto scatter;
    scatter.set_op_type("ScatterElements");
    scatter.set_name(ctx.rewriter.FreshName(absl::StrCat(ctx.node.name(), "_full")));
    absl::StatusOr<std::string> index_name = ctx.rewriter.AddConstant(Int64Tensor(positions));
    if (!index_name.ok()) return index_name.status();
    scatter.add_input(dims);
    scatter.add_input(*index_name);
    scatter.add_input(given);
    full = ctx.rewriter.FreshName(absl::StrCat(given, "_full"));
    scatter.add_output(full);
    ctx.rewriter.InsertBefore(std::move(scatter));
  }
  ctx.node.set_input(input, full);
  RemoveAttribute(ctx.node, "axes");
  ctx.changes.push_back({ChangeKind::kInputSet,
                         absl::StrCat(sizes ? "sizes" : "scales", " for every axis '", full, "'")});
  return absl::OkStatus();
}

}  // namespace

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

}  // namespace onnxconvert::adapters
