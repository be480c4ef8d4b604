// Inference for operators that compute shapes or move data around: Shape,
// Reshape, Concat, Gather, Slice, Squeeze, Unsqueeze, Transpose, Expand,
// Tile, ConstantOfShape, Range and the like. Small integer values (shapes)
// are propagated as symbolic dims so that Shape -> Gather -> Concat ->
// Reshape chains resolve. Reductions, MatMul and the other operators whose
// output shape follows from their inputs' are in infer_tensor.cc.

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

// ---------------------------------------------------------------------------
// Helpers shared with infer_tensor.cc (declared in infer_shape_internal.h).

// Sets output 0 to the rank of input 0 with every size unknown (ops that
// keep the rank, when what sets the sizes is known only at run time).
absl::Status SameRankOnly(InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  int rank = shape->dim_size();
  onnx::TensorShapeProto* out = OutputShape(ctx);
  out->Clear();
  for (int i = 0; i < rank; ++i) out->add_dim();
  return absl::OkStatus();
}

// The value of input `i` as dims (known values or symbols), from a constant
// or from propagated shape data.
std::optional<onnx::TensorShapeProto> DimsValue(InferenceContext& ctx, size_t i) {
  if (const onnx::TensorShapeProto* data = ctx.InputShapeData(i)) return *data;
  if (std::optional<std::vector<int64_t>> ints = KnownInts(ctx, i)) {
    onnx::TensorShapeProto dims;
    for (int64_t v : *ints) AddDim(&dims, v);
    return dims;
  }
  return std::nullopt;
}

// The product of `shape`'s dims [begin, end): nullopt when one is unknown
// or the product overflows.
std::optional<int64_t> DimProduct(const onnx::TensorShapeProto& shape, int begin, int end) {
  std::optional<int64_t> product = 1;
  for (int i = begin; i < end && product; ++i) {
    const Dim& dim = shape.dim(i);
    product = dim.has_dim_value() ? DimMul(product, dim.dim_value()) : std::nullopt;
  }
  return product;
}

// An error naming `what` and the entry when a known entry of `dims` is
// negative.
absl::Status CheckSizes(const onnx::TensorShapeProto& dims, absl::string_view what) {
  for (int i = 0; i < dims.dim_size(); ++i) {
    if (dims.dim(i).has_dim_value() && dims.dim(i).dim_value() < 0) {
      return CheckSize(dims.dim(i).dim_value(), absl::StrCat("entry ", i, " of ", what));
    }
  }
  return absl::OkStatus();
}

// Output `i` gets `rank` unknown dims, when `rank` is known and at most
// kMaxInferredRank.
void SetUnknownDims(InferenceContext& ctx, const Dim& rank, size_t i) {
  if (!rank.has_dim_value() || rank.dim_value() < 0 || rank.dim_value() > kMaxInferredRank) {
    return;
  }
  onnx::TensorShapeProto* out = OutputShape(ctx, i);
  for (int64_t d = 0; d < rank.dim_value(); ++d) AddUnknownDim(out);
}

// Axes from the `axes` attribute or, from `axes_input_version` on, input 1.
std::optional<AxisList> Axes(InferenceContext& ctx, int axes_input_version, size_t input) {
  if (ctx.op().since_version >= axes_input_version) {
    if (!ctx.HasInput(input)) return std::optional<AxisList>(std::in_place);
    std::optional<std::vector<int64_t>> known = KnownInts(ctx, input);
    if (!known) return std::nullopt;
    return AxisList(known->begin(), known->end());
  }
  const onnx::AttributeProto* axes = ctx.Attr("axes");
  if (axes == nullptr || axes->type() != onnx::AttributeProto::INTS) {
    return std::optional<AxisList>(std::in_place);
  }
  return AxisList(axes->ints().begin(), axes->ints().end());
}

// ---------------------------------------------------------------------------
// The rules.

namespace {

constexpr int kAll = 1000;

absl::Status Shape(InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) {
    AddUnknownDim(OutputShape(ctx));  // 1-D whatever the input's rank
    return absl::OkStatus();
  }
  int64_t rank = shape->dim_size();
  int64_t start = ctx.AttrInt("start", 0);
  int64_t end = ctx.AttrInt("end", rank);
  auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  start = clamp(start);
  end = clamp(end);
  onnx::TensorShapeProto data;
  for (int64_t i = start; i < end; ++i) *data.add_dim() = shape->dim(i);
  AddDim(OutputShape(ctx), std::max<int64_t>(0, end - start));
  ctx.SetOutputShapeData(0, std::move(data));
  return absl::OkStatus();
}

