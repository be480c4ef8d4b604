// Inference for neural-network operators (convolutions, pooling, recurrent
// layers, losses) and control flow (If, Loop, Scan).

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "schema/inference_rules.h"
#include "schema/shape_util.h"

namespace onnxconvert::schema {
namespace {

constexpr int kAll = 1000;
using Dim = onnx::TensorShapeProto::Dimension;

// The INTS attribute `name`, `count` long; `count` copies of `fallback`
// when it is absent or empty, and an error naming it when it has another
// length.
absl::StatusOr<std::vector<int64_t>> IntsOr(InferenceContext& ctx, absl::string_view name,
                                            size_t count, int64_t fallback) {
  std::optional<std::vector<int64_t>> value = ctx.AttrInts(name);
  if (!value || value->empty()) return std::vector<int64_t>(count, fallback);
  if (value->size() != count) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has ", value->size(), " values, but ", count, " are needed"));
  }
  return *std::move(value);
}

// The attributes that place a convolution or pooling window on each
// spatial axis.
struct WindowAttrs {
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // begins, then ends
  std::string auto_pad;

  bool same_padding() const { return auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"; }
};

// Reads the window attributes of a node with `spatial` spatial axes.
absl::StatusOr<WindowAttrs> ReadWindowAttrs(InferenceContext& ctx, int spatial) {
  WindowAttrs attrs;
  OC_ASSIGN_OR_RETURN(attrs.strides, IntsOr(ctx, "strides", spatial, 1));
  OC_ASSIGN_OR_RETURN(attrs.dilations, IntsOr(ctx, "dilations", spatial, 1));
  OC_ASSIGN_OR_RETURN(attrs.pads, IntsOr(ctx, "pads", 2 * spatial, 0));
  attrs.auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  return attrs;
}

// The extent of a kernel of `kernel` taps `dilation` apart: nullopt when
// either is not positive or the extent overflows.
std::optional<int64_t> KernelExtent(int64_t kernel, int64_t dilation) {
  if (kernel <= 0 || dilation <= 0) return std::nullopt;
  return DimAdd(DimMul(dilation, kernel - 1), 1);
}

// Spatial output size of a convolution or pooling window on axis `i`;
// unknown when the input size is, when an attribute is out of range, or
// when the size overflows.
std::optional<int64_t> WindowDim(const Dim& in, int64_t kernel, const WindowAttrs& attrs, int i,
                                 bool ceil_mode) {
  int spatial = static_cast<int>(attrs.strides.size());
  int64_t stride = attrs.strides[i];
  if (!in.has_dim_value() || in.dim_value() < 0 || stride <= 0) return std::nullopt;
  int64_t size = in.dim_value();
  if (attrs.same_padding()) return CeilDiv(size, stride);
  std::optional<int64_t> extent = KernelExtent(kernel, attrs.dilations[i]);
  bool valid = attrs.auto_pad == "VALID";
  int64_t pad_begin = valid ? 0 : attrs.pads[i];
  std::optional<int64_t> padded = DimAdd(size, valid ? 0 : DimAdd(pad_begin, attrs.pads[i + spatial]));
  std::optional<int64_t> span = DimSub(padded, extent);
  if (!span) return std::nullopt;
  std::optional<int64_t> result =
      DimAdd(ceil_mode ? CeilDiv(*span, stride) : FloorDiv(*span, stride), 1);
  if (!result) return std::nullopt;
  // In ceil mode, a last window that would start in the end padding is
  // dropped.
  if (ceil_mode && *result > 0) {
    std::optional<int64_t> last_start = DimMul(*result - 1, stride);
    std::optional<int64_t> limit = DimAdd(size, pad_begin);
    if (!last_start || !limit) return std::nullopt;
    if (*last_start >= *limit) --*result;
  }
  return std::max<int64_t>(*result, 0);
}

// Conv, pooling: N, C (or M from the weights), then spatial dims.
absl::Status Window(InferenceContext& ctx, bool from_weights) {
  const onnx::TensorShapeProto* x = ShapeOf(ctx.InputType(0));
  if (x == nullptr && from_weights) {
    // X has W's rank: the output's, with N and the spatial sizes unknown.
    const onnx::TensorShapeProto* w = ShapeOf(ctx.InputType(1));
    if (w == nullptr || w->dim_size() < 2) return absl::OkStatus();
    onnx::TensorShapeProto* out = MutableShape(ctx.MutableOutputType(0));
    out->clear_dim();
    AddUnknownDim(out);
    *out->add_dim() = w->dim(0);
    for (int i = 2; i < w->dim_size(); ++i) AddUnknownDim(out);
    return absl::OkStatus();
  }
  if (x == nullptr || x->dim_size() < 2) return absl::OkStatus();
  int spatial = x->dim_size() - 2;
  std::optional<std::vector<int64_t>> kernel = ctx.AttrInts("kernel_shape");
  const onnx::TensorShapeProto* w = from_weights ? ShapeOf(ctx.InputType(1)) : nullptr;
  if (!kernel && w != nullptr && w->dim_size() == spatial + 2) {
    kernel.emplace();
    for (int i = 2; i < w->dim_size(); ++i) {
      if (!w->dim(i).has_dim_value()) return absl::OkStatus();
      kernel->push_back(w->dim(i).dim_value());
    }
  }
  onnx::TensorShapeProto* out = MutableShape(ctx.MutableOutputType(0));
  out->clear_dim();
  *out->add_dim() = x->dim(0);
  if (from_weights) {
    if (w != nullptr && w->dim_size() > 0) *out->add_dim() = w->dim(0);
    else AddUnknownDim(out);
  } else {
    *out->add_dim() = x->dim(1);
  }
  if (!kernel || kernel->size() != static_cast<size_t>(spatial)) {
    for (int i = 0; i < spatial; ++i) AddUnknownDim(out);
    return absl::OkStatus();
  }
  OC_ASSIGN_OR_RETURN(WindowAttrs attrs, ReadWindowAttrs(ctx, spatial));
  bool ceil_mode = ctx.AttrInt("ceil_mode", 0) != 0;
  for (int i = 0; i < spatial; ++i) {
    AddDim(out, WindowDim(x->dim(i + 2), (*kernel)[i], attrs, i, ceil_mode));
  }
  // MaxPool's optional indices have the output's shape.
  if (ctx.num_outputs() > 1 && ctx.HasOutput(1)) {
    *MutableShape(ctx.MutableOutputType(1)) = *out;
  }
  return absl::OkStatus();
}

absl::Status Conv(InferenceContext& ctx) { return Window(ctx, true); }
absl::Status Pool(InferenceContext& ctx) { return Window(ctx, false); }

absl::Status GlobalPool(InferenceContext& ctx) {
  const onnx::TensorShapeProto* x = ShapeOf(ctx.InputType(0));
  if (x == nullptr || x->dim_size() < 2) return absl::OkStatus();
  onnx::TensorShapeProto* out = MutableShape(ctx.MutableOutputType(0));
  out->clear_dim();
  *out->add_dim() = x->dim(0);
  *out->add_dim() = x->dim(1);
  for (int i = 2; i < x->dim_size(); ++i) AddDim(out, 1);
  return absl::OkStatus();
}

// ConvTranspose's output size on spatial axis `i` of input size `in`:
// unknown when an attribute is out of range or the size overflows; an
// error when it comes out negative.
absl::StatusOr<std::optional<int64_t>> TransposedDim(int64_t in, int64_t kernel,
                                                     const WindowAttrs& attrs,
                                                     int64_t output_padding, int i) {
  int spatial = static_cast<int>(attrs.strides.size());
  int64_t stride = attrs.strides[i];
  if (in < 0 || stride <= 0) return std::nullopt;
  if (attrs.same_padding()) return DimMul(in, stride);
  std::optional<int64_t> size = DimAdd(
      DimAdd(DimMul(stride, DimSub(in, 1)), output_padding), KernelExtent(kernel, attrs.dilations[i]));
  size = DimSub(DimSub(size, attrs.pads[i]), attrs.pads[i + spatial]);
  if (size && *size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the output size of spatial axis ", i, " is ", *size, ", a negative size"));
  }
  return size;
}

absl::Status ConvTranspose(InferenceContext& ctx) {
  const onnx::TensorShapeProto* x = ShapeOf(ctx.InputType(0));
  const onnx::TensorShapeProto* w = ShapeOf(ctx.InputType(1));
  if (x == nullptr || w == nullptr || x->dim_size() < 2 || w->dim_size() != x->dim_size()) {
    return absl::OkStatus();
  }
  int spatial = x->dim_size() - 2;
  int64_t group = ctx.AttrInt("group", 1);
  onnx::TensorShapeProto* out = MutableShape(ctx.MutableOutputType(0));
  out->clear_dim();
  *out->add_dim() = x->dim(0);
  if (w->dim(1).has_dim_value() && group > 0) AddDim(out, DimMul(w->dim(1).dim_value(), group));
  else AddUnknownDim(out);
  if (std::optional<std::vector<int64_t>> shape = ctx.AttrInts("output_shape");
      shape && shape->size() == static_cast<size_t>(spatial)) {
    for (int64_t d : *shape) {
      OC_RETURN_IF_ERROR(CheckSize(d, "an output_shape entry"));
      AddDim(out, d);
    }
    return absl::OkStatus();
  }
  std::vector<int64_t> kernel;
  if (std::optional<std::vector<int64_t>> k = ctx.AttrInts("kernel_shape")) kernel = *k;
  if (kernel.empty()) {
    // From the weights' spatial dims, when all are known.
    for (int i = 2; i < w->dim_size(); ++i) {
      if (!w->dim(i).has_dim_value()) {
        kernel.clear();
        break;
      }
      kernel.push_back(w->dim(i).dim_value());
    }
  }
  OC_ASSIGN_OR_RETURN(WindowAttrs attrs, ReadWindowAttrs(ctx, spatial));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding,
                      IntsOr(ctx, "output_padding", spatial, 0));
  for (int i = 0; i < spatial; ++i) {
    const Dim& in = x->dim(i + 2);
    if (!in.has_dim_value() || kernel.size() != static_cast<size_t>(spatial)) {
      AddUnknownDim(out);
      continue;
    }
    OC_ASSIGN_OR_RETURN(std::optional<int64_t> size,
                        TransposedDim(in.dim_value(), kernel[i], attrs, output_padding[i], i));
    AddDim(out, size);
  }
  return absl::OkStatus();
}

// RNN, GRU, LSTM: Y [seq, dirs, batch, hidden], Y_h / Y_c [dirs, batch, hidden]
// (batch first when layout = 1).
absl::Status Recurrent(InferenceContext& ctx) {
  const onnx::TensorShapeProto* x = ShapeOf(ctx.InputType(0));
  if (x == nullptr || x->dim_size() != 3) return absl::OkStatus();
  bool batch_first = ctx.AttrInt("layout", 0) != 0;
  const Dim& seq = x->dim(batch_first ? 1 : 0);
  const Dim& batch = x->dim(batch_first ? 0 : 1);
  std::string direction = ctx.AttrString("direction", "forward");
  Dim dirs, hidden;
  dirs.set_dim_value(direction == "bidirectional" ? 2 : 1);
  if (const onnx::AttributeProto* h = ctx.Attr("hidden_size")) {
    OC_RETURN_IF_ERROR(CheckSize(h->i(), "hidden_size"));
    hidden.set_dim_value(h->i());
  }
  auto set = [&](size_t out, std::initializer_list<const Dim*> dims) {
    if (!ctx.HasOutput(out)) return;
    onnx::TensorShapeProto* shape = MutableShape(ctx.MutableOutputType(out));
    shape->clear_dim();
    for (const Dim* d : dims) *shape->add_dim() = *d;
  };
  if (batch_first) {
    set(0, {&batch, &seq, &dirs, &hidden});
    set(1, {&batch, &dirs, &hidden});
    set(2, {&batch, &dirs, &hidden});
  } else {
    set(0, {&seq, &dirs, &batch, &hidden});
    set(1, {&dirs, &batch, &hidden});
    set(2, {&dirs, &batch, &hidden});
  }
  for (size_t out = 0; out < ctx.num_outputs(); ++out) {
    if (ctx.HasOutput(out) && ElemType(ctx.MutableOutputType(out)) == 0) {
      PropagateElemType(ctx, 0, out);
    }
  }
  return absl::OkStatus();
}

absl::Status If(InferenceContext& ctx) {
  absl::StatusOr<std::vector<onnx::TypeProto>> then_types = ctx.InferSubgraph("then_branch", {});
  if (!then_types.ok()) return then_types.status();
  absl::StatusOr<std::vector<onnx::TypeProto>> else_types = ctx.InferSubgraph("else_branch", {});
  if (!else_types.ok()) return else_types.status();
  for (size_t i = 0; i < ctx.num_outputs() && i < then_types->size(); ++i) {
    if (!ctx.HasOutput(i)) continue;
    onnx::TypeProto type = (*then_types)[i];
    if (i < else_types->size() && type.SerializeAsString() != (*else_types)[i].SerializeAsString()) {
      // Branches may differ in shape: keep the element type and the rank
      // only where they agree.
      const onnx::TensorShapeProto* a = ShapeOf(&type);
      const onnx::TensorShapeProto* b = ShapeOf(&(*else_types)[i]);
      if (type.has_tensor_type()) {
        if (a == nullptr || b == nullptr || a->dim_size() != b->dim_size()) {
          type.mutable_tensor_type()->clear_shape();
        } else {
          for (int d = 0; d < a->dim_size(); ++d) {
            if (a->dim(d).SerializeAsString() != b->dim(d).SerializeAsString()) {
              type.mutable_tensor_type()->mutable_shape()->mutable_dim(d)->Clear();
            }
          }
        }
      }
    }
    *ctx.MutableOutputType(i) = std::move(type);
  }
  return absl::OkStatus();
}

absl::Status Loop(InferenceContext& ctx) {
  // Body inputs: iteration count, condition, loop-carried values.
  onnx::TypeProto iteration, condition;
  iteration.mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  iteration.mutable_tensor_type()->mutable_shape();
  condition.mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  condition.mutable_tensor_type()->mutable_shape();
  std::vector<const onnx::TypeProto*> inputs = {&iteration, &condition};
  for (size_t i = 2; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.InputType(i));
  absl::StatusOr<std::vector<onnx::TypeProto>> body = ctx.InferSubgraph("body", inputs);
  if (!body.ok()) return body.status();
  size_t carried = ctx.num_inputs() > 2 ? ctx.num_inputs() - 2 : 0;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    size_t body_output = i + 1;  // skip the condition
    if (!ctx.HasOutput(i) || body_output >= body->size()) continue;
    onnx::TypeProto type = (*body)[body_output];
    if (i >= carried && type.has_tensor_type()) {
      // Scan outputs gain a leading iteration axis.
      onnx::TensorShapeProto stacked;
      stacked.add_dim();
      if (type.tensor_type().has_shape()) {
        for (const Dim& d : type.tensor_type().shape().dim()) *stacked.add_dim() = d;
        *type.mutable_tensor_type()->mutable_shape() = stacked;
      }
    }
    *ctx.MutableOutputType(i) = std::move(type);
  }
  return absl::OkStatus();
}

