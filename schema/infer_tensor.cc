// Inference for operators whose output shapes follow from their input
// shapes and attributes: reductions, MatMul and Gemm, Split, Pad, TopK,
// depth/space rearrangement, OneHot, NonZero, Compress, Resize and the
// random generators. Shape computations are in infer_shape.cc.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "schema/infer_shape_internal.h"
#include "schema/inference_rules.h"
#include "schema/shape_util.h"

namespace onnxconvert::schema {
namespace shape_internal {
namespace {

constexpr int kAll = 1000;

// Reductions: axes from the attribute (or input 1 from `axes_input_version`).
template <int kAxesInputVersion>
absl::Status Reduce(InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  std::optional<AxisList> axes = Axes(ctx, kAxesInputVersion);
  if (shape == nullptr || !axes) return absl::OkStatus();
  bool keep = ctx.AttrInt("keepdims", 1) != 0;
  bool noop_when_empty = ctx.AttrInt("noop_with_empty_axes", 0) != 0;
  int rank = shape->dim_size();
  absl::InlinedVector<bool, 8> reduced(rank, axes->empty() && !noop_when_empty);
  for (int64_t axis : *axes) {
    absl::StatusOr<int64_t> a = NormalizeAxis(axis, rank, "axis");
    if (!a.ok()) return a.status();
    reduced[*a] = true;
  }
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i]) *out->add_dim() = shape->dim(i);
    else if (keep) AddDim(out, 1);
  }
  return absl::OkStatus();
}

// Input 0's shape (null when unknown), its rank and its "axis" attribute
// (default `fallback`) counted in that rank.
struct ShapeAndAxis {
  const onnx::TensorShapeProto* shape = nullptr;
  int rank = 0;
  int64_t axis = 0;
};

absl::StatusOr<ShapeAndAxis> InputShapeAndAxis(InferenceContext& ctx, int64_t fallback) {
  ShapeAndAxis in;
  in.shape = InputShape(ctx, 0);
  if (in.shape == nullptr) return in;
  in.rank = in.shape->dim_size();
  OC_ASSIGN_OR_RETURN(in.axis, NormalizeAxis(ctx.AttrInt("axis", fallback), in.rank, "axis"));
  return in;
}

absl::Status ArgReduce(InferenceContext& ctx) {
  OC_ASSIGN_OR_RETURN(ShapeAndAxis in, InputShapeAndAxis(ctx, 0));
  if (in.shape == nullptr) return absl::OkStatus();
  auto [shape, rank, axis] = in;
  bool keep = ctx.AttrInt("keepdims", 1) != 0;
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (int i = 0; i < rank; ++i) {
    if (i != axis) *out->add_dim() = shape->dim(i);
    else if (keep) AddDim(out, 1);
  }
  return absl::OkStatus();
}

absl::Status MatMul(InferenceContext& ctx) {
  const onnx::TensorShapeProto* a = InputShape(ctx, 0);
  const onnx::TensorShapeProto* b = InputShape(ctx, 1);
  if (a == nullptr || b == nullptr || a->dim_size() == 0 || b->dim_size() == 0) {
    return absl::OkStatus();
  }
  // A vector operand acts as a matrix of one row (left) or one column
  // (right), and that dim is dropped from the result.
  int ra = a->dim_size(), rb = b->dim_size();
  const Dim& k1 = a->dim(ra - 1);
  const Dim& k2 = rb == 1 ? b->dim(0) : b->dim(rb - 2);
  if (k1.has_dim_value() && k2.has_dim_value() && k1.dim_value() != k2.dim_value()) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul inner dimensions differ: ",
                                                   k1.dim_value(), " and ", k2.dim_value()));
  }
  DimRange batches[] = {DimRange(*a, 0, std::max(0, ra - 2)),
                        DimRange(*b, 0, std::max(0, rb - 2))};
  onnx::TensorShapeProto* out = OutputShape(ctx);
  OC_RETURN_IF_ERROR(BroadcastDims(batches, out));
  if (ra > 1) *out->add_dim() = a->dim(ra - 2);
  if (rb > 1) *out->add_dim() = b->dim(rb - 1);
  return absl::OkStatus();
}

