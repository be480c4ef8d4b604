// Attributes a later version added (or values it added to one), written
// for the older version as a composition of its ops where one computes the
// same values: pools' ceil_mode as extra end padding, TopK's largest = 0
// by negation, Reshape's allowzero by its shape, DepthToSpace's CRD mode by
// Reshape and Transpose, GatherND's batch_dims as batch coordinates in the
// indices, ScatterND's and ScatterElements' reductions over indices known
// to be distinct, GroupNormalization-21's per-channel affine after a
// per-group one of ones and zeros. Each refuses, saying why, where no
// composition computes the same values.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "adapters/adapter_helpers.h"
#include "adapters/composer.h"
#include "adapters/compositions.h"
#include "base/status_macros.h"

namespace onnxconvert::adapters {
namespace {

using onnx::TensorProto;

// The sizes of `value` when all are known.
std::optional<std::vector<int64_t>> StaticDims(const AdapterContext& ctx,
                                               const std::string& value) {
  const onnx::TensorShapeProto* shape = ShapeOf(ctx, value);
  if (shape == nullptr) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& dim : shape->dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) return std::nullopt;
    dims.push_back(dim.dim_value());
  }
  return dims;
}

// The INTS attribute `name`, or `n` copies of `fallback`.
std::vector<int64_t> IntsOr(const onnx::NodeProto& node, absl::string_view name, size_t n,
                            int64_t fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr || attribute->ints_size() == 0) return std::vector<int64_t>(n, fallback);
  return {attribute->ints().begin(), attribute->ints().end()};
}

absl::Status Refuse(const AdapterContext& ctx, absl::string_view what, absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat(what, ", which ", ctx.to.Label(), " cannot express: ", why));
}

}  // namespace

// MaxPool-10+ / AveragePool-10+ with ceil_mode = 1, for versions that round
// output sizes down: the windows ceil mode adds at the end of an axis come
// from extra padding there, which max ignores and an average that does not
// count padding (count_include_pad = 0) leaves out of its count. The last
// window must start inside the input or its leading padding (as ONNX
// Runtime counts it).
absl::Status CeilModeAsEndPads(AdapterContext& ctx) {
  RemoveAttribute(ctx.node, "ceil_mode");
  const std::string x = ctx.node.input(0);
  const char* what = "ceil_mode = 1";
  const onnx::AttributeProto* auto_pad = FindAttribute(ctx.node, "auto_pad");
  if (auto_pad != nullptr && auto_pad->s() != "NOTSET") {
    return Refuse(ctx, what, "auto_pad sets the padding");
  }
  if (ctx.from.name == "AveragePool" && FindAttribute(ctx.node, "count_include_pad") != nullptr &&
      FindAttribute(ctx.node, "count_include_pad")->i() != 0) {
    return Refuse(ctx, what, "count_include_pad = 1 would count the padding that adds the windows");
  }
  std::optional<std::vector<int64_t>> dims = StaticDims(ctx, x);
  const onnx::AttributeProto* kernel_attribute = FindAttribute(ctx.node, "kernel_shape");
  if (!dims || dims->size() < 3 || kernel_attribute == nullptr ||
      kernel_attribute->ints_size() != static_cast<int>(dims->size()) - 2) {
    return Refuse(ctx, what, absl::StrCat("the sizes of '", x, "' are not all known"));
  }
  const size_t spatial = dims->size() - 2;
  std::vector<int64_t> kernel(kernel_attribute->ints().begin(), kernel_attribute->ints().end());
  std::vector<int64_t> strides = IntsOr(ctx.node, "strides", spatial, 1);
  std::vector<int64_t> dilations = IntsOr(ctx.node, "dilations", spatial, 1);
  std::vector<int64_t> pads = IntsOr(ctx.node, "pads", 2 * spatial, 0);
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) {
    return Refuse(ctx, what, "its attributes do not fit the input's rank");
  }
  bool changed = false;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = (*dims)[i + 2], s = strides[i], head = pads[i];
    const int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
    const int64_t span = in + head + pads[i + spatial] - extent;
    if (s <= 0 || span < 0) return Refuse(ctx, what, "a window does not fit the input");
    int64_t out = (span + s - 1) / s + 1;
    if ((out - 1) * s >= in + head) --out;
    const int64_t extra = std::max<int64_t>(0, (out - 1) * s + extent - (in + head + pads[i + spatial]));
    if (extra > 0) changed = true;
    pads[i + spatial] += extra;
  }
  RemoveAttribute(ctx.node, "pads");
  AddIntsAttribute(ctx.node, "pads", pads);
  ctx.changes.push_back(
      {ChangeKind::kAttributeSet,
       absl::StrCat("ceil_mode dropped", changed ? "; pads [" : " (no window added)",
                    changed ? absl::StrJoin(pads, ", ") : "", changed ? "]" : "",
                    changed ? " add the end windows ceil mode takes" : "")});
  return absl::OkStatus();
}

