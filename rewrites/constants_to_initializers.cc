// constants-to-initializers: an ai.onnx Constant node holding a tensor
// (its `value`, or a shorthand such as value_floats) becomes an initializer
// of its graph under its output's name; the tensor is moved, not copied.
// Constants that are graph outputs, sparse constants and Constants inside
// function bodies (which have no initializers) stay.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/adapter_helpers.h"
#include "base/status_macros.h"
#include "ir/graph_index_rewriter.h"
#include "rewrites/pass.h"
#include "schema/registry.h"

namespace onnxconvert::rewrites {
namespace {

// The tensor a Constant node holds, taken out of it; nullopt when it holds
// none a graph can store as an initializer.
std::optional<onnx::TensorProto> TakeTensor(onnx::NodeProto& node) {
  if (node.attribute_size() != 1) return std::nullopt;
  onnx::AttributeProto& attribute = *node.mutable_attribute(0);
  if (attribute.name() == "value" && attribute.has_t()) {
    onnx::TensorProto tensor;
    tensor.Swap(attribute.mutable_t());
    return tensor;
  }
  return adapters::ShorthandTensor(attribute);
}

}  // namespace

absl::StatusOr<bool> ConstantsToInitializers(const PassContext& context, GraphIndex& graph,
                                             PassStats& stats) {
  if (graph.graph() == nullptr) return false;
  bool changed = false;
  for (NodeId id : graph.NodesOf("", "Constant")) {
    const onnx::NodeProto& node = graph.node(id);
    if (node.output_size() != 1 || node.output(0).empty() ||
        IsGraphOutput(graph, node.output(0))) {
      continue;
    }
    std::string before = NodesText({&node});
    ir::GraphIndexRewriter rewrite(graph, id);
    ir::Rewriter& r = rewrite.rewriter();
    std::optional<onnx::TensorProto> tensor = TakeTensor(r.anchor());
    if (!tensor) continue;
    tensor->set_name(node.output(0));
    stats.Record(context.options(),
                 {graph.path(), "constant", std::move(before), InitializerText(*tensor) + "\n"});
    std::vector<onnx::TensorProto> constants;
    constants.push_back(*std::move(tensor));
    OC_RETURN_IF_ERROR(r.ReplaceByConstants(std::move(constants)));
    OC_RETURN_IF_ERROR(rewrite.Finish());
    ++stats.matches;
    ++stats.nodes_removed;
    ++stats.initializers_added;
    changed = true;
  }
  return changed;
}

}  // namespace onnxconvert::rewrites
