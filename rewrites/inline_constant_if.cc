// inline-constant-if: an If whose condition is a constant (an initializer,
// a Constant's output, a value inference computes; one bool element) is
// replaced by the nodes of the branch it takes. The branch's outputs take
// the If's output names (through an Identity when the branch outputs a
// name it does not compute, or one name twice); every other name the
// branch defines gets a fresh one, so nothing collides with the graphs
// around; its initializers become Constant nodes; what it reads from outer
// scopes stays as it is, in its nested subgraphs too. Left alone: a
// condition of another type or size, a branch with inputs or sparse
// initializers, and a branch output whose inferred type is unknown or
// differs from the If's output's.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/status_macros.h"
#include "eval/tensor.h"
#include "ir/graph_index_rewriter.h"
#include "rewrites/pass.h"

namespace onnxconvert::rewrites {
namespace {

using Renames = absl::flat_hash_map<std::string, std::string>;

// The value of the If's condition when it is a known constant bool of one
// element.
std::optional<bool> ConstantCondition(const PassContext& context, const GraphIndex& graph,
                                      const onnx::NodeProto& node) {
  if (node.input_size() < 1 || node.input(0).empty()) return std::nullopt;
  const onnx::TensorProto* cond = context.KnownConstant(graph, node.input(0));
  if (cond == nullptr || cond->data_type() != onnx::TensorProto::BOOL ||
      cond->data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  absl::StatusOr<eval::Tensor> tensor = eval::FromProto(*cond, 1);
  if (!tensor.ok() || tensor->size() != 1) return std::nullopt;
  return tensor->data<bool>()[0];
}

// Whether a value of type `branch` may stand for one of type `outer`: the
// same tensor element type and, where both know them, the same rank and
// dims; other types must be equal.
bool TypesAgree(const onnx::TypeProto& outer, const onnx::TypeProto& branch) {
  if (!outer.has_tensor_type() || !branch.has_tensor_type()) {
    return outer.SerializeAsString() == branch.SerializeAsString();
  }
  const onnx::TypeProto::Tensor& a = outer.tensor_type();
  const onnx::TypeProto::Tensor& b = branch.tensor_type();
  if (a.elem_type() == 0 || a.elem_type() != b.elem_type()) return false;
  if (!a.has_shape() || !b.has_shape()) return true;
  if (a.shape().dim_size() != b.shape().dim_size()) return false;
  for (int i = 0; i < a.shape().dim_size(); ++i) {
    const auto& x = a.shape().dim(i);
    const auto& y = b.shape().dim(i);
    if (x.has_dim_value() && y.has_dim_value() && x.dim_value() != y.dim_value()) return false;
  }
  return true;
}

// Renames the uses of `renames`' names in `graph` (a subgraph nested in
// the inlined branch) and in the graphs nested in it, except where the
// graph defines the name itself.
void RenameFreeUses(onnx::GraphProto& graph, const Renames& renames) {
  absl::flat_hash_set<std::string> defined;
  for (const onnx::ValueInfoProto& input : graph.input()) defined.insert(input.name());
  for (const onnx::TensorProto& initializer : graph.initializer()) defined.insert(initializer.name());
  for (const onnx::NodeProto& node : graph.node()) defined.insert(node.output().begin(), node.output().end());
  Renames visible;
  for (const auto& [from, to] : renames) {
    if (!defined.contains(from)) visible.emplace(from, to);
  }
  if (visible.empty()) return;
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (std::string& input : *node.mutable_input()) {
      auto found = visible.find(input);
      if (found != visible.end()) input = found->second;
    }
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) RenameFreeUses(*attribute.mutable_g(), visible);
      for (onnx::GraphProto& nested : *attribute.mutable_graphs()) RenameFreeUses(nested, visible);
    }
  }
  for (onnx::ValueInfoProto& output : *graph.mutable_output()) {
    auto found = visible.find(output.name());
    if (found != visible.end()) output.set_name(found->second);
  }
}