// TopK-11+ with largest = 0 (the smallest), for TopK-10: the largest of the
// negated input, negated back (exact for floats; ties keep the lower index
// first either way).
absl::Status SmallestByNegation(AdapterContext& ctx) {
  RemoveAttribute(ctx.node, "largest");
  const std::string x = ctx.node.input(0);
  const int32_t elem = ElemOf(ctx, x);
  if (elem != TensorProto::FLOAT && elem != TensorProto::DOUBLE && elem != TensorProto::FLOAT16) {
    return Refuse(ctx, "largest = 0 (the smallest)",
                  "negating a value that is not known to be float may overflow");
  }
  Composer compose(ctx);
  ctx.node.set_input(0, compose.Before("Neg", {x}));
  if (ctx.node.output_size() > 0 && !ctx.node.output(0).empty()) {
    const std::string values = ctx.node.output(0);
    compose.After("Neg", {ctx.rewriter.DetachOutput(0)}, values);
  }
  ctx.changes.push_back(
      {ChangeKind::kNodeInserted, "the smallest as the largest of the negated input"});
  return absl::OkStatus();
}

// Reshape-14 with allowzero = 1, for Reshape-13 (a 0 copies the input's
// size there): a constant shape without 0 means the same; one 0 among
// nonzero sizes (an empty output, so an empty input) becomes -1, which
// infers that 0.
absl::Status AllowZeroShape(AdapterContext& ctx) {
  RemoveAttribute(ctx.node, "allowzero");
  const char* what = "allowzero = 1";
  const TensorProto* shape = ctx.rewriter.ConstantOf(ctx.node.input(1));
  std::optional<std::vector<int64_t>> sizes = shape != nullptr ? IntValues(*shape) : std::nullopt;
  if (!sizes) {
    return Refuse(ctx, what, "the shape is known only at run time, and a 0 in it would copy the "
                             "input's size there");
  }
  const int64_t zeros = std::count(sizes->begin(), sizes->end(), 0);
  const bool minus_one = std::count(sizes->begin(), sizes->end(), -1) > 0;
  if (zeros == 0) {
    ctx.changes.push_back({ChangeKind::kAttributeRemoved, "allowzero: the shape has no 0"});
    return absl::OkStatus();
  }
  if (zeros > 1 || minus_one) {
    return Refuse(ctx, what, "the shape holds several 0s (or a 0 and a -1), which only a 0 "
                             "in Reshape-14 keeps as a size");
  }
  std::replace(sizes->begin(), sizes->end(), int64_t{0}, int64_t{-1});
  OC_ASSIGN_OR_RETURN(std::string name, ctx.rewriter.AddConstant(Int64Tensor(*sizes)));
  ctx.node.set_input(1, name);
  ctx.changes.push_back({ChangeKind::kInputReplaced,
                         absl::StrCat("the shape's 0 as -1 (an empty output), '", name, "'")});
  return absl::OkStatus();
}

