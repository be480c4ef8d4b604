// Softmax, LogSoftmax and Hardmax between opset 11 and 13: version 13 applies
// the op along one axis; earlier versions coerce the input to 2-D at `axis`
// and apply it over the flattened trailing dims. The two agree exactly when
// `axis` is the last axis, which is what exporters write; other axes would
// need a Flatten/Reshape rewrite and are refused with the reason.

#include "absl/strings/str_cat.h"
#include "adapters/adapter.h"
#include "adapters/rewrites.h"

namespace onnxconvert::adapters {
namespace {

// The node's `axis`, or the default of the version it binds to now.
int64_t AxisOf(const AdapterContext& ctx) {
  if (const onnx::AttributeProto* axis = FindAttribute(ctx.node, "axis")) return axis->i();
  const schema::AttrSpec* spec = ctx.from.FindAttr("axis");
  return spec != nullptr && spec->has_default ? spec->default_value.i : 1;
}

absl::Status SoftmaxAxisSemantics(AdapterContext& ctx) {
  const onnx::TypeProto* type = ctx.type_of(ctx.node.input(0));
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the rank of input '", ctx.node.input(0),
                     "' is unknown, so whether its axis semantics match cannot be decided"));
  }
  int64_t rank = type->tensor_type().shape().dim_size();
  int64_t axis = AxisOf(ctx);
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized != rank - 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "axis ", axis, " of a rank-", rank, " input is not the last axis; ", ctx.from.Label(),
        " and ", ctx.to.Label(), " compute different things there"));
  }
  // Both versions default to different axes; spell it out when it was left
  // to the default, so the meaning cannot shift.
  if (FindAttribute(ctx.node, "axis") == nullptr) {
    AddIntAttribute(ctx.node, "axis", axis);
    ctx.changes.push_back({"attribute-set", absl::StrCat("axis = ", axis, " made explicit")});
  }
  ctx.changes.push_back({"version-bump", absl::StrCat(ctx.from.Label(), " -> ", ctx.to.Label(),
                                                      ": axis ", axis, " is the last axis")});
  return absl::OkStatus();
}

}  // namespace

void RegisterSoftmaxAdapters(RewriteTable& table) {
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    table.Register("", op, 11, 13, SoftmaxAxisSemantics, "axis semantics checked");
    table.Register("", op, 13, 11, SoftmaxAxisSemantics, "axis semantics checked");
  }
}

}  // namespace onnxconvert::adapters
