#include "eval/evaluator.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "eval/kernel.h"

namespace onnxconvert::eval {

absl::StatusOr<std::vector<Tensor>> EvaluateNode(const onnx::NodeProto& node, int since_version,
                                                 absl::Span<const Tensor* const> inputs) {
  auto error = [&](absl::string_view why) {
    return absl::UnimplementedError(absl::StrCat("node '", node.name(), "' (", node.op_type(),
                                                 "-", since_version, "): ", why));
  };
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g() || attribute.graphs_size() > 0) {
      return error("nodes with subgraphs are evaluated with their graph");
    }
  }
  KernelFn kernel = FindKernel(node.domain(), node.op_type(), since_version);
  if (kernel == nullptr) return error("the evaluator has no kernel for this op version");
  KernelCall call{node, since_version, {inputs.begin(), inputs.end()}};
  absl::StatusOr<std::vector<Tensor>> outputs = kernel(call);
  if (!outputs.ok()) return outputs.status();
  if (static_cast<int>(outputs->size()) < node.output_size()) {
    return error(absl::StrCat("the kernel computes ", outputs->size(), " outputs, the node names ",
                              node.output_size()));
  }
  return outputs;
}

bool IsDeterministic(absl::string_view domain, absl::string_view op) {
  if (domain == "ai.onnx.ml") return true;
  // ai.onnx.preview (FlexAttention) and ai.onnx.preview.training compute
  // as ai.onnx does; ops of other domains are unknown.
  if (!domain.empty() && domain != "ai.onnx" && !absl::StartsWith(domain, "ai.onnx.preview")) {
    return false;
  }
  return !absl::StartsWith(op, "Random") && op != "Multinomial" && op != "Bernoulli" &&
         op != "Dropout";
}

}  // namespace onnxconvert::eval