// DepthToSpace-11+ in CRD mode, for DepthToSpace-1 (DCR only): the
// rearrangement CRD defines, a Reshape to [N, C/b², b, b, H, W], a
// Transpose [0, 1, 4, 2, 5, 3] and a Reshape to [N, C/b², H·b, W·b].
absl::Status DepthToSpaceCrd(AdapterContext& ctx) {
  const onnx::AttributeProto* mode = FindAttribute(ctx.node, "mode");
  if (mode == nullptr || mode->s() == "DCR") {
    RemoveAttribute(ctx.node, "mode");
    return absl::OkStatus();
  }
  const onnx::AttributeProto* block = FindAttribute(ctx.node, "blocksize");
  const std::string x = ctx.node.input(0);
  std::optional<std::vector<int64_t>> dims = StaticDims(ctx, x);
  if (block == nullptr || block->i() <= 0 || !dims || dims->size() != 4 ||
      (*dims)[1] % (block->i() * block->i()) != 0) {
    return Refuse(ctx, "mode CRD", absl::StrCat("the sizes of '", x, "' are not all known"));
  }
  const int64_t b = block->i(), n = (*dims)[0], c = (*dims)[1] / (b * b), h = (*dims)[2],
                w = (*dims)[3];
  Composer compose(ctx);
  OC_ASSIGN_OR_RETURN(std::string split_shape, compose.Ints({n, c, b, b, h, w}));
  OC_ASSIGN_OR_RETURN(std::string out_shape, compose.Ints({n, c, h * b, w * b}));
  std::string moved = compose.Before(
      "Transpose", {compose.Before("Reshape", {x, split_shape})},
      {IntsAttribute("perm", {0, 1, 4, 2, 5, 3})});
  ctx.node.set_op_type("Reshape");
  ctx.node.clear_attribute();
  ctx.node.clear_input();
  ctx.node.add_input(moved);
  ctx.node.add_input(out_shape);
  ctx.changes.push_back(
      {ChangeKind::kNodeReplaced, "DepthToSpace CRD -> Reshape, Transpose, Reshape"});
  return absl::OkStatus();
}

// GatherND-12+ with batch_dims = b, for GatherND-11: each index tuple
// prefixed with its batch coordinates (a constant, from the indices' known
// leading sizes), which gathers the same elements into the same shape.
absl::Status BatchDimsAsIndices(AdapterContext& ctx) {
  const onnx::AttributeProto* batch_attribute = FindAttribute(ctx.node, "batch_dims");
  const int64_t b = batch_attribute != nullptr ? batch_attribute->i() : 0;
  RemoveAttribute(ctx.node, "batch_dims");
  if (b == 0) return absl::OkStatus();
  const std::string indices = ctx.node.input(1);
  std::optional<std::vector<int64_t>> dims = StaticDims(ctx, indices);
  if (!dims || static_cast<int64_t>(dims->size()) < b + 1 || b < 0) {
    return Refuse(ctx, absl::StrCat("batch_dims = ", b),
                  absl::StrCat("the sizes of '", indices, "' are not all known"));
  }
  const std::vector<int64_t> lead(dims->begin(), dims->end() - 1);
  int64_t count = 1;
  for (int64_t d : lead) count *= d;
  if (count * b > (int64_t{1} << 20)) {
    return Refuse(ctx, absl::StrCat("batch_dims = ", b), "the batch coordinates would be too many");
  }
  // coords[i_0, ..., i_{r-2}, j] = i_j for j < b.
  std::vector<int64_t> coords;
  coords.reserve(count * b);
  std::vector<int64_t> index(lead.size(), 0);
  for (int64_t e = 0; e < count; ++e) {
    for (int64_t j = 0; j < b; ++j) coords.push_back(index[j]);
    for (size_t d = lead.size(); d-- > 0;) {
      if (++index[d] < lead[d]) break;
      index[d] = 0;
    }
  }
  TensorProto tensor = Int64Tensor(coords);
  tensor.clear_dims();
  for (int64_t d : lead) tensor.add_dims(d);
  tensor.add_dims(b);
  OC_ASSIGN_OR_RETURN(std::string coords_name, ctx.rewriter.AddConstant(std::move(tensor)));
  Composer compose(ctx);
  ctx.node.set_input(1, compose.Before("Concat", {coords_name, indices},
                                       {IntAttribute("axis", static_cast<int64_t>(lead.size()))}));
  ctx.changes.push_back(
      {ChangeKind::kNodeInserted,
       absl::StrCat("Concat prefixing the indices with their ", b, " batch coordinates")});
  return absl::OkStatus();
}