absl::Status Size(InferenceContext& ctx) {
  OutputShape(ctx);  // a scalar
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  std::optional<int64_t> size = DimProduct(*shape, 0, shape->dim_size());
  if (!size) return absl::OkStatus();
  onnx::TensorShapeProto data;
  AddDim(&data, *size);
  ctx.SetOutputShapeData(0, std::move(data));
  return absl::OkStatus();
}

absl::Status Reshape(InferenceContext& ctx) {
  std::optional<onnx::TensorShapeProto> target;
  if (ctx.op().since_version < 5) {
    std::optional<std::vector<int64_t>> shape = ctx.AttrInts("shape");
    if (!shape) return absl::OkStatus();
    target.emplace();
    for (int64_t v : *shape) AddDim(&*target, v);
  } else {
    target = DimsValue(ctx, 1);
  }
  if (!target) {
    const onnx::TensorShapeProto* shape_shape = InputShape(ctx, 1);
    if (shape_shape != nullptr && shape_shape->dim_size() == 1) {
      SetUnknownDims(ctx, shape_shape->dim(0));
    }
    return absl::OkStatus();
  }
  if (target->dim_size() > kMaxInferredRank) return absl::OkStatus();
  const onnx::TensorShapeProto* input = InputShape(ctx, 0);
  bool allow_zero = ctx.AttrInt("allowzero", 0) != 0;
  onnx::TensorShapeProto out;
  int inferred_axis = -1;
  for (int i = 0; i < target->dim_size(); ++i) {
    const Dim& dim = target->dim(i);
    Dim* result = out.add_dim();
    if (dim.has_dim_value() && dim.dim_value() == 0 && !allow_zero) {
      if (input == nullptr || i >= input->dim_size()) return absl::OkStatus();
      *result = input->dim(i);
    } else if (dim.has_dim_value() && dim.dim_value() == -1) {
      if (inferred_axis >= 0) return absl::InvalidArgumentError("shape has two -1 entries");
      inferred_axis = i;
      continue;
    } else if (dim.has_dim_value() && dim.dim_value() < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape entry ", i, " is ", dim.dim_value(), ", below -1"));
    } else {
      *result = dim;
    }
  }
  if (inferred_axis >= 0 && input != nullptr) {
    // -1 is the input's size over the others'; equal symbols cancel.
    // A product that overflows leaves the -1 unknown.
    std::multiset<std::string> symbols;
    std::optional<int64_t> total = 1;
    bool total_known = true;
    for (const Dim& dim : input->dim()) {
      if (dim.has_dim_value()) total = DimMul(total, dim.dim_value());
      else if (dim.has_dim_param()) symbols.insert(dim.dim_param());
      else total_known = false;
    }
    std::optional<int64_t> others = 1;
    for (int i = 0; i < out.dim_size() && total_known; ++i) {
      if (i == inferred_axis) continue;
      const Dim& dim = out.dim(i);
      auto symbol = dim.has_dim_param() ? symbols.find(dim.dim_param()) : symbols.end();
      if (dim.has_dim_value()) others = DimMul(others, dim.dim_value());
      else if (symbol != symbols.end()) symbols.erase(symbol);
      else total_known = false;
    }
    if (total_known && total && others && symbols.empty() && *others > 0) {
      out.mutable_dim(inferred_axis)->set_dim_value(*total / *others);
    }
  }
  *OutputShape(ctx) = std::move(out);
  return absl::OkStatus();
}

absl::Status Flatten(InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  int64_t rank = shape->dim_size();
  int64_t axis = ctx.AttrInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return absl::InvalidArgumentError("axis out of range");
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (auto [begin, end] : {std::pair<int, int>{0, static_cast<int>(axis)},
                            {static_cast<int>(axis), static_cast<int>(rank)}}) {
    std::optional<int64_t> p = DimProduct(*shape, begin, end);
    if (p) AddDim(out, *p);
    else if (end - begin == 1) *out->add_dim() = shape->dim(begin);
    else AddUnknownDim(out);
  }
  return absl::OkStatus();
}

