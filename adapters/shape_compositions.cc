// Shape and layout compositions: Slice steps as Gathers, Unsqueeze and
// Squeeze of the last axis as Reshapes, Tile to a broadcast shape, and the
// half-pixel linear upscale of Resize (see compositions.h).

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
#include "adapters/rewrites.h"
#include "base/status_macros.h"

namespace onnxconvert::adapters {
namespace {

using compositions_internal::Given;
using compositions_internal::kMaxReversedIndices;
using onnx::TensorProto;

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
  // A constant's values, or those the graph's static shapes decide.
  auto ints = [&](int i) -> std::optional<std::vector<int64_t>> {
    if (!Given(ctx, i)) return std::nullopt;
    const TensorProto* value = ctx.rewriter.ConstantOf(ctx.node.input(i));
    return value == nullptr ? ctx.rewriter.StaticInts(ctx.node.input(i)) : IntValues(*value);
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
    ctx.changes.push_back({ChangeKind::kNodeInserted, absl::StrCat("Gather taking axis ", axis, " by step ",
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
  ctx.changes.push_back({ChangeKind::kInputToAttribute, "starts, ends and axes of the unit-step axes"});
  return absl::OkStatus();
}

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
      {ChangeKind::kNodeReplaced, absl::StrCat(op, " of the last axis of a value of unknown rank -> ",
                                     "Reshape to its Shape with ",
                                     op == "Unsqueeze" ? "a 1 appended" : "the last dim dropped")});
  return absl::OkStatus();
}

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
    ctx.changes.push_back({ChangeKind::kNodeInserted, absl::StrCat("Tile of '", input, "' to the shape of '",
                                                         target, "' (", ctx.to.Label(),
                                                         " does not broadcast)")});
  }
  return absl::OkStatus();
}

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
      {ChangeKind::kNodeReplaced, absl::StrCat("Resize (bilinear, half-pixel, x", sh, " x", sw,
                                     ") -> per output phase, the four neighbours (Gather) "
                                     "weighted as the runtime's kernel weighs them, interleaved")});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