namespace {

// The op combining a scattered value with the one it lands on.
const char* ReductionOp(absl::string_view reduction) {
  if (reduction == "add") return "Add";
  if (reduction == "mul") return "Mul";
  if (reduction == "max") return "Max";
  if (reduction == "min") return "Min";
  return nullptr;
}

// Whether the positions ScatterND (`nd`) or ScatterElements (along `axis`)
// writes with constant `indices` into `data_dims` are distinct.
bool WritesDistinct(const std::vector<int64_t>& indices, const std::vector<int64_t>& index_dims,
                    const std::vector<int64_t>& data_dims, bool nd, int64_t axis) {
  std::set<std::vector<int64_t>> seen;
  if (nd) {
    const int64_t k = index_dims.back();
    if (k <= 0 || k > static_cast<int64_t>(data_dims.size())) return false;
    for (size_t start = 0; start + k <= indices.size(); start += k) {
      std::vector<int64_t> tuple(indices.begin() + start, indices.begin() + start + k);
      for (int64_t j = 0; j < k; ++j) {
        if (tuple[j] < 0) tuple[j] += data_dims[j];
      }
      if (!seen.insert(tuple).second) return false;
    }
    return true;
  }
  std::vector<int64_t> position(index_dims.size(), 0);
  for (int64_t value : indices) {
    std::vector<int64_t> target = position;
    target[axis] = value < 0 ? value + data_dims[axis] : value;
    if (!seen.insert(target).second) return false;
    for (size_t d = index_dims.size(); d-- > 0;) {
      if (++position[d] < index_dims[d]) break;
      position[d] = 0;
    }
  }
  return true;
}

}  // namespace

// ScatterND/ScatterElements with a reduction (16: add, mul; 18: max, min)
// for a version without it: where the indices are constants that write
// distinct positions, the updates combined first with what they land on
// (GatherND/GatherElements of the data), then scattered.
absl::Status ScatterReductionByGather(AdapterContext& ctx) {
  const onnx::AttributeProto* attribute = FindAttribute(ctx.node, "reduction");
  const std::string reduction = attribute != nullptr ? attribute->s() : "none";
  if (reduction == "none") {
    RemoveAttribute(ctx.node, "reduction");
    return absl::OkStatus();
  }
  // Down to 16 only max and min are new; add and mul stay.
  if (ctx.to.FindAttr("reduction") != nullptr && (reduction == "add" || reduction == "mul")) {
    return absl::OkStatus();
  }
  const char* op = ReductionOp(reduction);
  const bool nd = ctx.from.name == "ScatterND";
  const std::string what = absl::StrCat("reduction '", reduction, "'");
  const TensorProto* indices = ctx.rewriter.ConstantOf(ctx.node.input(1));
  std::optional<std::vector<int64_t>> values = indices != nullptr ? IntValues(*indices) : std::nullopt;
  std::optional<std::vector<int64_t>> data_dims = StaticDims(ctx, ctx.node.input(0));
  if (op == nullptr || !values || !data_dims) {
    return Refuse(ctx, what,
                  "updates that share an index combine under it, and whether the indices are "
                  "distinct is not known at conversion (they are not constants of known data)");
  }
  const std::vector<int64_t> index_dims(indices->dims().begin(), indices->dims().end());
  const onnx::AttributeProto* axis_attribute = FindAttribute(ctx.node, "axis");
  int64_t axis = axis_attribute != nullptr ? axis_attribute->i() : 0;
  if (axis < 0) axis += static_cast<int64_t>(data_dims->size());
  if (index_dims.empty() || (!nd && (axis < 0 || axis >= static_cast<int64_t>(index_dims.size()))) ||
      !WritesDistinct(*values, index_dims, *data_dims, nd, axis)) {
    return Refuse(ctx, what, "the indices repeat a position, where the updates combine");
  }
  Composer compose(ctx);
  std::vector<onnx::AttributeProto> along;
  if (!nd) along.push_back(IntAttribute("axis", axis));
  std::string landed = compose.Before(nd ? "GatherND" : "GatherElements",
                                      {ctx.node.input(0), ctx.node.input(1)}, along);
  ctx.node.set_input(2, compose.Before(op, {landed, ctx.node.input(2)}));
  RemoveAttribute(ctx.node, "reduction");
  ctx.changes.push_back(
      {ChangeKind::kNodeInserted, absl::StrCat(op,
                                               " of the updates with the data they land "
                                               "on (distinct constant indices)")});
  return absl::OkStatus();
}