// Squeeze's and Unsqueeze's axes (the attribute, input 1 from 13) and
// input 0's shape.
struct AxesAndShape {
  AxisList axes;
  const onnx::TensorShapeProto* shape;
};

// The AxesAndShape of a Squeeze or Unsqueeze, nullopt when either is
// unknown; input 0's shape data passes on unchanged either way.
std::optional<AxesAndShape> SqueezeInputs(InferenceContext& ctx) {
  std::optional<AxisList> axes = Axes(ctx, 13);
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (const onnx::TensorShapeProto* data = ctx.InputShapeData(0); data != nullptr) {
    ctx.SetOutputShapeData(0, *data);
  }
  if (!axes || shape == nullptr) return std::nullopt;
  return AxesAndShape{*std::move(axes), shape};
}

absl::Status Squeeze(InferenceContext& ctx) {
  std::optional<AxesAndShape> in = SqueezeInputs(ctx);
  if (!in) return absl::OkStatus();
  const auto& [axes, shape] = *in;
  int64_t rank = shape->dim_size();
  absl::InlinedVector<bool, 8> drop(rank, false);
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) {
      if (!shape->dim(i).has_dim_value()) return absl::OkStatus();  // unknown which
      drop[i] = shape->dim(i).dim_value() == 1;
    }
  }
  for (int64_t axis : axes) {
    absl::StatusOr<int64_t> a = NormalizeAxis(axis, rank, "axis");
    if (!a.ok()) return a.status();
    if (shape->dim(*a).has_dim_value() && shape->dim(*a).dim_value() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot squeeze axis ", axis, " of size ", shape->dim(*a).dim_value()));
    }
    drop[*a] = true;
  }
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (int i = 0; i < rank; ++i) {
    if (!drop[i]) *out->add_dim() = shape->dim(i);
  }
  return absl::OkStatus();
}

absl::Status Unsqueeze(InferenceContext& ctx) {
  std::optional<AxesAndShape> in = SqueezeInputs(ctx);
  if (!in) return absl::OkStatus();
  const auto& [axes, shape] = *in;
  int64_t rank = shape->dim_size() + static_cast<int64_t>(axes.size());
  if (rank > kMaxInferredRank) return absl::OkStatus();
  absl::InlinedVector<bool, 8> inserted(rank, false);
  for (int64_t axis : axes) {
    absl::StatusOr<int64_t> a = NormalizeAxis(axis, rank, "axis");
    if (!a.ok()) return a.status();
    if (inserted[*a]) return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " repeats"));
    inserted[*a] = true;
  }
  onnx::TensorShapeProto* out = OutputShape(ctx);
  int next = 0;
  for (int i = 0; i < rank; ++i) {
    if (inserted[i]) {
      AddDim(out, 1);
    } else if (next < shape->dim_size()) {
      *out->add_dim() = shape->dim(next++);
    }
  }
  return absl::OkStatus();
}

absl::Status Transpose(InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  int rank = shape->dim_size();
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (std::optional<std::vector<int64_t>> given = ctx.AttrInts("perm")) perm = *given;
  if (static_cast<int>(perm.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("perm has ", perm.size(), " entries for rank ", rank));
  }
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank) return absl::InvalidArgumentError("perm entry out of range");
    *out->add_dim() = shape->dim(p);
  }
  return absl::OkStatus();
}

absl::Status Concat(InferenceContext& ctx) {
  // Shape data: concatenation of 1-D integer values.
  onnx::TensorShapeProto data;
  bool data_known = true;
  for (size_t i = 0; i < ctx.num_inputs() && data_known; ++i) {
    std::optional<onnx::TensorShapeProto> value = DimsValue(ctx, i);
    if (!value) data_known = false;
    else for (const Dim& d : value->dim()) *data.add_dim() = d;
  }
  if (data_known) ctx.SetOutputShapeData(0, data);
  std::vector<const onnx::TensorShapeProto*> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const onnx::TensorShapeProto* shape = InputShape(ctx, i);
    if (shape == nullptr) return absl::OkStatus();
    shapes.push_back(shape);
  }
  if (shapes.empty()) return absl::OkStatus();
  int rank = shapes[0]->dim_size();
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.AttrInt("axis", 0), rank, "axis");
  if (!axis.ok()) return axis.status();
  onnx::TensorShapeProto out = *shapes[0];
  // Unknown when an input's is or the sum overflows.
  std::optional<int64_t> total = 0;
  for (const onnx::TensorShapeProto* shape : shapes) {
    if (shape->dim_size() != rank) {
      return absl::InvalidArgumentError("inputs of Concat have different ranks");
    }
    const Dim& dim = shape->dim(*axis);
    total = dim.has_dim_value() ? DimAdd(total, dim.dim_value()) : std::nullopt;
    for (int i = 0; i < rank; ++i) {
      if (i == *axis) continue;
      if (!out.dim(i).has_dim_value() && shape->dim(i).has_dim_value()) {
        *out.mutable_dim(i) = shape->dim(i);
      }
    }
  }
  SetDim(out.mutable_dim(*axis), total);
  *OutputShape(ctx) = std::move(out);
  return absl::OkStatus();
}

