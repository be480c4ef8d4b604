// fold-constants: a deterministic ai.onnx node whose inputs are all
// constants is computed once, by the reference evaluator in the model's own
// precision, and its outputs become initializers; so does a value that
// inference computes from static dims and constants (Shape of a static
// shape, shape arithmetic), whatever computes it. A fold whose outputs
// exceed --max-fold-bytes is skipped when it also grows the model net of
// the single-use constants it replaces (a Tile or ConstantOfShape that
// expands a few bytes into megabytes stays a node).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "eval/evaluator.h"
#include "eval/tensor.h"
#include "ir/graph_index_rewriter.h"
#include "rewrites/pass.h"
#include "schema/registry.h"

namespace onnxconvert::rewrites {
namespace {

// Bytes a tensor's data takes.
int64_t DataBytes(const onnx::TensorProto& tensor) {
  return static_cast<int64_t>(tensor.ByteSizeLong());
}

// The outputs when inference knows them all already.
std::optional<std::vector<onnx::TensorProto>> KnownOutputs(const PassContext& context,
                                                           const GraphIndex& graph,
                                                           const onnx::NodeProto& node) {
  std::vector<onnx::TensorProto> outputs;
  for (const std::string& output : node.output()) {
    const onnx::TensorProto* constant =
        output.empty() ? nullptr : context.KnownConstant(graph, output);
    if (!output.empty() && constant == nullptr) return std::nullopt;
    outputs.push_back(constant == nullptr ? onnx::TensorProto() : *constant);
  }
  return outputs;
}

// The bytes of the node's outputs as their inferred types give them, or
// nullopt when a type, an element size or a dim is unknown.
std::optional<int64_t> InferredBytes(const PassContext& context, const GraphIndex& graph,
                                     const onnx::NodeProto& node) {
  int64_t total = 0;
  for (const std::string& output : node.output()) {
    if (output.empty()) continue;
    const onnx::TypeProto* type = context.TypeOf(graph, output);
    if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
      return std::nullopt;
    }
    int64_t bytes = eval::ElementSize(type->tensor_type().elem_type());
    if (bytes <= 0) return std::nullopt;
    for (const onnx::TensorShapeProto::Dimension& dim : type->tensor_type().shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) return std::nullopt;
      if (dim.dim_value() > 0 && bytes > (int64_t{1} << 50) / dim.dim_value()) {
        return std::nullopt;  // past any size a fold may take
      }
      bytes *= dim.dim_value();
    }
    total += bytes;
  }
  return total;
}

bool WithinSizeRule(const PassContext& context, const GraphIndex& graph,
                    const onnx::NodeProto& node, int64_t added) {
  if (added <= context.options().max_fold_bytes) return true;
  int64_t freed = 0;
  for (const std::string& input : node.input()) {
    const onnx::TensorProto* initializer = input.empty() ? nullptr : graph.FindInitializer(input);
    if (initializer != nullptr && graph.Consumers(input).size() == 1) {
      freed += DataBytes(*initializer);
    }
  }
  return added <= freed;
}

// Whether folding keeps the model from growing past the size rule.
bool WithinSizeRule(const PassContext& context, const GraphIndex& graph,
                    const onnx::NodeProto& node,
                    const std::vector<onnx::TensorProto>& outputs) {
  int64_t added = 0;
  for (const onnx::TensorProto& output : outputs) added += DataBytes(output);
  return WithinSizeRule(context, graph, node, added);
}