namespace {

// `n` copies of `value` as a 1-D tensor of `elem` (a float type).
TensorProto FilledFloats(int32_t elem, int64_t n, double value) {
  TensorProto tensor;
  tensor.set_data_type(elem);
  tensor.add_dims(n);
  for (int64_t i = 0; i < n; ++i) {
    if (elem == TensorProto::DOUBLE) {
      tensor.add_double_data(value);
    } else if (elem == TensorProto::FLOAT16) {
      tensor.add_int32_data(value == 1 ? 0x3C00 : 0);
    } else if (elem == TensorProto::BFLOAT16) {
      tensor.add_int32_data(value == 1 ? 0x3F80 : 0);
    } else {
      tensor.add_float_data(static_cast<float>(value));
    }
  }
  return tensor;
}

}  // namespace

absl::Status GroupNormPerChannelAfter(AdapterContext& ctx, int64_t groups) {
  const std::string x = ctx.node.input(0);
  const int64_t rank = RankOf(ctx, x);
  const int32_t elem = ElemOf(ctx, x);
  if (rank < 2 || elem == 0) {
    return Refuse(ctx, "per-channel scale and bias",
                  absl::StrCat("the rank or type of '", x, "' is unknown"));
  }
  Composer compose(ctx);
  std::vector<int64_t> trailing;
  for (int64_t d = 1; d + 1 < rank; ++d) trailing.push_back(d);
  std::string scale = ctx.node.input(1), bias = ctx.node.input(2);
  if (!trailing.empty()) {
    OC_ASSIGN_OR_RETURN(scale, compose.BeforeOverAxes("Unsqueeze", scale, trailing));
    OC_ASSIGN_OR_RETURN(bias, compose.BeforeOverAxes("Unsqueeze", bias, trailing));
  }
  OC_ASSIGN_OR_RETURN(std::string ones, ctx.rewriter.AddConstant(FilledFloats(elem, groups, 1)));
  OC_ASSIGN_OR_RETURN(std::string zeros, ctx.rewriter.AddConstant(FilledFloats(elem, groups, 0)));
  ctx.node.set_input(1, ones);
  ctx.node.set_input(2, zeros);
  const std::string output = ctx.node.output(0);
  compose.After("Add", {compose.After("Mul", {ctx.rewriter.DetachOutput(0), scale}), bias}, output);
  ctx.changes.push_back({ChangeKind::kNodeInserted,
                         "per-group scale 1 and bias 0, then Mul and Add by the "
                         "per-channel scale and bias"});
  ctx.changes.push_back({ChangeKind::kRoundingChanged,
                         "the affine step apart from the normalization: the "
                         "last bit may differ"});
  return absl::OkStatus();
}

// MaxPool-8+ for MaxPool-1, which has no Indices output (nor
// storage_order, which only orders them): an Indices output nothing reads
// is dropped; one that is read has no equivalent.
absl::Status MaxPoolWithoutIndices(AdapterContext& ctx) {
  RemoveAttribute(ctx.node, "storage_order");
  if (ctx.node.output_size() < 2 || ctx.node.output(1).empty()) return absl::OkStatus();
  const std::string indices = ctx.node.output(1);
  if (ctx.rewriter.ValueUsed(indices) != std::optional<bool>(false)) {
    return Refuse(ctx, absl::StrCat("the Indices output '", indices, "' is read"),
                  "it has no such output");
  }
  ctx.node.mutable_output()->RemoveLast();
  ctx.changes.push_back({ChangeKind::kOutputRemoved,
                         absl::StrCat("indices '", indices, "' dropped: nothing reads them")});
  return absl::OkStatus();
}