// `type` without its first `drop` dims (as it is when the shape is unknown
// or shorter).
onnx::TypeProto WithoutLeadingDims(const onnx::TypeProto* type, int drop) {
  onnx::TypeProto out = type != nullptr ? *type : onnx::TypeProto();
  if (!out.has_tensor_type() || !out.tensor_type().has_shape()) return out;
  auto* dims = out.mutable_tensor_type()->mutable_shape()->mutable_dim();
  if (dims->size() < drop) {
    out.mutable_tensor_type()->clear_shape();
  } else {
    dims->erase(dims->begin(), dims->begin() + drop);
  }
  return out;
}

// `type` with `leading` dims in front (when it has a shape).
onnx::TypeProto WithLeadingDims(onnx::TypeProto type, absl::Span<const Dim> leading) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return type;
  onnx::TensorShapeProto shape;
  for (const Dim& d : leading) *shape.add_dim() = d;
  for (const Dim& d : type.tensor_type().shape().dim()) *shape.add_dim() = d;
  *type.mutable_tensor_type()->mutable_shape() = std::move(shape);
  return type;
}

// Scan-8: sequence_lens, then the states [batch, ...] and the scan inputs
// [batch, sequence, ...]; the body sees one batch element and one step, and
// its outputs come back with the batch (states) and the steps (scan
// outputs) in front.
absl::Status BatchedScan(InferenceContext& ctx) {
  int64_t scan_inputs = ctx.AttrInt("num_scan_inputs", 0);
  if (ctx.num_inputs() < 1 || scan_inputs < 0 ||
      static_cast<uint64_t>(scan_inputs) > ctx.num_inputs() - 1) {
    return absl::InvalidArgumentError(absl::StrCat("num_scan_inputs is ", scan_inputs, " for ",
                                                   ctx.num_inputs(), " inputs"));
  }
  const size_t state = ctx.num_inputs() - 1 - static_cast<size_t>(scan_inputs);
  std::vector<onnx::TypeProto> sliced;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    sliced.push_back(WithoutLeadingDims(ctx.InputType(i), i - 1 < state ? 1 : 2));
  }
  std::vector<const onnx::TypeProto*> inputs;
  for (const onnx::TypeProto& t : sliced) inputs.push_back(&t);
  absl::StatusOr<std::vector<onnx::TypeProto>> body = ctx.InferSubgraph("body", inputs);
  if (!body.ok()) return body.status();
  Dim batch, steps;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const onnx::TensorShapeProto* shape = ShapeOf(ctx.InputType(i));
    if (shape == nullptr || shape->dim_size() < 1) continue;
    batch = shape->dim(0);
    if (i - 1 >= state && shape->dim_size() >= 2) steps = shape->dim(1);
    if (i - 1 >= state) break;
  }
  for (size_t i = 0; i < ctx.num_outputs() && i < body->size(); ++i) {
    if (!ctx.HasOutput(i)) continue;
    *ctx.MutableOutputType(i) = i < state ? WithLeadingDims((*body)[i], {batch})
                                          : WithLeadingDims((*body)[i], {batch, steps});
  }
  return absl::OkStatus();
}

