#include "rewrites/pass.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "ir/text_printer.h"
#include "schema/registry.h"

namespace onnxconvert::rewrites {

void PassStats::Record(const RewriteOptions& options, RewriteRecord record) {
  if (static_cast<int>(records.size()) < options.max_records) records.push_back(std::move(record));
}

bool HasSubgraphs(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g() || attribute.graphs_size() > 0) return true;
  }
  return false;
}

bool IsGraphOutput(const GraphIndex& graph, absl::string_view value) {
  for (const ValueUse& use : graph.Consumers(value)) {
    if (use.is_graph_output()) return true;
  }
  return false;
}

std::string NodesText(absl::Span<const onnx::NodeProto* const> nodes) {
  std::string text;
  for (const onnx::NodeProto* node : nodes) absl::StrAppend(&text, PrintNodeText(*node), "\n");
  return text;
}

std::string InitializerText(const onnx::TensorProto& tensor) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(tensor.data_type());
  onnx::TensorShapeProto* shape = type.mutable_tensor_type()->mutable_shape();
  for (int64_t dim : tensor.dims()) shape->add_dim()->set_dim_value(dim);
  return absl::StrCat("initializer ", tensor.name(), ": ", PrintTypeText(type));
}

size_t Focus::RecentRepeat(size_t i, size_t batch) const {
  constexpr size_t kWindow = 4;
  for (size_t j = std::max(batch, i > kWindow ? i - kWindow : 0); j < i; ++j) {
    if ((*log_)[j] == (*log_)[i]) return j;
  }
  return i;
}

void Focus::Resolve(size_t batch) {
  const size_t i = seeds_->resolved();
  if (const size_t repeat = RecentRepeat(i, batch); repeat != i) {
    // Resolved in the same batch: the same nodes, without the lookups.
    for (uint32_t k = seeds_->begin[repeat]; k < seeds_->begin[repeat + 1]; ++k) {
      const NodeId node = seeds_->nodes[k];
      seeds_->nodes.push_back(node);
    }
    seeds_->begin.push_back(static_cast<uint32_t>(seeds_->nodes.size()));
    return;
  }
  const GraphIndex::ValueId value = (*log_)[i];
  ValueSource source = graph_->ProducerOf(value);
  if (source.kind == ValueSource::Kind::kNodeOutput) seeds_->nodes.push_back(source.index);
  for (const ValueUse& use : graph_->ConsumersOf(value)) {
    if (use.node != kNoNode) seeds_->nodes.push_back(use.node);
  }
  seeds_->begin.push_back(static_cast<uint32_t>(seeds_->nodes.size()));
}

bool Focus::Visit(NodeId id) {
  if (graph_ == nullptr) return true;
  const size_t batch = seeds_->resolved();
  for (; drained_ < log_->size(); ++drained_) {
    while (seeds_->resolved() <= drained_) Resolve(batch);
    for (uint32_t k = seeds_->begin[drained_]; k < seeds_->begin[drained_ + 1]; ++k) {
      Mark(seeds_->nodes[k], reach_ - 1);
    }
  }
  return id >= 0 && static_cast<size_t>(id) < marked_.size() && marked_[id] > 0;
}

void Focus::Mark(NodeId id, int steps) {
  if (static_cast<size_t>(id) >= marked_.size()) {
    marked_.resize(std::max<size_t>(graph_->node_count(), id + 1), 0);
  }
  if (marked_[id] > steps) return;  // marked with as many steps or more
  marked_[id] = static_cast<int8_t>(steps + 1);
  if (steps == 0 || !graph_->IsLive(id)) return;
  for (int slot = 0, outputs = graph_->OutputCount(id); slot < outputs; ++slot) {
    for (const ValueUse& use : graph_->OutputConsumers(id, slot)) {
      if (use.node != kNoNode) Mark(use.node, steps - 1);
    }
  }
}

const schema::GraphTypes* PassContext::TypesFor(const GraphIndex& graph,
                                                absl::string_view value) const {
  const GraphIndex* scope = graph.DefiningScope(value);
  if (scope == nullptr || scope->graph() == nullptr) return nullptr;
  auto types = types_.graphs.find(scope->graph());
  return types == types_.graphs.end() ? nullptr : &types->second;
}

const schema::GraphTypes* PassContext::GraphTypesOf(const GraphIndex& graph) const {
  if (graph.graph() == nullptr) return nullptr;
  auto types = types_.graphs.find(graph.graph());
  return types == types_.graphs.end() ? nullptr : &types->second;
}

const onnx::TypeProto* PassContext::TypeOf(const GraphIndex& graph,
                                           absl::string_view value) const {
  // Most values are the graph's own: its entry first, without looking for
  // the scope defining the name (a name means one value in every scope
  // that sees it: ONNX names are never shadowed).
  if (const schema::GraphTypes* own = GraphTypesOf(graph)) {
    auto type = own->types.find(value);
    if (type != own->types.end()) return type->second;
  }
  const schema::GraphTypes* types = TypesFor(graph, value);
  if (types == nullptr) return nullptr;
  auto type = types->types.find(value);
  return type == types->types.end() ? nullptr : type->second;
}