absl::Status Gather(InferenceContext& ctx) {
  const onnx::TensorShapeProto* data_shape = InputShape(ctx, 0);
  const onnx::TensorShapeProto* indices_shape = InputShape(ctx, 1);
  if (const onnx::TensorShapeProto* values = ctx.InputShapeData(0)) {
    std::optional<std::vector<int64_t>> indices = KnownInts(ctx, 1);
    if (indices && ctx.AttrInt("axis", 0) == 0) {
      onnx::TensorShapeProto picked;
      int64_t n = values->dim_size();
      bool ok = true;
      for (int64_t index : *indices) {
        if (index < -n || index >= n) { ok = false; break; }
        *picked.add_dim() = values->dim(index < 0 ? index + n : index);
      }
      if (ok) ctx.SetOutputShapeData(0, std::move(picked));
    }
  }
  if (data_shape == nullptr || indices_shape == nullptr) return absl::OkStatus();
  int rank = data_shape->dim_size();
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.AttrInt("axis", 0), rank, "axis");
  if (!axis.ok()) return axis.status();
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (int i = 0; i < *axis; ++i) *out->add_dim() = data_shape->dim(i);
  for (const Dim& dim : indices_shape->dim()) *out->add_dim() = dim;
  for (int i = *axis + 1; i < rank; ++i) *out->add_dim() = data_shape->dim(i);
  return absl::OkStatus();
}

absl::Status GatherElements(InferenceContext& ctx) {
  PropagateShape(ctx, 1, 0);
  return absl::OkStatus();
}

// The length of slice [start, end) by `step` (not 0) of an axis of `dim`
// (>= 0) elements, with negative bounds counted from the end.
int64_t SliceLength(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim == 0) return 0;
  // Adding dim to a negative bound cannot overflow.
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  int64_t span;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    span = end - start;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    span = start - end;
  }
  if (span <= 0) return 0;
  // One element, then one per whole step in the rest; the step's magnitude
  // as unsigned, as -INT64_MIN does not fit.
  uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  return static_cast<int64_t>(static_cast<uint64_t>(span - 1) / magnitude) + 1;
}

// Shape data of Slice over a 1-D value `values` with a positive step.
onnx::TensorShapeProto SliceValues(const onnx::TensorShapeProto& values, int64_t start,
                                   int64_t end, int64_t step) {
  int64_t n = values.dim_size();
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, 0, n);
  onnx::TensorShapeProto picked;
  // Counts rather than adds the step to the index: that could overflow.
  int64_t count = start < end ? (end - start - 1) / step + 1 : 0;
  for (int64_t k = 0; k < count; ++k) *picked.add_dim() = values.dim(start + k * step);
  return picked;
}

