// Legacy broadcasting (opset 1-6: `broadcast` and `axis` attributes, B
// broadcast onto A) and numpy broadcasting (opset 7 on). Upgrading drops the
// attributes where both mean the same; downgrading spells the legacy form
// where the shapes allow it. Anything else is refused with the reason.

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/compositions.h"
#include "adapters/families.h"
#include "adapters/rewrites.h"

namespace onnxconvert::adapters {
namespace {

const onnx::TensorShapeProto* ShapeOf(AdapterContext& ctx, int input) {
  if (ctx.node.input_size() <= input) return nullptr;
  const onnx::TypeProto* type = ctx.rewriter.TypeOf(ctx.node.input(input));
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    return nullptr;
  }
  return &type->tensor_type().shape();
}

absl::Status LegacyToNumpy(AdapterContext& ctx) {
  const onnx::AttributeProto* broadcast = FindAttribute(ctx.node, "broadcast");
  const onnx::AttributeProto* axis = FindAttribute(ctx.node, "axis");
  if (broadcast != nullptr && broadcast->i() != 0 && axis != nullptr) {
    const onnx::TensorShapeProto* a = ShapeOf(ctx, 0);
    const onnx::TensorShapeProto* b = ShapeOf(ctx, 1);
    if (a == nullptr || b == nullptr) {
      return absl::FailedPreconditionError(
          "broadcast with an explicit axis needs the ranks of both inputs, which are unknown");
    }
    if (axis->i() != a->dim_size() - b->dim_size()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "B is broadcast from axis ", axis->i(), " of A, which numpy broadcasting (",
          ctx.to.Label(), ") cannot express without reshaping B (not supported yet)"));
    }
  }
  bool had = broadcast != nullptr || axis != nullptr;
  RemoveAttribute(ctx.node, "broadcast");
  RemoveAttribute(ctx.node, "axis");
  if (had)
    ctx.changes.push_back({ChangeKind::kAttributeRemoved, "legacy broadcast attributes dropped"});
  return absl::OkStatus();
}

bool SameDims(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b, int offset) {
  for (int i = 0; i < b.dim_size(); ++i) {
    const auto& x = a.dim(offset + i);
    const auto& y = b.dim(i);
    if (!x.has_dim_value() || !y.has_dim_value() || x.dim_value() != y.dim_value()) return false;
  }
  return true;
}

absl::Status NumpyToLegacy(AdapterContext& ctx) {
  const onnx::TensorShapeProto* a = ShapeOf(ctx, 0);
  const onnx::TensorShapeProto* b = ShapeOf(ctx, 1);
  if (a == nullptr || b == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the shapes of the inputs are unknown, so whether ", ctx.to.Label(),
        "'s legacy broadcasting can express this node cannot be decided"));
  }
  if (a->dim_size() == b->dim_size() && SameDims(*a, *b, 0)) return absl::OkStatus();
  if (b->dim_size() <= a->dim_size() && SameDims(*a, *b, a->dim_size() - b->dim_size())) {
    AddIntAttribute(ctx.node, "broadcast", 1);
    ctx.changes.push_back({ChangeKind::kAttributeSet, "broadcast = 1 (B matches a suffix of A)"});
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "B's shape is not a suffix of A's, which ", ctx.to.Label(),
      "'s legacy broadcasting cannot express"));
}

}  // namespace

// Gemm 7 always broadcasts C; Gemm 6 does with broadcast = 1.
absl::Status GemmLegacyToNumpy(AdapterContext& ctx) {
  if (FindAttribute(ctx.node, "broadcast") != nullptr) {
    RemoveAttribute(ctx.node, "broadcast");
    ctx.changes.push_back(
        {ChangeKind::kAttributeRemoved, "broadcast dropped (C always broadcasts)"});
  }
  return absl::OkStatus();
}

absl::Status GemmNumpyToLegacy(AdapterContext& ctx) {
  if (ctx.node.input_size() < 3 || ctx.node.input(2).empty()) return absl::OkStatus();
  AddIntAttribute(ctx.node, "broadcast", 1);
  ctx.changes.push_back({ChangeKind::kAttributeSet, "broadcast = 1 (C may broadcast)"});
  return absl::OkStatus();
}

namespace {

// (op, legacy since_version, numpy since_version).
struct BroadcastOp {
  const char* op;
  int legacy;
  int numpy;
};

constexpr BroadcastOp kBroadcastOps[] = {
    {"Add", 6, 7},  {"Sub", 6, 7},     {"Mul", 6, 7},  {"Div", 6, 7},
    {"And", 1, 7},  {"Or", 1, 7},      {"Xor", 1, 7},  {"Equal", 1, 7},
    {"Less", 1, 7}, {"Greater", 1, 7}, {"Pow", 1, 7},
};

}  // namespace

// Max, Min, Sum and Mean broadcast from 8 on; version 6 needs every input
// of the same shape: the same value, or shapes whose dims are equal (the
// same number or the same symbol). Otherwise, where one input has the
// shape every other broadcasts to, the others are tiled to it
// (compositions.h).
absl::Status VariadicSameShapes(AdapterContext& ctx) {
  const onnx::TensorShapeProto* first = ShapeOf(ctx, 0);
  for (int i = 0; i < ctx.node.input_size(); ++i) {
    const onnx::TensorShapeProto* shape = ShapeOf(ctx, i);
    // The same value has the same shape, known or not.
    if (ctx.node.input(i) == ctx.node.input(0)) continue;
    bool same = first != nullptr && shape != nullptr && shape->dim_size() == first->dim_size();
    for (int d = 0; same && d < shape->dim_size(); ++d) {
      same = SameDim(shape->dim(d), first->dim(d));
    }
    if (!same) return TileToBroadcastShape(ctx);
  }
  return absl::OkStatus();
}

void RegisterBroadcastAdapters(RewriteTable& table) {
  for (const BroadcastOp& op : kBroadcastOps) {
    table.Register("", op.op, op.legacy, op.numpy, LegacyToNumpy, "legacy to numpy broadcasting");
    table.Register("", op.op, op.numpy, op.legacy, NumpyToLegacy, "numpy to legacy broadcasting");
  }
}

}  // namespace onnxconvert::adapters
