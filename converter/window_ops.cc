#include "converter/window_ops.h"

#include "converter/plain_node_memo.h"
#include "converter/step_runner.h"

namespace onnxconvert::converter {

WindowOp WindowOps::Of(absl::string_view op_type) {
  for (const auto& [op, known] : recent_) {
    if (op == op_type) return known;
  }
  auto it = ops_.find(op_type);
  if (it == ops_.end()) it = ops_.emplace(op_type, Find(op_type)).first;
  recent_[next_recent_++ % recent_.size()] = {it->first, it->second};
  return it->second;
}

WindowOp WindowOps::Read(absl::string_view payload, PlainNode& plain) {
  if (!ScanPlainNode(payload, plain)) return {};
  if (!plain.domain.empty() && plain.domain != "ai.onnx") return {};
  if (plain.outputs.size() > PlainNodeMemo::kMaxOutputs) return {};
  WindowOp op = Of(plain.op_type);
  if (op.unparsed && !plain.attributes.empty() && AttributesHoldGraphs(plain.attributes)) {
    return {};
  }
  return op;
}

WindowOp WindowOps::Find(absl::string_view op_type) const {
  std::string op(op_type);
  WindowOp found{schema::Registry::Get().Lookup("", op, source_), op != "Constant"};
  for (const auto& [from, to] : steps_) {
    if (found.schema == nullptr || !found.unparsed) break;
    found.unparsed = StepOnlyRebinds(op, from, to);
  }
  found.unparsed &= found.schema != nullptr;
  return found;
}

}  // namespace onnxconvert::converter
