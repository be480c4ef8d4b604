// Dropout's optional mask output between opset 7 and 10: versions 7 to 9
// give it the data's float type, version 10 on gives it bool. A step across
// 10 drops a mask nothing reads, and casts one that is read (or is a graph
// output) to the type it had: bool -> float going up, float -> bool going
// down.

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/families.h"

namespace onnxconvert::adapters {
absl::Status MaskType(AdapterContext& ctx) {
  if (ctx.node.output_size() < 2 || ctx.node.output(1).empty()) return absl::OkStatus();
  const std::string mask = ctx.node.output(1);
  if (ctx.rewriter.ValueUsed(mask) == std::optional<bool>(false)) {
    ctx.node.mutable_output()->RemoveLast();
    ctx.changes.push_back(
        {ChangeKind::kOutputRemoved, absl::StrCat("mask '", mask, "' dropped: nothing reads it")});
    return absl::OkStatus();
  }
  bool up = ctx.to.since_version > ctx.from.since_version;
  // The mask's type before the step, which its readers expect.
  int32_t elem = up ? ElemOf(ctx, ctx.node.input(0)) : onnx::TensorProto::BOOL;
  if (elem == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the mask '", mask, "' is read, and the element type of '", ctx.node.input(0),
                     "' it has before ", ctx.to.Label(), " is unknown"));
  }
  ctx.rewriter.InsertAfter(CastNode(ctx, ctx.rewriter.DetachOutput(1), mask, elem));
  ctx.changes.push_back({ChangeKind::kCastInserted,
                         absl::StrCat("mask '", mask, "' cast from ", up ? "bool" : "its data type",
                                      " to the type it had before ", ctx.to.Label())});
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
