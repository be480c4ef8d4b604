// flatten-concat: a Concat whose input is computed by another Concat on the
// same axis, used nowhere else (no other node, subgraph or graph output),
// takes that Concat's inputs in its place: one Concat of every input, in
// order, whatever the number of inputs (rules match a fixed number). The
// result is the same elements in the same order: exact. Axes are compared
// after counting negative ones from the inferred rank; an unknown rank or
// an axis left unset where the op has no default leaves the node alone.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "ir/graph_index_rewriter.h"
#include "rewrites/pass.h"

namespace onnxconvert::rewrites {
namespace {

bool IsConcat(const onnx::NodeProto& node) {
  return node.op_type() == "Concat" && (node.domain().empty() || node.domain() == "ai.onnx");
}

// The axis of Concat `node`, counted from 0, or nullopt when its rank or
// axis is unknown. Concat before version 4 defaults the axis to 1.
std::optional<int64_t> ConcatAxis(const PassContext& context, const GraphIndex& graph,
                                  const onnx::NodeProto& node) {
  if (node.output_size() != 1) return std::nullopt;
  const onnx::TypeProto* type = context.TypeOf(graph, node.output(0));
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    return std::nullopt;
  }
  const int64_t rank = type->tensor_type().shape().dim_size();
  std::optional<int64_t> axis;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == "axis" && attribute.type() == onnx::AttributeProto::INT) {
      axis = attribute.i();
    }
  }
  if (!axis && context.SinceVersion(node) < 4) axis = 1;
  if (!axis) return std::nullopt;
  if (*axis < 0) *axis += rank;
  if (*axis < 0 || *axis >= rank) return std::nullopt;
  return axis;
}

// The Concat node computing input `slot` of `node` on `axis`, used only
// there; kNoNode when there is none.
NodeId InnerConcat(const PassContext& context, const GraphIndex& graph,
                   const onnx::NodeProto& node, int slot, int64_t axis) {
  const std::string& value = node.input(slot);
  if (value.empty()) return kNoNode;
  ValueSource source = graph.Producer(value);
  if (source.kind != ValueSource::Kind::kNodeOutput) return kNoNode;
  const onnx::NodeProto& inner = graph.node(source.index);
  if (!IsConcat(inner) || ConcatAxis(context, graph, inner) != axis) return kNoNode;
  absl::Span<const ValueUse> uses = graph.Consumers(value);
  if (uses.size() != 1 || !uses[0].is_input()) return kNoNode;
  return source.index;
}

}  // namespace

absl::StatusOr<bool> FlattenConcat(const PassContext& context, GraphIndex& graph,
                                   PassStats& stats) {
  bool changed = false;
  for (NodeId id : graph.NodesOf("", "Concat")) {
    if (!graph.IsLive(id) || !IsConcat(graph.node(id)) || !context.focus().Visit(id)) continue;
    std::optional<int64_t> axis = ConcatAxis(context, graph, graph.node(id));
    if (!axis) continue;
    onnx::NodeProto flat = graph.node(id);
    std::vector<NodeId> inner;
    flat.clear_input();
    const onnx::NodeProto& node = graph.node(id);
    for (int slot = 0; slot < node.input_size(); ++slot) {
      NodeId from = InnerConcat(context, graph, node, slot, *axis);
      if (from == kNoNode) {
        flat.add_input(node.input(slot));
        continue;
      }
      inner.push_back(from);
      for (const std::string& input : graph.node(from).input()) flat.add_input(input);
    }
    if (inner.empty()) continue;
    std::vector<const onnx::NodeProto*> before;
    for (NodeId from : inner) before.push_back(&graph.node(from));
    before.push_back(&node);
    RewriteRecord record{graph.path(), "flatten", NodesText(before), NodesText({&flat})};
    ir::GraphIndexRewriter rewrite(graph, id);
    ir::Rewriter& r = rewrite.rewriter();
    for (NodeId from : inner) r.EraseNode(graph.node(from));
    r.InsertBefore(std::move(flat));
    r.RemoveAnchor();
    OC_RETURN_IF_ERROR(rewrite.Finish());
    stats.Record(context.options(), std::move(record));
    stats.matches += static_cast<int64_t>(inner.size());
    stats.nodes_removed += static_cast<int64_t>(inner.size()) + 1;
    stats.nodes_added += 1;
    changed = true;
  }
  return changed;
}

}  // namespace onnxconvert::rewrites