absl::Status Slice(InferenceContext& ctx) {
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (ctx.op().since_version < 10) {
    starts = ctx.AttrInts("starts");
    ends = ctx.AttrInts("ends");
    axes = ctx.AttrInts("axes");
  } else {
    starts = KnownInts(ctx, 1);
    ends = KnownInts(ctx, 2);
    if (ctx.HasInput(3)) axes = KnownInts(ctx, 3);
    if (ctx.HasInput(4)) steps = KnownInts(ctx, 4);
    if ((ctx.HasInput(3) && !axes) || (ctx.HasInput(4) && !steps)) return SameRankOnly(ctx);
  }
  if (!starts || !ends) return SameRankOnly(ctx);
  if (starts->size() != ends->size()) return absl::OkStatus();
  if (!axes) {
    axes.emplace(starts->size());
    std::iota(axes->begin(), axes->end(), 0);
  }
  if (!steps) steps = std::vector<int64_t>(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size()) {
    return absl::InvalidArgumentError(absl::StrCat("Slice has ", starts->size(), " starts, ",
                                                   axes->size(), " axes and ", steps->size(),
                                                   " steps"));
  }
  for (int64_t step : *steps) {
    if (step == 0) return absl::InvalidArgumentError("a step of Slice is 0");
  }
  // Shape data: slicing a 1-D value.
  if (const onnx::TensorShapeProto* values = ctx.InputShapeData(0);
      values != nullptr && axes->size() == 1 && ((*axes)[0] == 0 || (*axes)[0] == -1) &&
      (*steps)[0] > 0) {
    ctx.SetOutputShapeData(0, SliceValues(*values, (*starts)[0], (*ends)[0], (*steps)[0]));
  }
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  onnx::TensorShapeProto out = *shape;
  int rank = shape->dim_size();
  for (size_t i = 0; i < axes->size(); ++i) {
    absl::StatusOr<int64_t> axis = NormalizeAxis((*axes)[i], rank, "axis");
    if (!axis.ok()) return axis.status();
    const Dim& dim = shape->dim(*axis);
    Dim* result = out.mutable_dim(*axis);
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      result->Clear();
      continue;
    }
    result->set_dim_value(SliceLength(dim.dim_value(), (*starts)[i], (*ends)[i], (*steps)[i]));
  }
  *OutputShape(ctx) = std::move(out);
  return absl::OkStatus();
}

// Expand to a shape known only at run time whose length is known: the
// output's rank is the larger of the two, and an input dim other than 1
// is the output's (the shape's dim there is 1 or that dim).
void ExpandRank(InferenceContext& ctx, const onnx::TensorShapeProto& shape) {
  const onnx::TensorShapeProto* length = InputShape(ctx, 1);
  if (length == nullptr || length->dim_size() != 1 || !length->dim(0).has_dim_value()) return;
  int64_t rank = std::max<int64_t>(shape.dim_size(), length->dim(0).dim_value());
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t from_input = i - (rank - shape.dim_size());
    if (from_input >= 0 && shape.dim(from_input).has_dim_value() &&
        shape.dim(from_input).dim_value() != 1) {
      *out->add_dim() = shape.dim(from_input);
    } else {
      AddUnknownDim(out);
    }
  }
}

absl::Status Expand(InferenceContext& ctx) {
  std::optional<onnx::TensorShapeProto> target = DimsValue(ctx, 1);
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  if (!target) {
    ExpandRank(ctx, *shape);
    return absl::OkStatus();
  }
  OC_RETURN_IF_ERROR(CheckSizes(*target, "the shape"));
  absl::StatusOr<onnx::TensorShapeProto> result = BroadcastShapes({shape, &*target});
  if (!result.ok()) return result.status();
  *OutputShape(ctx) = *std::move(result);
  return absl::OkStatus();
}

absl::Status Tile(InferenceContext& ctx) {
  std::optional<std::vector<int64_t>> repeats = KnownInts(ctx, 1);
  const onnx::TensorShapeProto* shape = InputShape(ctx, 0);
  if (shape == nullptr) return absl::OkStatus();
  if (!repeats) {
    // Repeats known only at run time: the rank is the input's still.
    onnx::TensorShapeProto* out = OutputShape(ctx);
    for (int i = 0; i < shape->dim_size(); ++i) AddUnknownDim(out);
    return absl::OkStatus();
  }
  if (static_cast<int>(repeats->size()) != shape->dim_size()) return absl::OkStatus();
  for (int64_t repeat : *repeats) OC_RETURN_IF_ERROR(CheckSize(repeat, "a repeat"));
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (int i = 0; i < shape->dim_size(); ++i) {
    if (shape->dim(i).has_dim_value()) AddDim(out, DimMul(shape->dim(i).dim_value(), (*repeats)[i]));
    else if ((*repeats)[i] == 1) *out->add_dim() = shape->dim(i);
    else AddUnknownDim(out);
  }
  return absl::OkStatus();
}

