// Inference for neural-network operators (convolutions, pooling, recurrent
// layers, losses) and control flow (If, Loop, Scan).

#include <cmath>

#include "absl/strings/str_cat.h"
#include "schema/inference_rules.h"
#include "schema/shape_util.h"

namespace onnxconvert::schema {
namespace {

constexpr int kAll = 1000;
using Dim = onnx::TensorShapeProto::Dimension;

std::vector<int64_t> IntsOr(InferenceContext& ctx, absl::string_view name, size_t count,
                            int64_t fallback) {
  std::optional<std::vector<int64_t>> value = ctx.AttrInts(name);
  return value && !value->empty() ? *value : std::vector<int64_t>(count, fallback);
}

// Spatial output size of a convolution or pooling window.
Dim WindowDim(const Dim& in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_total,
              const std::string& auto_pad, bool ceil_mode) {
  Dim out;
  if (!in.has_dim_value() || stride <= 0) return out;
  int64_t size = in.dim_value();
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    out.set_dim_value((size + stride - 1) / stride);
    return out;
  }
  int64_t effective = dilation * (kernel - 1) + 1;
  if (auto_pad == "VALID") pad_total = 0;
  double steps = static_cast<double>(size + pad_total - effective) / stride;
  int64_t result = (ceil_mode ? static_cast<int64_t>(std::ceil(steps))
                              : static_cast<int64_t>(std::floor(steps))) + 1;
  if (ceil_mode && (result - 1) * stride >= size + pad_total / 2) --result;
  out.set_dim_value(std::max<int64_t>(result, 0));
  return out;
}

// Conv, pooling: N, C (or M from the weights), then spatial dims.
absl::Status Window(InferenceContext& ctx, bool from_weights) {
  const onnx::TensorShapeProto* x = ShapeOf(ctx.InputType(0));
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
  if (!kernel || static_cast<int>(kernel->size()) != spatial) {
    for (int i = 0; i < spatial; ++i) AddUnknownDim(out);
    return absl::OkStatus();
  }
  std::vector<int64_t> strides = IntsOr(ctx, "strides", spatial, 1);
  std::vector<int64_t> dilations = IntsOr(ctx, "dilations", spatial, 1);
  std::vector<int64_t> pads = IntsOr(ctx, "pads", 2 * spatial, 0);
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  bool ceil_mode = ctx.AttrInt("ceil_mode", 0) != 0;
  for (int i = 0; i < spatial; ++i) {
    *out->add_dim() = WindowDim(x->dim(i + 2), (*kernel)[i], strides[i], dilations[i],
                                pads[i] + pads[i + spatial], auto_pad, ceil_mode);
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
  if (w->dim(1).has_dim_value()) AddDim(out, w->dim(1).dim_value() * group);
  else AddUnknownDim(out);
  if (std::optional<std::vector<int64_t>> shape = ctx.AttrInts("output_shape");
      shape && static_cast<int>(shape->size()) == spatial) {
    for (int64_t d : *shape) AddDim(out, d);
    return absl::OkStatus();
  }
  std::vector<int64_t> kernel;
  if (std::optional<std::vector<int64_t>> k = ctx.AttrInts("kernel_shape")) kernel = *k;
  for (int i = 2; kernel.empty() && i < w->dim_size(); ++i) {
    if (!w->dim(i).has_dim_value()) break;
    if (static_cast<int>(kernel.size()) < spatial) kernel.push_back(w->dim(i).dim_value());
  }
  std::vector<int64_t> strides = IntsOr(ctx, "strides", spatial, 1);
  std::vector<int64_t> dilations = IntsOr(ctx, "dilations", spatial, 1);
  std::vector<int64_t> pads = IntsOr(ctx, "pads", 2 * spatial, 0);
  std::vector<int64_t> output_padding = IntsOr(ctx, "output_padding", spatial, 0);
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  for (int i = 0; i < spatial; ++i) {
    const Dim& in = x->dim(i + 2);
    if (!in.has_dim_value() || static_cast<int>(kernel.size()) != spatial) {
      AddUnknownDim(out);
      continue;
    }
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      AddDim(out, in.dim_value() * strides[i]);
      continue;
    }
    AddDim(out, strides[i] * (in.dim_value() - 1) + output_padding[i] +
                    ((kernel[i] - 1) * dilations[i] + 1) - pads[i] - pads[i + spatial]);
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
  if (const onnx::AttributeProto* h = ctx.Attr("hidden_size")) hidden.set_dim_value(h->i());
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

absl::Status Scan(InferenceContext& ctx) {
  if (ctx.op().since_version < 9) return absl::OkStatus();  // batched form
  int64_t scan_inputs = ctx.AttrInt("num_scan_inputs", 0);
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