// QLinearMatMul multiplies inputs 0 and 3.
absl::Status QLinearMatMul(InferenceContext& ctx) {
  const onnx::TensorShapeProto* a = InputShape(ctx, 0);
  const onnx::TensorShapeProto* b = InputShape(ctx, 3);
  if (a == nullptr || b == nullptr || a->dim_size() < 2 || b->dim_size() < 2) {
    return absl::OkStatus();
  }
  onnx::TensorShapeProto batch_a, batch_b;
  for (int i = 0; i < a->dim_size() - 2; ++i) *batch_a.add_dim() = a->dim(i);
  for (int i = 0; i < b->dim_size() - 2; ++i) *batch_b.add_dim() = b->dim(i);
  absl::StatusOr<onnx::TensorShapeProto> batch = BroadcastShapes({&batch_a, &batch_b});
  if (!batch.ok()) return batch.status();
  onnx::TensorShapeProto* out = OutputShape(ctx);
  *out = *batch;
  *out->add_dim() = a->dim(a->dim_size() - 2);
  *out->add_dim() = b->dim(b->dim_size() - 1);
  return absl::OkStatus();
}

absl::Status Gemm(InferenceContext& ctx) {
  const onnx::TensorShapeProto* a = InputShape(ctx, 0);
  const onnx::TensorShapeProto* b = InputShape(ctx, 1);
  if (a == nullptr || b == nullptr || a->dim_size() != 2 || b->dim_size() != 2) {
    return absl::OkStatus();
  }
  bool trans_a = ctx.AttrInt("transA", 0) != 0, trans_b = ctx.AttrInt("transB", 0) != 0;
  onnx::TensorShapeProto* out = OutputShape(ctx);
  *out->add_dim() = a->dim(trans_a ? 1 : 0);
  *out->add_dim() = b->dim(trans_b ? 0 : 1);
  return absl::OkStatus();
}

// An error when a part of `split` is negative or, with `dim` known, they do
// not add up to it (a sum that overflows cannot).
absl::Status CheckSplit(absl::Span<const int64_t> split, const Dim& dim) {
  std::optional<int64_t> sum = 0;
  for (int64_t part : split) {
    OC_RETURN_IF_ERROR(CheckSize(part, "a split"));
    sum = DimAdd(sum, part);
  }
  if (dim.has_dim_value() && sum != dim.dim_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the splits add up to ", sum ? absl::StrCat(*sum) : "more than 2^63 - 1",
        ", not to the dimension ", dim.dim_value()));
  }
  return absl::OkStatus();
}

// `total` (>= 0) split into `parts` (> 0) chunks of ceil(total / parts),
// the last ones smaller or empty.
std::vector<int64_t> EvenSplit(int64_t total, int64_t parts) {
  int64_t chunk = CeilDiv(total, parts);
  std::vector<int64_t> split;
  int64_t left = total;
  for (int64_t i = 0; i < parts; ++i) {
    split.push_back(std::min(chunk, left));
    left -= split.back();
  }
  return split;
}

