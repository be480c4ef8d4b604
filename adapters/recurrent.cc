// LSTM, GRU and RNN between opset 14 and 7: version 14 added `layout`,
// which with 1 puts the batch axis first in X, the initial and final states
// and Y. A downgrade of layout 1 transposes those to the older layout
// (sequence or directions first) and back; layout 0 is the older layout
// (the default, dropped wherever it is written).

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "adapters/adapter_helpers.h"
#include "adapters/families.h"

namespace onnxconvert::adapters {
namespace {

// A value of the node that layout 1 lays out batch first, and the
// permutation from the batch-first layout to the older one (for inputs) or
// back (for outputs).
struct LayoutSlot {
  bool output;
  int slot;
  const char* what;
  std::vector<int64_t> perm;
};

const std::vector<LayoutSlot>& LayoutSlots() {
  static const auto* slots = new std::vector<LayoutSlot>{
      // X: [batch, seq, input] -> [seq, batch, input].
      {false, 0, "X", {1, 0, 2}},
      // initial_h, initial_c: [batch, dirs, hidden] -> [dirs, batch, hidden].
      {false, 5, "initial_h", {1, 0, 2}},
      {false, 6, "initial_c", {1, 0, 2}},
      // Y: [seq, dirs, batch, hidden] -> [batch, seq, dirs, hidden].
      {true, 0, "Y", {2, 0, 1, 3}},
      // Y_h, Y_c: [dirs, batch, hidden] -> [batch, dirs, hidden].
      {true, 1, "Y_h", {1, 0, 2}},
      {true, 2, "Y_c", {1, 0, 2}},
  };
  return *slots;
}

onnx::NodeProto Transpose(AdapterContext& ctx, const std::string& in, const std::string& out,
                          const std::vector<int64_t>& perm) {
  onnx::NodeProto node;
  node.set_op_type("Transpose");
  node.set_name(ctx.rewriter.FreshName(
      absl::StrCat(ctx.node.name().empty() ? ctx.node.op_type() : ctx.node.name(), "_layout")));
  node.add_input(in);
  node.add_output(out);
  AddIntsAttribute(node, "perm", perm);
  return node;
}

}  // namespace

// Version 14 with layout 1 -> version 7, batch second, through Transposes.
absl::Status BatchFirstByTransposes(AdapterContext& ctx) {
  const onnx::AttributeProto* layout = FindAttribute(ctx.node, "layout");
  if (layout == nullptr) return absl::OkStatus();
  if (layout->i() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("layout = ", layout->i(), " is neither 0 nor 1"));
  }
  RemoveAttribute(ctx.node, "layout");
  for (const LayoutSlot& slot : LayoutSlots()) {
    auto& values = slot.output ? ctx.node.output() : ctx.node.input();
    if (slot.slot >= values.size() || values[slot.slot].empty()) continue;
    const std::string value = values[slot.slot];
    if (slot.output) {
      ctx.rewriter.InsertAfter(
          Transpose(ctx, ctx.rewriter.DetachOutput(slot.slot), value, slot.perm));
    } else {
      std::string moved = ctx.rewriter.FreshName(absl::StrCat(value, "_seq_first"));
      ctx.rewriter.InsertBefore(Transpose(ctx, value, moved, slot.perm));
      ctx.node.set_input(slot.slot, moved);
    }
    ctx.changes.push_back(
        {ChangeKind::kNodeInserted,
         absl::StrCat("Transpose of ", slot.what, " ('", value, "') for layout 1")});
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::adapters