// The outputs computed by the evaluator, when every input is a constant.
std::optional<std::vector<onnx::TensorProto>> Evaluated(const PassContext& context,
                                                        const GraphIndex& graph,
                                                        const onnx::NodeProto& node) {
  if (node.input_size() == 0) return std::nullopt;
  std::vector<std::unique_ptr<eval::Tensor>> held;
  std::vector<const eval::Tensor*> inputs;
  for (const std::string& input : node.input()) {
    if (input.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    const onnx::TensorProto* constant = context.KnownConstant(graph, input);
    if (constant == nullptr || constant->data_location() == onnx::TensorProto::EXTERNAL) {
      return std::nullopt;
    }
    absl::StatusOr<eval::Tensor> tensor = eval::FromProto(*constant);
    if (!tensor.ok()) return std::nullopt;
    held.push_back(std::make_unique<eval::Tensor>(*std::move(tensor)));
    inputs.push_back(held.back().get());
  }
  int since_version = context.SinceVersion(node);
  if (since_version == 0) return std::nullopt;
  // Nothing is computed whose size inference does not bound, or that the
  // size rule would refuse anyway: a hostile ConstantOfShape must not
  // allocate gigabytes before the rule sees it.
  std::optional<int64_t> bytes = InferredBytes(context, graph, node);
  if (!bytes || !WithinSizeRule(context, graph, node, *bytes)) return std::nullopt;
  absl::StatusOr<std::vector<eval::Tensor>> computed =
      eval::EvaluateNode(node, since_version, inputs);
  if (!computed.ok()) return std::nullopt;  // left as it is: the runtime decides
  std::vector<onnx::TensorProto> outputs;
  for (int i = 0; i < node.output_size(); ++i) {
    outputs.push_back(eval::ToProto((*computed)[i], node.output(i)));
    // The type inference gave the output must be the one computed.
    const onnx::TypeProto* type = context.TypeOf(graph, node.output(i));
    if (!node.output(i).empty() && type != nullptr && type->has_tensor_type() &&
        type->tensor_type().elem_type() != outputs.back().data_type()) {
      return std::nullopt;
    }
  }
  return outputs;
}

// The outputs of node `id` as constants, when it folds.
std::optional<std::vector<onnx::TensorProto>> Fold(const PassContext& context,
                                                   const GraphIndex& graph, NodeId id) {
  const onnx::NodeProto& node = graph.node(id);
  if (!CanonicalDomain(node.domain()).empty() || node.op_type() == "Constant" ||
      HasSubgraphs(node) || !eval::IsDeterministic("", node.op_type())) {
    return std::nullopt;
  }
  for (int slot = 0; slot < node.output_size(); ++slot) {
    if (graph.IsGraphOutputOf(id, slot)) return std::nullopt;
  }
  std::optional<std::vector<onnx::TensorProto>> known = KnownOutputs(context, graph, node);
  if (!known) known = Evaluated(context, graph, node);
  if (!known || !WithinSizeRule(context, graph, node, *known)) return std::nullopt;
  return known;
}

// By node id: whether one of the node's outputs has facts (inference
// knows it as a constant or as dims), as the graph stands.
std::vector<bool> NodesWithFacts(const PassContext& context, const GraphIndex& graph) {
  std::vector<bool> with_facts(graph.node_count(), false);
  const schema::GraphTypes* types = context.GraphTypesOf(graph);
  if (types == nullptr) return with_facts;
  for (const auto& [name, facts] : types->facts) {
    ValueSource source = graph.Producer(name);
    if (source.kind == ValueSource::Kind::kNodeOutput) with_facts[source.index] = true;
  }
  return with_facts;
}

// A quick test, by the index and the graph's facts, that node `id` may
// fold: inference knows something of one of its outputs, or each input
// is an initializer or a value inference knows something of. Most nodes
// fail it after a lookup or two.
// `with_facts` (NodesWithFacts) spares looking up the names of nodes
// none of whose outputs has facts.
bool MayFold(const PassContext& context, const GraphIndex& graph, NodeId id,
             const std::vector<bool>& with_facts) {
  const onnx::NodeProto& node = graph.node(id);
  const schema::GraphTypes* types = context.GraphTypesOf(graph);
  auto has_facts = [&](absl::string_view name) {
    return types != nullptr && types->facts.contains(name);
  };
  auto may_have_facts = [&](NodeId producer) {
    return producer < 0 || static_cast<size_t>(producer) >= with_facts.size() ||
           with_facts[producer];
  };
  if (may_have_facts(id)) {
    for (const std::string& output : node.output()) {
      if (!output.empty() && has_facts(output)) return true;
    }
  } else {
    // The first input, by the index alone (most nodes fail here without
    // their proto being read): a graph input, or a node's output without
    // facts, fails.
    const ValueSource first = graph.InputProducer(id, 0);
    if (first.kind == ValueSource::Kind::kGraphInput ||
        (first.kind == ValueSource::Kind::kNodeOutput && !may_have_facts(first.index))) {
      return false;
    }
  }
  for (int slot = 0; slot < node.input_size(); ++slot) {
    const ValueSource source = graph.InputProducer(id, slot);
    if (source.kind == ValueSource::Kind::kNodeOutput && !may_have_facts(source.index)) {
      return false;  // its producer's outputs have no facts
    }
    const std::string& input = node.input(slot);
    if (input.empty()) continue;
    switch (source.kind) {
      case ValueSource::Kind::kInitializer: break;
      case ValueSource::Kind::kNodeOutput:
        if (!has_facts(input)) return false;
        break;
      case ValueSource::Kind::kOuterScope:
        if (context.KnownConstant(graph, input) == nullptr) return false;
        break;
      default: return false;
    }
  }
  return node.input_size() > 0;
}

}  // namespace

absl::StatusOr<bool> FoldConstants(const PassContext& context, GraphIndex& graph,
                                   PassStats& stats) {
  if (graph.graph() == nullptr) return false;  // a function body has no initializers
  bool changed = false;
  const std::vector<bool> with_facts = NodesWithFacts(context, graph);
  for (NodeId id : graph.LiveNodes()) {
    if (!context.focus().Visit(id) || !MayFold(context, graph, id, with_facts)) continue;
    std::optional<std::vector<onnx::TensorProto>> folded = Fold(context, graph, id);
    if (!folded) continue;
    const onnx::NodeProto& node = graph.node(id);
    const bool recorded = stats.WantsRecord(context.options());
    RewriteRecord record{graph.path(), "fold", recorded ? NodesText({&node}) : "", ""};
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      (*folded)[i].set_name(node.output(i));
      if (recorded) absl::StrAppend(&record.after, InitializerText((*folded)[i]), "\n");
      ++stats.initializers_added;
    }
    ir::GraphIndexRewriter rewrite(graph, id);
    OC_RETURN_IF_ERROR(rewrite.rewriter().ReplaceByConstants(*std::move(folded)));
    OC_RETURN_IF_ERROR(rewrite.Finish());
    if (recorded) stats.Record(context.options(), std::move(record));
    ++stats.matches;
    ++stats.nodes_removed;
    changed = true;
  }
  return changed;
}

}  // namespace onnxconvert::rewrites