absl::Status Split(InferenceContext& ctx) {
  OC_ASSIGN_OR_RETURN(ShapeAndAxis in, InputShapeAndAxis(ctx, 0));
  if (in.shape == nullptr) return absl::OkStatus();
  auto [shape, rank, axis] = in;
  std::optional<std::vector<int64_t>> split;
  if (ctx.op().since_version >= 13) {
    if (ctx.HasInput(1)) split = KnownInts(ctx, 1);
  } else {
    split = ctx.AttrInts("split");
  }
  size_t outputs = ctx.num_outputs();
  const Dim& dim = shape->dim(axis);
  if (split && split->empty()) split.reset();  // an empty attribute: even parts
  if (split) OC_RETURN_IF_ERROR(CheckSplit(*split, dim));
  if (!split && dim.has_dim_value() && dim.dim_value() >= 0 && outputs > 0 && !ctx.HasInput(1)) {
    split = EvenSplit(dim.dim_value(), static_cast<int64_t>(outputs));
  }
  for (size_t i = 0; i < outputs; ++i) {
    if (!ctx.HasOutput(i)) continue;
    onnx::TensorShapeProto* out = OutputShape(ctx, i);
    *out = *shape;
    if (split && i < split->size()) out->mutable_dim(axis)->set_dim_value((*split)[i]);
    else out->mutable_dim(axis)->Clear();
  }
  // Shape data: the parts of a 1-D value known element by element (pads
  // or sizes split apart).
  std::optional<onnx::TensorShapeProto> values;
  if (rank == 1 && split && dim.has_dim_value()) values = DimsValue(ctx, 0);
  if (values && values->dim_size() == dim.dim_value()) {
    int64_t start = 0;
    for (size_t i = 0; i < outputs && i < split->size(); ++i) {
      onnx::TensorShapeProto part;
      for (int64_t k = start; k < start + (*split)[i] && k < values->dim_size(); ++k) {
        *part.add_dim() = values->dim(static_cast<int>(k));
      }
      if (ctx.HasOutput(i)) ctx.SetOutputShapeData(i, std::move(part));
      start += (*split)[i];
    }
  }
  return absl::OkStatus();
}

absl::Status Pad(InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  int rank = shape->dim_size();
  std::optional<std::vector<int64_t>> pads =
      ctx.op().since_version >= 11 ? KnownInts(ctx, 1) : ctx.AttrInts(ctx.op().since_version >= 2 ? "pads" : "paddings");
  // Padding keeps the rank: with pads or axes unknown, only the sizes are.
  if (!pads) return SameRankOnly(ctx);
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (ctx.op().since_version >= 18 && ctx.HasInput(3)) {
    std::optional<std::vector<int64_t>> given = KnownInts(ctx, 3);
    if (!given) return SameRankOnly(ctx);
    axes = *given;
  }
  if (pads->size() != 2 * axes.size()) return absl::OkStatus();
  onnx::TensorShapeProto out = *shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    absl::StatusOr<int64_t> axis = NormalizeAxis(axes[i], rank, "axis");
    if (!axis.ok()) return axis.status();
    Dim* dim = out.mutable_dim(*axis);
    if (dim->has_dim_value()) {
      std::optional<int64_t> padded =
          DimAdd(DimAdd(dim->dim_value(), (*pads)[i]), (*pads)[i + axes.size()]);
      if (padded && *padded < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("padding axis ", *axis, " gives it ", *padded, " elements"));
      }
      SetDim(dim, padded);
    } else if ((*pads)[i] != 0 || (*pads)[i + axes.size()] != 0) {
      dim->Clear();
    }
  }
  *OutputShape(ctx) = std::move(out);
  return absl::OkStatus();
}

absl::Status TopK(InferenceContext& ctx) {
  OC_ASSIGN_OR_RETURN(ShapeAndAxis in, InputShapeAndAxis(ctx, -1));
  if (in.shape == nullptr) return absl::OkStatus();
  auto [shape, rank, axis] = in;
  std::optional<int64_t> k;
  if (ctx.op().since_version < 10) {
    k = ctx.AttrInt("k", 0);
  } else if (std::optional<std::vector<int64_t>> ks = KnownInts(ctx, 1); ks && ks->size() == 1) {
    k = (*ks)[0];
  }
  if (k) OC_RETURN_IF_ERROR(CheckSize(*k, "k"));
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    if (!ctx.HasOutput(i)) continue;
    onnx::TensorShapeProto* out = OutputShape(ctx, i);
    *out = *shape;
    if (k) out->mutable_dim(axis)->set_dim_value(*k);
    else out->mutable_dim(axis)->Clear();
  }
  return absl::OkStatus();
}

