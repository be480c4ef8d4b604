// Ops replaced by others with the same meaning: Scatter by ScatterElements
// (Scatter is deprecated from opset 11), Upsample by Resize (deprecated from
// opset 10), and back when downgrading below the replacement's
// introduction; CastLike (opset 15) by Cast with the element type of its
// second input.

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/families.h"
#include "adapters/rewrites.h"

namespace onnxconvert::adapters {
namespace {

// An op renamed to another of the same signature at a version boundary.
struct Rename {
  const char* op;
  int from;  // since_version of the node's version
  int to;    // since_version it steps to; 0: the op does not exist there
  const char* replacement;
  const char* why;
};

constexpr Rename kRenames[] = {
    {"Scatter", 9, 11, "ScatterElements", "Scatter is deprecated; ScatterElements means the same"},
    {"ScatterElements", 11, 0, "Scatter", "Scatter-9 means what ScatterElements-11 does"},
    {"Upsample", 9, 10, "Resize", "Upsample is deprecated; Resize-10 means the same"},
    {"Resize", 10, 0, "Upsample", "Upsample-9 means what Resize-10 does"},
};

absl::Status RenameOp(AdapterContext& ctx) {
  for (const Rename& rename : kRenames) {
    if (ctx.from.name != rename.op || ctx.from.since_version != rename.from) continue;
    ctx.node.set_op_type(rename.replacement);
    ctx.changes.push_back({ChangeKind::kNodeReplaced,
                           absl::StrCat(rename.op, " -> ", rename.replacement, ": ", rename.why)});
    return absl::OkStatus();
  }
  return absl::InternalError(absl::StrCat("no rename registered for ", ctx.from.Label()));
}

}  // namespace

// CastLike(X, like) -> Cast<to = elem_type(like)>(X).
absl::Status CastLikeToCast(AdapterContext& ctx) {
  const onnx::TypeProto* like = ctx.rewriter.TypeOf(ctx.node.input(1));
  if (like == nullptr || !like->has_tensor_type() || like->tensor_type().elem_type() == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the element type of '", ctx.node.input(1), "' is unknown, so CastLike cannot become Cast"));
  }
  ctx.node.set_op_type("Cast");
  ctx.node.mutable_input()->RemoveLast();
  AddIntAttribute(ctx.node, "to", like->tensor_type().elem_type());
  ctx.changes.push_back(
      {ChangeKind::kNodeReplaced,
       absl::StrCat("CastLike -> Cast to the type of '", ctx.node.input(0), "''s like")});
  return absl::OkStatus();
}

void RegisterReplacementAdapters(RewriteTable& table) {
  for (const Rename& rename : kRenames) {
    table.Register("", rename.op, rename.from, rename.to, RenameOp,
                   absl::StrCat("replaced by ", rename.replacement));
  }
}

}  // namespace onnxconvert::adapters
