// Inference for elementwise operators: unary ops that keep their input's
// shape, broadcasting ops, and casts.

#include "schema/inference_rules.h"
#include "schema/shape_util.h"

namespace onnxconvert::schema {
namespace {

constexpr int kAll = 1000;

// Output 0 has input 0's shape (and element type if not set by constraints).
absl::Status SameShape(InferenceContext& ctx) {
  if (ctx.SameTypeParam(0, 0)) {
    ctx.ShareInputType(0, 0);  // same element type and shape: no copy
    return absl::OkStatus();
  }
  PropagateShape(ctx, 0, 0);
  return absl::OkStatus();
}

// Every output has input 0's shape (Dropout's mask, ...).
absl::Status AllOutputsSameShape(InferenceContext& ctx) {
  for (size_t out = 0; out < ctx.num_outputs(); ++out) {
    if (ctx.HasOutput(out)) PropagateShape(ctx, 0, out);
  }
  return absl::OkStatus();
}

absl::Status Identity(InferenceContext& ctx) {
  PropagateType(ctx, 0, 0);
  if (const onnx::TensorShapeProto* data = ctx.InputShapeData(0)) {
    ctx.SetOutputShapeData(0, *data);
  }
  if (const onnx::TensorProto* constant = ctx.InputConstant(0)) {
    ctx.ShareOutputConstant(0, *constant);  // a weight may be gigabytes
  }
  return absl::OkStatus();
}

absl::Status Cast(InferenceContext& ctx) {
  SetElemType(ctx.MutableOutputType(0), ElemTypeFromAttr(ctx.AttrInt("to", 0)));
  PropagateShape(ctx, 0, 0);
  if (const onnx::TensorShapeProto* data = ctx.InputShapeData(0)) {
    ctx.SetOutputShapeData(0, *data);
  }
  return absl::OkStatus();
}

absl::Status CastLike(InferenceContext& ctx) {
  PropagateElemType(ctx, 1, 0);
  PropagateShape(ctx, 0, 0);
  return absl::OkStatus();
}

absl::Status BitCast(InferenceContext& ctx) {
  SetElemType(ctx.MutableOutputType(0), ElemTypeFromAttr(ctx.AttrInt("to", 0)));
  PropagateShape(ctx, 0, 0);
  return absl::OkStatus();
}

// Folds integer arithmetic on small known values (shape computations); an
// element whose result overflows is unknown.
absl::Status FoldIntegers(InferenceContext& ctx,
                          std::optional<int64_t> (*op)(std::optional<int64_t>,
                                                       std::optional<int64_t>)) {
  std::optional<std::vector<int64_t>> a = KnownInts(ctx, 0);
  if (!a || a->empty()) return absl::OkStatus();
  std::optional<std::vector<int64_t>> b = KnownInts(ctx, 1);
  if (!b || b->empty()) return absl::OkStatus();
  if (a->size() != b->size() && a->size() != 1 && b->size() != 1) return absl::OkStatus();
  size_t n = std::max(a->size(), b->size());
  onnx::TensorShapeProto data;
  for (size_t i = 0; i < n; ++i) {
    int64_t x = (*a)[a->size() == 1 ? 0 : i];
    int64_t y = (*b)[b->size() == 1 ? 0 : i];
    AddDim(&data, op(x, y));
  }
  ctx.SetOutputShapeData(0, std::move(data));
  return absl::OkStatus();
}

absl::Status Broadcast(InferenceContext& ctx) { return InferBroadcastShape(ctx); }

template <std::optional<int64_t> (*Op)(std::optional<int64_t>, std::optional<int64_t>)>
absl::Status BroadcastAndFold(InferenceContext& ctx) {
  absl::Status status = InferBroadcastShape(ctx);
  if (!status.ok()) return status;
  return FoldIntegers(ctx, Op);
}

// Sets output 0's element type from the output_dtype attribute; false when
// that is unset (0).
bool ElemTypeFromOutputDtype(InferenceContext& ctx) {
  int64_t output_dtype = ctx.AttrInt("output_dtype", 0);
  if (output_dtype == 0) return false;
  SetElemType(ctx.MutableOutputType(0), ElemTypeFromAttr(output_dtype));
  return true;
}

// QuantizeLinear and DequantizeLinear: y shaped like x, of output_dtype's
// type when that is set, else of input `typed_by`'s type when `by_input`,
// else of `fallback`. (Output 0 is untyped when a rule starts, so the
// first test only makes its type.)
absl::Status QuantizationRule(InferenceContext& ctx, bool by_input, size_t typed_by,
                              int32_t fallback) {
  PropagateShape(ctx, 0, 0);
  if (ElemType(ctx.MutableOutputType(0)) != 0 || ElemTypeFromOutputDtype(ctx)) {
    return absl::OkStatus();
  }
  if (by_input) {
    PropagateElemType(ctx, typed_by, 0);
  } else {
    SetElemType(ctx.MutableOutputType(0), fallback);
  }
  return absl::OkStatus();
}

// The zero point's type, else uint8.
absl::Status QuantizeLinear(InferenceContext& ctx) {
  return QuantizationRule(ctx, ctx.HasInput(2), 2, onnx::TensorProto::UINT8);
}

// The scale's type from 19, else float.
absl::Status DequantizeLinear(InferenceContext& ctx) {
  return QuantizationRule(ctx, ctx.op().since_version >= 19, 1, onnx::TensorProto::FLOAT);
}

// LayerNormalization / RMSNormalization: Y like X; Mean and InvStdDev keep
// the axes before `axis` and are 1 after.
absl::Status Normalization(InferenceContext& ctx) {
  PropagateShape(ctx, 0, 0);
  absl::Status typed = LayerNormalizationStashType(ctx);
  if (!typed.ok()) return typed;
  const onnx::TensorShapeProto* shape = ShapeOf(ctx.InputType(0));
  if (shape == nullptr) return absl::OkStatus();
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.AttrInt("axis", -1), shape->dim_size(), "axis");
  if (!axis.ok()) return axis.status();
  for (size_t out = 1; out < ctx.num_outputs(); ++out) {
    if (!ctx.HasOutput(out)) continue;
    onnx::TensorShapeProto* reduced = MutableShape(ctx.MutableOutputType(out));
    for (int i = 0; i < shape->dim_size(); ++i) {
      if (i < *axis) {
        *reduced->add_dim() = shape->dim(i);
      } else {
        AddDim(reduced, 1);
      }
    }
  }
  return absl::OkStatus();
}

constexpr const char* kSameShapeOps[] = {
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Elu",
    "Erf", "Exp", "Floor", "HardSigmoid", "HardSwish", "IsInf", "IsNaN", "LeakyRelu", "Log",
    "Mish", "Neg", "Not", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign",
    "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu", "Celu",
    "Gelu", "Swish", "BitwiseNot", "Softmax", "LogSoftmax", "Hardmax", "LpNormalization",
    "MeanVarianceNormalization", "Clip", "CumSum", "CumProd", "Trilu", "LRN",
    "InstanceNormalization", "GroupNormalization", "PRelu", "ReverseSequence", "ScatterElements", "ScatterND",
    "Scatter", "DynamicQuantizeLinear", "RegexFullMatch",
    "BatchNormalization", "TensorScatter",
};

// ai.onnx.ml operators whose output has the input's shape.
constexpr const char* kSameShapeMlOps[] = {"Binarizer", "Scaler", "Normalizer", "Imputer"};

constexpr const char* kBroadcastOps[] = {
    "And", "Or", "Xor", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Pow",
    "Mod", "Sum", "Max", "Min", "Mean", "Where", "BitShift", "BitwiseAnd", "BitwiseOr",
    "BitwiseXor", "StringConcat",
};

std::vector<InferenceRule> BuildRules() {
  std::vector<InferenceRule> rules;
  for (const char* op : kSameShapeOps) rules.push_back({"", op, 1, kAll, SameShape});
  for (const char* op : kSameShapeMlOps) rules.push_back({"ai.onnx.ml", op, 1, kAll, SameShape});
  for (const char* op : kBroadcastOps) rules.push_back({"", op, 1, kAll, Broadcast});
  rules.push_back({"", "Dropout", 1, kAll, AllOutputsSameShape});
  rules.push_back({"", "Add", 1, kAll, BroadcastAndFold<DimAdd>});
  rules.push_back({"", "Sub", 1, kAll, BroadcastAndFold<DimSub>});
  rules.push_back({"", "Mul", 1, kAll, BroadcastAndFold<DimMul>});
  rules.push_back({"", "Div", 1, kAll, BroadcastAndFold<DimDiv>});
  rules.push_back({"", "Identity", 1, kAll, Identity});
  rules.push_back({"", "Cast", 1, kAll, Cast});
  rules.push_back({"", "CastLike", 1, kAll, CastLike});
  rules.push_back({"", "BitCast", 1, kAll, BitCast});
  rules.push_back({"", "QuantizeLinear", 1, kAll, QuantizeLinear});
  rules.push_back({"", "DequantizeLinear", 1, kAll, DequantizeLinear});
  rules.push_back({"", "LayerNormalization", 1, kAll, Normalization});
  rules.push_back({"", "RMSNormalization", 1, kAll, Normalization});
  return rules;
}

}  // namespace

absl::Span<const InferenceRule> ElementwiseRules() {
  static const auto* rules = new std::vector<InferenceRule>(BuildRules());
  return *rules;
}

}  // namespace onnxconvert::schema