namespace {

// The range of the integer types blocked quantization writes as arithmetic.
struct IntRange {
  int32_t elem;
  double low, high;
};
constexpr IntRange kQuantizedRanges[] = {
    {TensorProto::INT8, -128, 127},       {TensorProto::UINT8, 0, 255},
    {TensorProto::INT16, -32768, 32767},  {TensorProto::UINT16, 0, 65535},
};

const IntRange* QuantizedRange(int32_t elem) {
  for (const IntRange& range : kQuantizedRanges) {
    if (range.elem == elem) return &range;
  }
  return nullptr;
}

// `value` (blocked along `axis`: one element per `block` of the data's
// axis) repeated to the data's shape `dims`: Unsqueeze after the axis, Tile
// by the block, Reshape, and a Slice when the last block is partial.
absl::StatusOr<std::string> RepeatBlocks(Composer& compose, const std::string& value,
                                         const std::vector<int64_t>& dims, int64_t axis,
                                         int64_t block) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t blocks = (dims[axis] + block - 1) / block;
  OC_ASSIGN_OR_RETURN(std::string lifted, compose.BeforeOverAxes("Unsqueeze", value, {axis + 1}));
  std::vector<int64_t> repeats(rank + 1, 1);
  repeats[axis + 1] = block;
  OC_ASSIGN_OR_RETURN(std::string repeats_name, compose.Ints(repeats));
  std::vector<int64_t> tiled_dims = dims;
  tiled_dims[axis] = blocks * block;
  OC_ASSIGN_OR_RETURN(std::string shape_name, compose.Ints(tiled_dims));
  std::string repeated =
      compose.Before("Reshape", {compose.Before("Tile", {lifted, repeats_name}), shape_name});
  if (blocks * block == dims[axis]) return repeated;
  OC_ASSIGN_OR_RETURN(std::string start, compose.Ints({0}));
  OC_ASSIGN_OR_RETURN(std::string end, compose.Ints({dims[axis]}));
  OC_ASSIGN_OR_RETURN(std::string axes, compose.Ints({axis}));
  return compose.Before("Slice", {repeated, start, end, axes});
}

}  // namespace