// A small integer ConstantOfShape result, as shape data (e.g. the ones of a
// reduced shape).
void FillShapeData(InferenceContext& ctx, const onnx::TensorShapeProto& dims,
                   const onnx::AttributeProto* value) {
  if (dims.dim_size() != 1 || !dims.dim(0).has_dim_value() || dims.dim(0).dim_value() > 64) {
    return;
  }
  int64_t fill = 0;
  if (value != nullptr && value->has_t()) {
    absl::StatusOr<std::vector<int64_t>> ints = IntValues(value->t());
    if (!ints.ok() || ints->size() != 1) return;
    fill = (*ints)[0];
  } else if (value != nullptr) {
    return;
  }
  onnx::TensorShapeProto data;
  for (int64_t i = 0; i < dims.dim(0).dim_value(); ++i) AddDim(&data, fill);
  ctx.SetOutputShapeData(0, std::move(data));
}

absl::Status ConstantOfShape(InferenceContext& ctx) {
  const onnx::AttributeProto* value = ctx.Attr("value");
  SetElemType(ctx.MutableOutputType(0),
              value != nullptr && value->has_t() ? value->t().data_type()
                                                 : onnx::TensorProto::FLOAT);
  if (std::optional<onnx::TensorShapeProto> dims = DimsValue(ctx, 0)) {
    OC_RETURN_IF_ERROR(CheckSizes(*dims, "the shape"));
    if (dims->dim_size() > kMaxInferredRank) return absl::OkStatus();
    FillShapeData(ctx, *dims, value);
    *OutputShape(ctx) = *std::move(dims);
  } else if (const onnx::TensorShapeProto* shape_shape = InputShape(ctx, 0);
             shape_shape != nullptr && shape_shape->dim_size() == 1) {
    SetUnknownDims(ctx, shape_shape->dim(0));
  }
  return absl::OkStatus();
}

absl::Status Constant(InferenceContext& ctx) {
  onnx::TensorProto tensor;
  for (const onnx::AttributeProto& a : ctx.node().attribute()) {
    const std::string& name = a.name();
    if (name == "value" && a.has_t()) {
      tensor = a.t();
    } else if (std::optional<onnx::TensorProto> shorthand = ShorthandTensor(a)) {
      tensor = *std::move(shorthand);
    } else if (name == "sparse_value" && a.has_sparse_tensor()) {
      SetElemType(ctx.MutableOutputType(0), a.sparse_tensor().values().data_type());
      onnx::TensorShapeProto* out = OutputShape(ctx);
      for (int64_t d : a.sparse_tensor().dims()) AddDim(out, d);
      return absl::OkStatus();
    } else {
      continue;
    }
    break;
  }
  if (tensor.data_type() == 0) return absl::OkStatus();
  SetElemType(ctx.MutableOutputType(0), tensor.data_type());
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (int64_t d : tensor.dims()) AddDim(out, d);
  ctx.SetOutputConstant(0, std::move(tensor));
  return absl::OkStatus();
}

// The number of elements of Range(start, limit, delta) over integers,
// max(ceil((limit - start) / delta), 0), computed in 128 bits; nullopt
// when delta is 0 or the count does not fit in int64_t.
std::optional<int64_t> IntRangeCount(int64_t start, int64_t limit, int64_t delta) {
  if (delta == 0) return std::nullopt;
  __int128 span = static_cast<__int128>(limit) - start;
  __int128 count = span / delta;
  if (span % delta != 0 && (span > 0) == (delta > 0)) ++count;
  if (count <= 0) return 0;
  if (count > std::numeric_limits<int64_t>::max()) return std::nullopt;
  return static_cast<int64_t>(count);
}

// The same over floating point; nullopt when delta is 0 or the count is
// not finite or out of range.
std::optional<int64_t> FloatRangeCount(double start, double limit, double delta) {
  if (delta == 0) return std::nullopt;
  std::optional<int64_t> count = FloorToDim(std::ceil((limit - start) / delta));
  if (!count) return std::nullopt;
  return std::max<int64_t>(*count, 0);
}