// The nodes standing for If node `node` of `graph` when it takes `branch`,
// or nullopt when the branch cannot be inlined.
std::optional<std::vector<onnx::NodeProto>> InlinedNodes(GraphIndex& graph,
                                                         const onnx::NodeProto& node,
                                                         const onnx::GraphProto& branch) {
  if (branch.input_size() > 0 || branch.sparse_initializer_size() > 0 ||
      branch.output_size() != node.output_size()) {
    return std::nullopt;
  }
  absl::flat_hash_set<std::string> computed;
  for (const onnx::NodeProto& inner : branch.node()) {
    for (const std::string& output : inner.output()) {
      if (!output.empty()) computed.insert(output);
    }
  }
  // The branch outputs a node computes take the If's names; the rest are
  // copied by Identity nodes.
  Renames renames;
  std::vector<int> copied;
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& name = branch.output(i).name();
    if (node.output(i).empty()) continue;
    if (computed.contains(name) && !renames.contains(name)) {
      renames[name] = node.output(i);
    } else {
      copied.push_back(i);
    }
  }
  auto fresh = [&](const std::string& name) {
    auto [it, inserted] = renames.emplace(name, "");
    if (inserted) it->second = graph.FreshName(name);
    return it->second;
  };
  std::vector<onnx::NodeProto> nodes;
  for (const onnx::TensorProto& initializer : branch.initializer()) {
    onnx::NodeProto& constant = nodes.emplace_back();
    constant.set_op_type("Constant");
    constant.set_name(graph.FreshName("inlined_constant"));
    constant.add_output(fresh(initializer.name()));
    onnx::AttributeProto* value = constant.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = initializer;
    value->mutable_t()->set_name(constant.output(0));
  }
  for (const onnx::NodeProto& inner : branch.node()) {
    for (const std::string& output : inner.output()) {
      if (!output.empty()) fresh(output);
    }
  }
  for (onnx::NodeProto inner : branch.node()) {
    if (!inner.name().empty()) inner.set_name(graph.FreshName(inner.name()));
    for (std::string& input : *inner.mutable_input()) {
      auto found = renames.find(input);
      if (found != renames.end()) input = found->second;
    }
    for (std::string& output : *inner.mutable_output()) {
      if (!output.empty()) output = renames.at(output);
    }
    for (onnx::AttributeProto& attribute : *inner.mutable_attribute()) {
      if (attribute.has_g()) RenameFreeUses(*attribute.mutable_g(), renames);
      for (onnx::GraphProto& nested : *attribute.mutable_graphs()) RenameFreeUses(nested, renames);
    }
    nodes.push_back(std::move(inner));
  }
  for (int i : copied) {
    const std::string& name = branch.output(i).name();
    auto found = renames.find(name);
    onnx::NodeProto& identity = nodes.emplace_back();
    identity.set_op_type("Identity");
    identity.set_name(graph.FreshName("inlined_output"));
    identity.add_input(found != renames.end() ? found->second : name);
    identity.add_output(node.output(i));
  }
  return nodes;
}

// Commits `root` and the graphs nested in it; false when one fails.
bool CommitTree(GraphIndex& root) {
  for (GraphIndex* inner : root.GraphsInTree()) {
    if (!inner->Commit().ok()) return false;
  }
  return true;
}

// Whether every branch output's inferred type agrees with the If's
// output's.
bool OutputsAgree(const PassContext& context, const GraphIndex& graph,
                  const onnx::NodeProto& node, const GraphIndex& branch_index,
                  const onnx::GraphProto& branch) {
  if (branch.output_size() != node.output_size()) return false;
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    const onnx::TypeProto* outer = context.TypeOf(graph, node.output(i));
    const onnx::TypeProto* inner = context.TypeOf(branch_index, branch.output(i).name());
    if (outer == nullptr || inner == nullptr || !TypesAgree(*outer, *inner)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> InlineConstantIf(const PassContext& context, GraphIndex& graph,
                                      PassStats& stats) {
  bool changed = false;
  // Only If nodes (the index lists them by op; the focus is asked last,
  // so a graph without one never resolves its edit log).
  for (NodeId id : graph.NodesOf("", "If")) {
    if (!graph.IsLive(id) || !context.focus().Visit(id)) continue;
    const onnx::NodeProto& node = graph.node(id);
    std::optional<bool> cond = ConstantCondition(context, graph, node);
    if (!cond) continue;
    const onnx::GraphProto* branch = nullptr;
    GraphIndex* branch_index = nullptr;
    std::vector<GraphIndex*> subgraphs = graph.Subgraphs(id);
    size_t k = 0;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (!attribute.has_g()) continue;
      if (attribute.name() == (*cond ? "then_branch" : "else_branch") && k < subgraphs.size()) {
        branch = &attribute.g();
        branch_index = subgraphs[k];
      }
      ++k;
    }
    if (branch == nullptr || !OutputsAgree(context, graph, node, *branch_index, *branch)) {
      continue;
    }
    // Passes before this one may have left edits in the branch's node
    // lists (removed nodes kept, new ones appended): committed, the
    // lists hold the live nodes in order, as copying them needs.
    if (!CommitTree(*branch_index)) continue;
    const onnx::NodeProto taken = node;  // the rewrite drops `node`
    std::optional<std::vector<onnx::NodeProto>> nodes =
        InlinedNodes(graph, taken, *branch);
    if (!nodes) continue;
    RewriteRecord record{graph.path(), *cond ? "inline then_branch" : "inline else_branch",
                         NodesText({&taken}), ""};
    std::vector<const onnx::NodeProto*> added;
    for (const onnx::NodeProto& inlined : *nodes) added.push_back(&inlined);
    record.after = NodesText(added);
    const int64_t count = static_cast<int64_t>(nodes->size());
    ir::GraphIndexRewriter rewrite(graph, id);
    for (onnx::NodeProto& inlined : *nodes) rewrite.rewriter().InsertBefore(std::move(inlined));
    rewrite.rewriter().RemoveAnchor();
    OC_RETURN_IF_ERROR(rewrite.Finish());
    stats.Record(context.options(), std::move(record));
    ++stats.matches;
    ++stats.nodes_removed;
    stats.nodes_added += count;
    changed = true;
  }
  return changed;
}

}  // namespace onnxconvert::rewrites