const onnx::TensorProto* PassContext::KnownConstant(const GraphIndex& graph,
                                                    absl::string_view value) const {
  if (const onnx::TensorProto* initializer = graph.FindInitializer(value)) return initializer;
  const schema::GraphTypes* types = TypesFor(graph, value);
  if (types == nullptr) return nullptr;
  auto facts = types->facts.find(value);
  if (facts == types->facts.end()) return nullptr;
  if (facts->second.constant != nullptr) return facts->second.constant;
  const onnx::TensorShapeProto* dims = facts->second.shape_data;
  const onnx::TypeProto* type = TypeOf(graph, value);
  if (dims == nullptr || type == nullptr || !type->tensor_type().has_shape() ||
      type->tensor_type().elem_type() != onnx::TensorProto::INT64) {
    return nullptr;
  }
  // Dims known as values (Shape of static dims, arithmetic on them): a
  // constant when every one is a number.
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::INT64);
  if (type->tensor_type().shape().dim_size() == 1) tensor.add_dims(dims->dim_size());
  if (type->tensor_type().shape().dim_size() == 0 && dims->dim_size() != 1) return nullptr;
  for (const onnx::TensorShapeProto::Dimension& dim : dims->dim()) {
    if (!dim.has_dim_value()) return nullptr;
    tensor.add_int64_data(dim.dim_value());
  }
  return &built_.emplace_back(std::move(tensor));
}

int PassContext::SinceVersion(const onnx::NodeProto& node) const {
  absl::string_view domain = CanonicalDomain(node.domain());
  for (const onnx::OperatorSetIdProto& opset : model_.opset_import()) {
    if (CanonicalDomain(opset.domain()) != domain) continue;
    const schema::OpSchema* op =
        schema::Registry::Get().Lookup(domain, node.op_type(), opset.version());
    return op == nullptr ? 0 : op->since_version;
  }
  return 0;
}

int PassContext::OpsetVersion(absl::string_view domain) const {
  domain = CanonicalDomain(domain);
  for (const onnx::OperatorSetIdProto& opset : model_.opset_import()) {
    if (CanonicalDomain(opset.domain()) == domain) {
      return static_cast<int>(opset.version());
    }
  }
  return 0;
}

namespace {

// A pass without state: its table row's function.
class FunctionPass final : public Pass {
 public:
  explicit FunctionPass(const PassEntry& entry) : entry_(entry) {}
  absl::string_view name() const override { return entry_.name; }
  absl::StatusOr<bool> Run(const PassContext& context, GraphIndex& graph,
                           PassStats& stats) override {
    return entry_.run(context, graph, stats);
  }
  int Reach(const RewriteOptions& /*options*/) const override { return entry_.reach; }

 private:
  const PassEntry& entry_;
};

}  // namespace

std::unique_ptr<Pass> MakePass(const PassEntry& entry) {
  if (entry.make != nullptr) return entry.make();
  return std::make_unique<FunctionPass>(entry);
}

const std::vector<PassEntry>& Passes() {
  static const std::vector<PassEntry> passes = {
      {"constants-to-initializers", "exact deploy",
       "Constant nodes of the main graph and subgraphs become initializers",
       0, ConstantsToInitializers, nullptr},
      {"fold-constants", "exact deploy",
       "deterministic nodes whose inputs are constants, and values inference computes from "
       "static dims (Shape, Size, shape arithmetic), become initializers; a fold past "
       "--max-fold-bytes that grows the model is skipped",
       1, FoldConstants, nullptr},
      {"inline-constant-if", "exact deploy",
       "an If whose condition is a constant is replaced by the nodes of the branch it takes "
       "(the branch's names made fresh, its outer references kept)",
       1, InlineConstantIf, nullptr},
      {"rules", "exact deploy",
       "the built-in rewrite rules (rewrites/rules/*.rules): no-op nodes and chains that "
       "cancel out removed where the facts inference knows make it exact; in the deploy "
       "profile also fusions that change rounding (deploy_fusions.rules: BatchNormalization "
       "and per-channel Mul/Add into Conv, BatchNormalization into ConvTranspose, MatMul + Add "
       "into Gemm, LogSoftmax, Clip, Transpose into Gemm)",
       0, nullptr, MakeRules},
      {"flatten-concat", "exact deploy",
       "a Concat reading another Concat on the same axis that nothing else uses takes its "
       "inputs in its place",
       1, FlattenConcat, nullptr},
      {"common-subexpressions", "exact deploy",
       "deterministic nodes with the same op, inputs and attributes, and initializers holding "
       "the same tensor, are merged into the first",
       1, CommonSubexpressions, nullptr},
      {"dead-code", "exact deploy", "nodes none of whose outputs is used are removed",
       1, DeadCode, nullptr},
  };
  return passes;
}

}  // namespace onnxconvert::rewrites
