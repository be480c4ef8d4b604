// Inference for attention, sampling, window functions, sequences, optionals
// and ai.onnx.ml operators whose output types come from attributes.

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "schema/inference_rules.h"
#include "schema/shape_util.h"

namespace onnxconvert::schema {
namespace {

constexpr int kAll = 1000;
using Dim = onnx::TensorShapeProto::Dimension;

// A dim of `value`, unknown when it is nullopt.
Dim Known(std::optional<int64_t> value) {
  Dim dim;
  if (value) dim.set_dim_value(*value);
  return dim;
}

// a * b, unknown when `a` is or the product overflows.
Dim Product(const Dim& a, int64_t b) {
  return a.has_dim_value() ? Known(DimMul(a.dim_value(), b)) : Dim();
}

void SetShape(InferenceContext& ctx, size_t out, std::initializer_list<Dim> dims) {
  if (!ctx.HasOutput(out)) return;
  onnx::TensorShapeProto* shape = MutableShape(ctx.MutableOutputType(out));
  shape->clear_dim();
  for (const Dim& d : dims) *shape->add_dim() = d;
}

// Attention-23/24: Q, K, V in 4-D [B, heads, seq, head_size] or 3-D
// [B, seq, heads * head_size].
absl::Status Attention(InferenceContext& ctx) {
  const onnx::TensorShapeProto* q = ShapeOf(ctx.InputType(0));
  const onnx::TensorShapeProto* k = ShapeOf(ctx.InputType(1));
  const onnx::TensorShapeProto* v = ShapeOf(ctx.InputType(2));
  if (q == nullptr || k == nullptr || v == nullptr) return absl::OkStatus();
  const onnx::TensorShapeProto* past_key = ctx.HasInput(4) ? ShapeOf(ctx.InputType(4)) : nullptr;
  Dim total;  // past + current kv sequence length
  bool four_d = q->dim_size() == 4;
  if (four_d && (k->dim_size() != 4 || v->dim_size() != 4)) return absl::OkStatus();
  if (!four_d && (q->dim_size() != 3 || k->dim_size() != 3 || v->dim_size() != 3)) {
    return absl::OkStatus();
  }
  const Dim& kv_seq = k->dim(four_d ? 2 : 1);
  if (!ctx.HasInput(4)) {
    total = kv_seq;
  } else if (past_key != nullptr && past_key->dim_size() == 4 &&
             past_key->dim(2).has_dim_value() && kv_seq.has_dim_value()) {
    total = Known(DimAdd(past_key->dim(2).dim_value(), kv_seq.dim_value()));
  }
  if (four_d) {
    SetShape(ctx, 0, {q->dim(0), q->dim(1), q->dim(2), v->dim(3)});
    SetShape(ctx, 1, {k->dim(0), k->dim(1), total, k->dim(3)});
    SetShape(ctx, 2, {v->dim(0), v->dim(1), total, v->dim(3)});
    SetShape(ctx, 3, {q->dim(0), q->dim(1), q->dim(2), total});
    return absl::OkStatus();
  }
  const onnx::AttributeProto* q_heads = ctx.Attr("q_num_heads");
  const onnx::AttributeProto* kv_heads = ctx.Attr("kv_num_heads");
  if (q_heads == nullptr || kv_heads == nullptr || q_heads->i() <= 0 || kv_heads->i() <= 0) {
    return absl::OkStatus();
  }
  const Dim& v_hidden = v->dim(2);
  Dim v_head = v_hidden.has_dim_value() ? Known(v_hidden.dim_value() / kv_heads->i()) : Dim();
  Dim k_head = k->dim(2).has_dim_value() ? Known(k->dim(2).dim_value() / kv_heads->i()) : Dim();
  SetShape(ctx, 0, {q->dim(0), q->dim(1), Product(v_head, q_heads->i())});
  SetShape(ctx, 1, {k->dim(0), Known(kv_heads->i()), total, k_head});
  SetShape(ctx, 2, {v->dim(0), Known(kv_heads->i()), total, v_head});
  SetShape(ctx, 3, {q->dim(0), Known(q_heads->i()), q->dim(1), total});
  return absl::OkStatus();
}

// LinearAttention-27 with 3-D query, key, value [B, seq, heads * size]:
// output [B, seq, q_heads * v_size]; present_state [B, kv_heads, k_size,
// v_size], typed like past_state or else like the query.
absl::Status LinearAttention(InferenceContext& ctx) {
  if (ElemType(ctx.MutableOutputType(1)) == 0 && ctx.HasOutput(1)) {
    PropagateElemType(ctx, ctx.HasInput(3) ? 3 : 0, 1);
  }
  const onnx::TensorShapeProto* q = ShapeOf(ctx.InputType(0));
  const onnx::TensorShapeProto* k = ShapeOf(ctx.InputType(1));
  const onnx::TensorShapeProto* v = ShapeOf(ctx.InputType(2));
  const onnx::AttributeProto* q_heads = ctx.Attr("q_num_heads");
  const onnx::AttributeProto* kv_heads = ctx.Attr("kv_num_heads");
  if (q == nullptr || k == nullptr || v == nullptr || q->dim_size() != 3 ||
      k->dim_size() != 3 || v->dim_size() != 3 || q_heads == nullptr || kv_heads == nullptr ||
      q_heads->i() <= 0 || kv_heads->i() <= 0) {
    return absl::OkStatus();
  }
  auto per_head = [&](const Dim& hidden) {
    return hidden.has_dim_value() ? Known(hidden.dim_value() / kv_heads->i()) : Dim();
  };
  Dim k_size = per_head(k->dim(2)), v_size = per_head(v->dim(2));
  SetShape(ctx, 0, {q->dim(0), q->dim(1), Product(v_size, q_heads->i())});
  SetShape(ctx, 1, {q->dim(0), Known(kv_heads->i()), k_size, v_size});
  return absl::OkStatus();
}

// GridSample: Y [N, C, *grid spatial dims].
absl::Status GridSample(InferenceContext& ctx) {
  const onnx::TensorShapeProto* x = ShapeOf(ctx.InputType(0));
  const onnx::TensorShapeProto* grid = ShapeOf(ctx.InputType(1));
  if (x == nullptr || grid == nullptr || x->dim_size() < 3 ||
      grid->dim_size() != x->dim_size()) {
    return absl::OkStatus();
  }
  onnx::TensorShapeProto* out = MutableShape(ctx.MutableOutputType(0));
  out->clear_dim();
  *out->add_dim() = x->dim(0);
  *out->add_dim() = x->dim(1);
  for (int i = 1; i < grid->dim_size() - 1; ++i) *out->add_dim() = grid->dim(i);
  return absl::OkStatus();
}

// Window functions and MelWeightMatrix: the type is `output_datatype`.
absl::Status OutputDatatype(InferenceContext& ctx) {
  SetElemType(ctx.MutableOutputType(0),
              ElemTypeFromAttr(ctx.AttrInt("output_datatype", onnx::TensorProto::FLOAT)));
  if (ctx.node().op_type() != "MelWeightMatrix") {
    std::optional<std::vector<int64_t>> size = KnownInts(ctx, 0);
    onnx::TensorShapeProto* out = MutableShape(ctx.MutableOutputType(0));
    out->clear_dim();
    if (size && size->size() == 1) {
      OC_RETURN_IF_ERROR(CheckSize((*size)[0], "size"));
      AddDim(out, (*size)[0]);
    } else {
      AddUnknownDim(out);
    }
  }
  return absl::OkStatus();
}

absl::Status OptionalGetElement(InferenceContext& ctx) {
  const onnx::TypeProto* input = ctx.InputType(0);
  if (input == nullptr) return absl::OkStatus();
  *ctx.MutableOutputType(0) = input->has_optional_type() ? input->optional_type().elem_type()
                                                         : *input;
  return absl::OkStatus();
}

absl::Status OptionalHasElement(InferenceContext& ctx) {
  SetElemType(ctx.MutableOutputType(0), onnx::TensorProto::BOOL);
  MutableShape(ctx.MutableOutputType(0))->clear_dim();
  return absl::OkStatus();
}

absl::Status SplitToSequence(InferenceContext& ctx) {
  const onnx::TypeProto* input = ctx.InputType(0);
  if (input == nullptr || !input->has_tensor_type()) return absl::OkStatus();
  onnx::TypeProto* elem = ctx.MutableOutputType(0)->mutable_sequence_type()->mutable_elem_type();
  elem->mutable_tensor_type()->set_elem_type(input->tensor_type().elem_type());
  return absl::OkStatus();
}

// LabelEncoder: the output type follows the values_* (or default) attribute.
absl::Status LabelEncoder(InferenceContext& ctx) {
  PropagateShape(ctx, 0, 0);
  struct Source {
    const char* attribute;
    int32_t type;
  };
  static constexpr Source kSources[] = {
      {"values_strings", onnx::TensorProto::STRING}, {"values_int64s", onnx::TensorProto::INT64},
      {"values_floats", onnx::TensorProto::FLOAT},
  };
  for (const Source& source : kSources) {
    if (ctx.Attr(source.attribute) != nullptr) {
      SetElemType(ctx.MutableOutputType(0), source.type);
      return absl::OkStatus();
    }
  }
  if (const onnx::AttributeProto* values = ctx.Attr("values_tensor"); values && values->has_t()) {
    SetElemType(ctx.MutableOutputType(0), values->t().data_type());
    return absl::OkStatus();
  }
  if (ctx.op().since_version == 1) {
    // Version 1 maps strings to int64s and back.
    SetElemType(ctx.MutableOutputType(0), ElemType(ctx.InputType(0)) == onnx::TensorProto::STRING
                                              ? onnx::TensorProto::INT64
                                              : onnx::TensorProto::STRING);
  }
  return absl::OkStatus();
}

// LayerNormalization's Mean and InvStdDev are of `stash_type`.
absl::Status StashType(InferenceContext& ctx) {
  int32_t stash = ElemTypeFromAttr(ctx.AttrInt("stash_type", onnx::TensorProto::FLOAT));
  for (size_t out = 1; out < ctx.num_outputs(); ++out) {
    if (ctx.HasOutput(out)) SetElemType(ctx.MutableOutputType(out), stash);
  }
  return absl::OkStatus();
}

// Optimizers of ai.onnx.preview.training: inputs R, T, then groups of n
// tensors (X, G, and the op's state tensors); outputs are the updated X and
// state groups, each shaped like the input it updates.
template <int kInputGroups, int... kOutputGroups>
absl::Status Optimizer(InferenceContext& ctx) {
  if (ctx.num_inputs() < 2) return absl::OkStatus();
  size_t n = (ctx.num_inputs() - 2) / kInputGroups;
  constexpr int kGroups[] = {kOutputGroups...};
  for (size_t out = 0; out < ctx.num_outputs() && n > 0; ++out) {
    size_t group = out / n;
    if (group >= sizeof...(kOutputGroups)) break;
    size_t in = 2 + kGroups[group] * n + out % n;
    PropagateShape(ctx, in, out);
    if (ElemType(ctx.MutableOutputType(out)) == 0) PropagateElemType(ctx, in, out);
  }
  return absl::OkStatus();
}

std::vector<InferenceRule> BuildRules() {
  return {
      {"", "Attention", 1, kAll, Attention},
      {"", "GridSample", 1, kAll, GridSample},
      {"", "LinearAttention", 1, kAll, LinearAttention},
      {"", "HannWindow", 1, kAll, OutputDatatype},
      {"", "HammingWindow", 1, kAll, OutputDatatype},
      {"", "BlackmanWindow", 1, kAll, OutputDatatype},
      {"", "MelWeightMatrix", 1, kAll, OutputDatatype},
      {"", "Bernoulli", 1, kAll, InferLikeInputTypedByDtype},
      {"", "OptionalGetElement", 1, kAll, OptionalGetElement},
      {"", "OptionalHasElement", 1, kAll, OptionalHasElement},
      {"", "SplitToSequence", 1, kAll, SplitToSequence},
      {"ai.onnx.ml", "LabelEncoder", 1, kAll, LabelEncoder},
      {"ai.onnx.preview.training", "Adagrad", 1, kAll, Optimizer<3, 0, 2>},
      {"ai.onnx.preview.training", "Momentum", 1, kAll, Optimizer<3, 0, 2>},
      {"ai.onnx.preview.training", "Adam", 1, kAll, Optimizer<4, 0, 2, 3>},
  };
}

}  // namespace

absl::Span<const InferenceRule> MiscRules() {
  static const auto* rules = new std::vector<InferenceRule>(BuildRules());
  return *rules;
}

// Runs after the family rule of LayerNormalization (see inference_rules.cc).
absl::Status LayerNormalizationStashType(InferenceContext& ctx) { return StashType(ctx); }

}  // namespace onnxconvert::schema