// Random generators with `dtype` and `shape` attributes.
absl::Status RandomWithShape(InferenceContext& ctx) {
  SetElemType(ctx.MutableOutputType(0),
              ElemTypeFromAttr(ctx.AttrInt("dtype", onnx::TensorProto::FLOAT)));
  if (std::optional<std::vector<int64_t>> shape = ctx.AttrInts("shape")) {
    for (int64_t d : *shape) OC_RETURN_IF_ERROR(CheckSize(d, "a shape entry"));
    onnx::TensorShapeProto* out = OutputShape(ctx);
    for (int64_t d : *shape) AddDim(out, d);
  }
  return absl::OkStatus();
}

absl::Status SpaceDepth(InferenceContext& ctx, bool to_depth) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr || shape->dim_size() != 4) return absl::OkStatus();
  int64_t b = ctx.AttrInt("blocksize", 0);
  if (b <= 0) return absl::OkStatus();
  onnx::TensorShapeProto* out = OutputShape(ctx);
  *out->add_dim() = shape->dim(0);
  // Channels scale by b * b, height and width by b; unknown on overflow.
  auto scaled = [&](int i, bool multiply) {
    const Dim& d = shape->dim(i);
    std::optional<int64_t> factor = i == 1 ? DimMul(b, b) : b;
    if (!d.has_dim_value()) AddUnknownDim(out);
    else AddDim(out, multiply ? DimMul(d.dim_value(), factor) : DimDiv(d.dim_value(), factor));
  };
  scaled(1, to_depth);
  scaled(2, !to_depth);
  scaled(3, !to_depth);
  return absl::OkStatus();
}

absl::Status DepthToSpace(InferenceContext& ctx) { return SpaceDepth(ctx, false); }
absl::Status SpaceToDepth(InferenceContext& ctx) { return SpaceDepth(ctx, true); }

absl::Status OneHot(InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  int rank = shape->dim_size() + 1;
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.AttrInt("axis", -1), rank, "axis");
  if (!axis.ok()) return axis.status();
  std::optional<std::vector<int64_t>> depth = KnownInts(ctx, 1);
  onnx::TensorShapeProto* out = OutputShape(ctx);
  int next = 0;
  for (int i = 0; i < rank; ++i) {
    if (i == *axis) {
      if (depth && depth->size() == 1) {
        OC_RETURN_IF_ERROR(CheckSize((*depth)[0], "depth"));
        AddDim(out, (*depth)[0]);
      }
      else AddUnknownDim(out);
    } else {
      *out->add_dim() = shape->dim(next++);
    }
  }
  return absl::OkStatus();
}

absl::Status NonZero(InferenceContext& ctx) {
  std::optional<int> rank = RankOf(ctx.InputType(0));
  if (!rank) return absl::OkStatus();
  onnx::TensorShapeProto* out = OutputShape(ctx);
  AddDim(out, *rank);
  AddUnknownDim(out);
  return absl::OkStatus();
}