// QuantizeLinear/DequantizeLinear-21 with block_size (scales per block of
// an axis), for version 19 (per tensor or per axis): the arithmetic they
// define, with the scale and zero point repeated over each block:
// y = (float(x) - float(zp)) * scale, and y = saturate(round(x / scale) +
// zp) cast to the integer type (float scales; 8- and 16-bit integers).
// Without block_size, output_dtype becomes a zero point of that type.
absl::Status BlockedQuantization(AdapterContext& ctx) {
  const bool quantize = ctx.from.name == "QuantizeLinear";
  const onnx::AttributeProto* block_attribute = FindAttribute(ctx.node, "block_size");
  const int64_t block = block_attribute != nullptr ? block_attribute->i() : 0;
  const onnx::AttributeProto* dtype_attribute = FindAttribute(ctx.node, "output_dtype");
  const bool has_zero_point = ctx.node.input_size() > 2 && !ctx.node.input(2).empty();
  int32_t out_elem = TensorProto::UINT8;
  if (has_zero_point) out_elem = ElemOf(ctx, ctx.node.input(2));
  if (dtype_attribute != nullptr && dtype_attribute->i() != 0) {
    out_elem = static_cast<int32_t>(dtype_attribute->i());
  }
  RemoveAttribute(ctx.node, "block_size");
  RemoveAttribute(ctx.node, "output_dtype");
  const std::string what = absl::StrCat("block_size = ", block);
  if (block == 0) {
    if (!quantize || has_zero_point || out_elem == TensorProto::UINT8) return absl::OkStatus();
    // output_dtype without a zero point: a zero point of that type.
    TensorProto zero;
    zero.set_data_type(out_elem);
    zero.add_int32_data(0);
    OC_ASSIGN_OR_RETURN(std::string name, ctx.rewriter.AddConstant(std::move(zero)));
    while (ctx.node.input_size() < 3) ctx.node.add_input("");
    ctx.node.set_input(2, name);
    ctx.changes.push_back(
        {ChangeKind::kInputAdded, absl::StrCat("output_dtype as a zero point '", name, "'")});
    return absl::OkStatus();
  }
  const std::string x = ctx.node.input(0);
  const std::string scale = ctx.node.input(1);
  std::optional<std::vector<int64_t>> dims = StaticDims(ctx, x);
  const int32_t scale_elem = ElemOf(ctx, scale);
  const int32_t int_elem = quantize ? out_elem : ElemOf(ctx, x);
  const IntRange* range = QuantizedRange(int_elem);
  if (!dims || dims->empty() || block < 0) {
    return Refuse(ctx, what, absl::StrCat("the sizes of '", x, "' are not all known"));
  }
  if (scale_elem != TensorProto::FLOAT || range == nullptr) {
    return Refuse(ctx, what, "its arithmetic is written for float scales and 8- or 16-bit "
                             "integers only (float8 and 4-bit types round otherwise)");
  }
  const onnx::AttributeProto* axis_attribute = FindAttribute(ctx.node, "axis");
  int64_t axis = axis_attribute != nullptr ? axis_attribute->i() : 1;
  if (axis < 0) axis += static_cast<int64_t>(dims->size());
  if (axis < 0 || axis >= static_cast<int64_t>(dims->size())) {
    return Refuse(ctx, what, "its axis is out of range");
  }
  Composer compose(ctx);
  OC_ASSIGN_OR_RETURN(std::string full_scale, RepeatBlocks(compose, scale, *dims, axis, block));
  const onnx::AttributeProto to_float = IntAttribute("to", TensorProto::FLOAT);
  std::string zero_point;  // as float, repeated; empty: 0
  if (has_zero_point) {
    OC_ASSIGN_OR_RETURN(std::string repeated,
                        RepeatBlocks(compose, ctx.node.input(2), *dims, axis, block));
    zero_point = compose.Before("Cast", {repeated}, {to_float});
  }
  const std::string output = ctx.node.output(0);
  ctx.node.clear_attribute();
  if (quantize) {
    std::string scaled = compose.Before("Round", {compose.Before("Div", {x, full_scale})});
    if (!zero_point.empty()) scaled = compose.Before("Add", {scaled, zero_point});
    TensorProto low, high;
    for (auto [tensor, value] : {std::pair{&low, range->low}, std::pair{&high, range->high}}) {
      tensor->set_data_type(TensorProto::FLOAT);
      tensor->add_float_data(static_cast<float>(value));
    }
    OC_ASSIGN_OR_RETURN(std::string low_name, ctx.rewriter.AddConstant(std::move(low)));
    OC_ASSIGN_OR_RETURN(std::string high_name, ctx.rewriter.AddConstant(std::move(high)));
    std::string saturated = compose.Before("Clip", {scaled, low_name, high_name});
    ctx.node.set_op_type("Cast");
    ctx.node.clear_input();
    ctx.node.add_input(saturated);
    *ctx.node.add_attribute() = IntAttribute("to", int_elem);
  } else {
    std::string value = compose.Before("Cast", {x}, {to_float});
    if (!zero_point.empty()) value = compose.Before("Sub", {value, zero_point});
    ctx.node.set_op_type("Mul");
    ctx.node.clear_input();
    ctx.node.add_input(value);
    ctx.node.add_input(full_scale);
  }
  ctx.changes.push_back({ChangeKind::kNodeReplaced,
                         absl::StrCat(ctx.from.name, " by blocks of ", block, " -> ",
                                      quantize ? "Div, Round, Add, Clip, Cast" : "Cast, Sub, Mul",
                                      ", the scale and zero point repeated over each block")});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
