// dead-code: a node none of whose outputs is used (by a node, a subgraph or
// as a graph output) is removed; walking the graph backwards removes a dead
// chain in one run. ONNX nodes have no side effects, so nothing else keeps
// a node alive.

#include <memory>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "ir/graph_index_rewriter.h"
#include "rewrites/pass.h"

namespace onnxconvert::rewrites {
namespace {

bool IsDead(const GraphIndex& graph, NodeId id) {
  const int outputs = graph.OutputCount(id);
  if (outputs == 0) return false;
  for (int slot = 0; slot < outputs; ++slot) {
    if (!graph.OutputConsumers(id, slot).empty()) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> DeadCode(const PassContext& context, GraphIndex& graph,
                              PassStats& stats) {
  bool changed = false;
  std::vector<NodeId> order = graph.LiveNodes();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!context.focus().Visit(*it) || !IsDead(graph, *it)) continue;
    if (stats.WantsRecord(context.options())) {
      stats.Record(context.options(), {graph.path(), "dead", NodesText({&graph.node(*it)}), ""});
    }
    ir::GraphIndexRewriter rewrite(graph, *it);
    rewrite.rewriter().RemoveAnchor();
    OC_RETURN_IF_ERROR(rewrite.Finish());
    ++stats.matches;
    ++stats.nodes_removed;
    changed = true;
  }
  return changed;
}

}  // namespace onnxconvert::rewrites