absl::Status Compress(InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  const onnx::AttributeProto* axis = ctx.Attr("axis");
  onnx::TensorShapeProto* out = OutputShape(ctx);
  if (axis == nullptr) {
    AddUnknownDim(out);
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> a = NormalizeAxis(axis->i(), shape->dim_size(), "axis");
  if (!a.ok()) return a.status();
  *out = *shape;
  out->mutable_dim(*a)->Clear();
  return absl::OkStatus();
}

absl::Status Resize(InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  int rank = shape->dim_size();
  bool upsample = ctx.node().op_type() == "Upsample";
  size_t scales_input = upsample ? 1 : (ctx.op().since_version >= 11 ? 2 : 1);
  std::optional<std::vector<int64_t>> sizes;
  if (!upsample && ctx.op().since_version >= 11 && ctx.HasInput(3)) sizes = KnownInts(ctx, 3);
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (std::optional<std::vector<int64_t>> given = ctx.AttrInts("axes")) axes = *given;
  for (int64_t& axis : axes) {
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    }
    if (axis < 0) axis += rank;
  }
  onnx::TensorShapeProto out = *shape;
  if (sizes && sizes->size() == axes.size()) {
    for (int64_t size : *sizes) OC_RETURN_IF_ERROR(CheckSize(size, "a size"));
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (axis < 0 || axis >= rank) return absl::InvalidArgumentError("axis out of range");
      out.mutable_dim(axis)->set_dim_value((*sizes)[i]);
    }
    if (ctx.AttrString("keep_aspect_ratio_policy", "stretch") != "stretch") {
      for (int64_t axis : axes) out.mutable_dim(axis < 0 ? axis + rank : axis)->Clear();
    }
    *OutputShape(ctx) = std::move(out);
    return absl::OkStatus();
  }
  std::optional<std::vector<double>> scales;
  if (ctx.op().since_version < 9 && upsample) {
    const onnx::AttributeProto* attr = ctx.Attr("scales");
    if (attr != nullptr) scales = std::vector<double>(attr->floats().begin(), attr->floats().end());
  } else if (ctx.HasInput(scales_input)) {
    if (const onnx::TensorProto* constant = ctx.InputConstant(scales_input)) {
      absl::StatusOr<std::vector<double>> values = FloatValues(*constant);
      if (values.ok() && !values->empty()) scales = *values;
    }
  }
  if (!scales || scales->size() != axes.size()) {
    for (int64_t axis : axes) out.mutable_dim(axis < 0 ? axis + rank : axis)->Clear();
    *OutputShape(ctx) = std::move(out);
    return absl::OkStatus();
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return absl::InvalidArgumentError("axis out of range");
    Dim* dim = out.mutable_dim(axis);
    if (dim->has_dim_value()) {
      // Unknown when the scaled size is not a number or out of range.
      std::optional<int64_t> scaled = FloorToDim(dim->dim_value() * (*scales)[i] + 1e-9);
      if (scaled && *scaled < 0) {
        return absl::InvalidArgumentError(absl::StrCat("scale ", (*scales)[i], " gives axis ",
                                                       axis, " ", *scaled, " elements"));
      }
      SetDim(dim, scaled);
    } else if ((*scales)[i] != 1.0) {
      dim->Clear();
    }
  }
  *OutputShape(ctx) = std::move(out);
  return absl::OkStatus();
}

constexpr const char* kReduceOps[] = {"ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd",
                                      "ReduceL1",  "ReduceL2",  "ReduceLogSum",
                                      "ReduceLogSumExp", "ReduceSumSquare"};

std::vector<InferenceRule> BuildRules() {
  std::vector<InferenceRule> rules = {
      {"", "ReduceSum", 1, kAll, Reduce<13>},
      {"", "ArgMax", 1, kAll, ArgReduce},
      {"", "ArgMin", 1, kAll, ArgReduce},
      {"", "MatMul", 1, kAll, MatMul},
      {"", "MatMulInteger", 1, kAll, MatMul},
      {"", "Gemm", 1, kAll, Gemm},
      {"", "QLinearMatMul", 1, kAll, QLinearMatMul},
      {"", "Split", 1, kAll, Split},
      {"", "Pad", 1, kAll, Pad},
      {"", "TopK", 1, kAll, TopK},
      {"", "EyeLike", 1, kAll, InferLikeInputTypedByDtype},
      {"", "RandomNormal", 1, kAll, RandomWithShape},
      {"", "RandomUniform", 1, kAll, RandomWithShape},
      {"", "RandomNormalLike", 1, kAll, InferLikeInputTypedByDtype},
      {"", "RandomUniformLike", 1, kAll, InferLikeInputTypedByDtype},
      {"", "DepthToSpace", 1, kAll, DepthToSpace},
      {"", "SpaceToDepth", 1, kAll, SpaceToDepth},
      {"", "OneHot", 1, kAll, OneHot},
      {"", "NonZero", 1, kAll, NonZero},
      {"", "Compress", 1, kAll, Compress},
      {"", "Resize", 1, kAll, Resize},
      {"", "Upsample", 1, kAll, Resize},
  };
  for (const char* op : kReduceOps) rules.push_back({"", op, 1, kAll, Reduce<18>});
  return rules;
}

}  // namespace
}  // namespace shape_internal

absl::Span<const InferenceRule> TensorRules() {
  static const auto* rules = new std::vector<InferenceRule>(shape_internal::BuildRules());
  return *rules;
}

}  // namespace onnxconvert::schema