// The first value of constant `tensor` when it has one.
template <typename T>
std::optional<T> FirstValue(const onnx::TensorProto* tensor) {
  if (tensor == nullptr) return std::nullopt;
  if constexpr (std::is_integral_v<T>) {
    if (!HoldsIntValues(tensor->data_type())) return std::nullopt;
    absl::StatusOr<std::vector<int64_t>> values = IntValues(*tensor);
    if (!values.ok() || values->empty()) return std::nullopt;
    return values->front();
  } else {
    absl::StatusOr<std::vector<double>> values = FloatValues(*tensor);
    if (!values.ok() || values->empty()) return std::nullopt;
    return values->front();
  }
}

// Range: a 1-D output whose length follows from constant start, limit and
// delta (exactly for integers); unknown otherwise.
absl::Status Range(InferenceContext& ctx) {
  onnx::TensorShapeProto* out = OutputShape(ctx);
  const onnx::TensorProto* start = ctx.InputConstant(0);
  const onnx::TensorProto* limit = ctx.InputConstant(1);
  const onnx::TensorProto* delta = ctx.InputConstant(2);
  if (start == nullptr || limit == nullptr || delta == nullptr) {
    AddUnknownDim(out);
    return absl::OkStatus();
  }
  std::optional<int64_t> count;
  if (HoldsIntValues(start->data_type())) {
    std::optional<int64_t> s = FirstValue<int64_t>(start), l = FirstValue<int64_t>(limit),
                           d = FirstValue<int64_t>(delta);
    if (s && l && d) count = IntRangeCount(*s, *l, *d);
  } else {
    std::optional<double> s = FirstValue<double>(start), l = FirstValue<double>(limit),
                          d = FirstValue<double>(delta);
    if (s && l && d) count = FloatRangeCount(*s, *l, *d);
  }
  AddDim(out, count);
  return absl::OkStatus();
}

absl::Status GatherND(InferenceContext& ctx) {
  const onnx::TensorShapeProto* data = InputShape(ctx, 0);
  const onnx::TensorShapeProto* indices = InputShape(ctx, 1);
  if (data == nullptr || indices == nullptr || indices->dim_size() == 0) return absl::OkStatus();
  const Dim& last = indices->dim(indices->dim_size() - 1);
  if (!last.has_dim_value()) return absl::OkStatus();
  int64_t batch = ctx.AttrInt("batch_dims", 0);
  OC_RETURN_IF_ERROR(CheckSize(batch, "batch_dims"));
  OC_RETURN_IF_ERROR(CheckSize(last.dim_value(), "the last dimension of indices"));
  // The data dims after the batch dims and the indexed ones are kept.
  std::optional<int64_t> kept_from = DimAdd(batch, last.dim_value());
  if (!kept_from || *kept_from > data->dim_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_dims ", batch, " and index tuples of ", last.dim_value(),
        " exceed the data's rank ", data->dim_size()));
  }
  onnx::TensorShapeProto* out = OutputShape(ctx);
  for (int i = 0; i < indices->dim_size() - 1; ++i) *out->add_dim() = indices->dim(i);
  for (int i = static_cast<int>(*kept_from); i < data->dim_size(); ++i) {
    *out->add_dim() = data->dim(i);
  }
  return absl::OkStatus();
}

std::vector<InferenceRule> BuildRules() {
  std::vector<InferenceRule> rules = {
      {"", "Shape", 1, kAll, Shape},
      {"", "Size", 1, kAll, Size},
      {"", "Reshape", 1, kAll, Reshape},
      {"", "Flatten", 1, kAll, Flatten},
      {"", "Squeeze", 1, kAll, Squeeze},
      {"", "Unsqueeze", 1, kAll, Unsqueeze},
      {"", "Transpose", 1, kAll, Transpose},
      {"", "Concat", 1, kAll, Concat},
      {"", "Gather", 1, kAll, Gather},
      {"", "GatherElements", 1, kAll, GatherElements},
      {"", "GatherND", 1, kAll, GatherND},
      {"", "Slice", 1, kAll, Slice},
      {"", "Expand", 1, kAll, Expand},
      {"", "Tile", 1, kAll, Tile},
      {"", "ConstantOfShape", 1, kAll, ConstantOfShape},
      {"", "Constant", 1, kAll, Constant},
      {"", "Range", 1, kAll, Range},
  };
  return rules;
}

}  // namespace
}  // namespace shape_internal

absl::Span<const InferenceRule> ShapeRules() {
  static const auto* rules = new std::vector<InferenceRule>(shape_internal::BuildRules());
  return *rules;
}

}  // namespace onnxconvert::schema