// SequenceMap: the body runs on an element of each sequence input (and on
// each tensor input as it is); each output is a sequence of what the body
// gives.
absl::Status SequenceMap(InferenceContext& ctx) {
  std::vector<onnx::TypeProto> elements;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const onnx::TypeProto* type = ctx.InputType(i);
    elements.push_back(type == nullptr ? onnx::TypeProto()
                       : type->has_sequence_type() ? type->sequence_type().elem_type()
                                                   : *type);
  }
  std::vector<const onnx::TypeProto*> inputs;
  for (const onnx::TypeProto& t : elements) inputs.push_back(&t);
  absl::StatusOr<std::vector<onnx::TypeProto>> body = ctx.InferSubgraph("body", inputs);
  if (!body.ok()) return body.status();
  for (size_t i = 0; i < ctx.num_outputs() && i < body->size(); ++i) {
    if (!ctx.HasOutput(i) || (*body)[i].value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
    *ctx.MutableOutputType(i)->mutable_sequence_type()->mutable_elem_type() = (*body)[i];
  }
  return absl::OkStatus();
}

absl::Status Scan(InferenceContext& ctx) {
  if (ctx.op().since_version < 9) return BatchedScan(ctx);
  int64_t scan_inputs = ctx.AttrInt("num_scan_inputs", 0);
  if (scan_inputs < 0 || static_cast<uint64_t>(scan_inputs) > ctx.num_inputs()) {
    return absl::InvalidArgumentError(absl::StrCat("num_scan_inputs is ", scan_inputs, " for ",
                                                   ctx.num_inputs(), " inputs"));
  }
  size_t state = ctx.num_inputs() - static_cast<size_t>(scan_inputs);
  std::vector<onnx::TypeProto> sliced;
  sliced.reserve(ctx.num_inputs());
  std::optional<std::vector<int64_t>> axes = ctx.AttrInts("scan_input_axes");
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const onnx::TypeProto* type = ctx.InputType(i);
    sliced.push_back(type != nullptr ? *type : onnx::TypeProto());
    if (i < state || type == nullptr || !type->has_tensor_type() ||
        !type->tensor_type().has_shape()) {
      continue;
    }
    int64_t axis = axes && i - state < axes->size() ? (*axes)[i - state] : 0;
    int rank = type->tensor_type().shape().dim_size();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) continue;
    auto* dims = sliced.back().mutable_tensor_type()->mutable_shape()->mutable_dim();
    dims->erase(dims->begin() + axis);
  }
  std::vector<const onnx::TypeProto*> inputs;
  for (const onnx::TypeProto& t : sliced) inputs.push_back(&t);
  absl::StatusOr<std::vector<onnx::TypeProto>> body = ctx.InferSubgraph("body", inputs);
  if (!body.ok()) return body.status();
  Dim sequence;
  if (scan_inputs > 0) {
    const onnx::TensorShapeProto* first = ShapeOf(ctx.InputType(state));
    int64_t axis = axes && !axes->empty() ? (*axes)[0] : 0;
    if (first != nullptr && axis >= 0 && axis < first->dim_size()) sequence = first->dim(axis);
  }
  for (size_t i = 0; i < ctx.num_outputs() && i < body->size(); ++i) {
    if (!ctx.HasOutput(i)) continue;
    onnx::TypeProto type = (*body)[i];
    if (i >= state && type.has_tensor_type() && type.tensor_type().has_shape()) {
      onnx::TensorShapeProto stacked;
      *stacked.add_dim() = sequence;
      for (const Dim& d : type.tensor_type().shape().dim()) *stacked.add_dim() = d;
      *type.mutable_tensor_type()->mutable_shape() = stacked;
    }
    *ctx.MutableOutputType(i) = std::move(type);
  }
  return absl::OkStatus();
}

// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: a scalar when reduced,
// else the target's shape; SoftmaxCrossEntropyLoss's log_prob is like input.
absl::Status Loss(InferenceContext& ctx) {
  // Scores are [N, C] or [N, C, d1, ...].
  if (const onnx::TensorShapeProto* scores = ShapeOf(ctx.InputType(0));
      scores != nullptr && scores->dim_size() < 2) {
    return ctx.Error(absl::StrCat("input 0 has rank ", scores->dim_size(), ", below 2"));
  }
  std::string reduction = ctx.AttrString("reduction", "mean");
  onnx::TensorShapeProto* out = MutableShape(ctx.MutableOutputType(0));
  out->clear_dim();
  if (reduction == "none") {
    const onnx::TensorShapeProto* target = ShapeOf(ctx.InputType(1));
    if (target == nullptr) ctx.MutableOutputType(0)->mutable_tensor_type()->clear_shape();
    else *out = *target;
  }
  if (ctx.num_outputs() > 1 && ctx.HasOutput(1)) PropagateShape(ctx, 0, 1);
  return absl::OkStatus();
}

std::vector<InferenceRule> BuildRules() {
  return {
      {"", "Conv", 1, kAll, Conv},
      {"", "ConvInteger", 1, kAll, Conv},
      {"", "ConvTranspose", 1, kAll, ConvTranspose},
      {"", "MaxPool", 1, kAll, Pool},
      {"", "AveragePool", 1, kAll, Pool},
      {"", "LpPool", 1, kAll, Pool},
      {"", "GlobalAveragePool", 1, kAll, GlobalPool},
      {"", "GlobalMaxPool", 1, kAll, GlobalPool},
      {"", "GlobalLpPool", 1, kAll, GlobalPool},
      {"", "RNN", 1, kAll, Recurrent},
      {"", "GRU", 1, kAll, Recurrent},
      {"", "LSTM", 1, kAll, Recurrent},
      {"", "If", 1, kAll, If},
      {"", "Loop", 1, kAll, Loop},
      {"", "Scan", 1, kAll, Scan},
      {"", "SequenceMap", 1, kAll, SequenceMap},
      {"", "NegativeLogLikelihoodLoss", 1, kAll, Loss},
      {"", "SoftmaxCrossEntropyLoss", 1, kAll, Loss},
  };
}

}  // namespace

absl::Span<const InferenceRule> NnRules() {
  static const auto* rules = new std::vector<InferenceRule>(BuildRules());
  return *rules;
}

}  // namespace onnxconvert::schema
