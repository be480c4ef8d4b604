#include "converter/constant_table.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "adapters/adapter_helpers.h"
#include "eval/evaluator.h"
#include "eval/tensor.h"
#include "ir/tensor_util.h"
#include "schema/registry.h"

namespace onnxconvert::converter {
namespace {

// How many producers deep a fold follows its inputs.
constexpr int kMaxFoldDepth = 32;

// Whether `node` may be folded when its inputs are constants.
bool MayFold(const onnx::NodeProto& node) {
  if (!CanonicalDomain(node.domain()).empty() || node.output_size() == 0 ||
      node.op_type() == "Constant" || !eval::IsDeterministic("", node.op_type())) {
    return false;
  }
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g() || attribute.graphs_size() > 0 || !attribute.ref_attr_name().empty()) {
      return false;
    }
  }
  return true;
}

}  // namespace

const onnx::TensorProto* ConstantNodeValue(const onnx::NodeProto& node,
                                           std::deque<onnx::TensorProto>& owned) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == "value" && attribute.has_t()) return &attribute.t();
    if (std::optional<onnx::TensorProto> tensor = adapters::ShorthandTensor(attribute)) {
      return &owned.emplace_back(*std::move(tensor));
    }
  }
  return nullptr;
}

const onnx::TensorProto* ConstantTable::Find(const ir::OpIndex& index, const onnx::GraphProto* graph,
                                             absl::string_view name) {
  return FindAt(index, graph, name, 0);
}

const onnx::TensorProto* ConstantTable::FindInFunction(const ir::NodeList& nodes,
                                                       absl::string_view name) {
  for (const onnx::NodeProto& node : nodes) {
    if (node.output_size() != 1 || node.output(0) != name) continue;
    if (node.op_type() != "Constant" || !CanonicalDomain(node.domain()).empty()) return nullptr;
    // A value the function's caller gives (an attribute reference) is none.
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (!attribute.ref_attr_name().empty()) return nullptr;
    }
    const onnx::TensorProto* value = ConstantNodeValue(node, owned_);
    // A copy: a step may rewrite the node while it is in use.
    return value == nullptr ? nullptr : &owned_.emplace_back(*value);
  }
  return nullptr;
}

const onnx::TensorProto* ConstantTable::FindAt(const ir::OpIndex& index,
                                               const onnx::GraphProto* graph,
                                               absl::string_view name, int depth) {
  for (int level = 0; graph != nullptr && level <= kMaxGraphDepth; ++level) {
    Scope& scope = ScopeOf(index, graph);
    auto found = scope.constants.find(name);
    if (found != scope.constants.end()) {
      return opaque_ != nullptr && opaque_->contains(name) ? nullptr : found->second;
    }
    if (scope.foldable.contains(name)) return Fold(index, graph, scope, name, depth);
    if (level == 0 && carried_ != nullptr) {
      auto outside = carried_->find(name);
      if (outside != carried_->end()) return &outside->second;
    }
    graph = index.ParentOf(graph);
  }
  return nullptr;
}

const onnx::TensorProto* ConstantTable::Fold(const ir::OpIndex& index, const onnx::GraphProto* graph,
                                             Scope& scope, absl::string_view name, int depth) {
  auto entry = scope.foldable.find(name);
  const onnx::NodeProto& node = *entry->second;
  if (opset_ <= 0 || depth >= kMaxFoldDepth) return nullptr;
  const schema::OpSchema* op = schema::Registry::Get().Lookup("", node.op_type(), opset_);
  // Tried once: whatever happens below, the node's outputs are not
  // folded again.
  for (const std::string& output : node.output()) scope.foldable.erase(output);
  if (op == nullptr) return nullptr;
  std::vector<eval::Tensor> values;
  values.reserve(node.input_size());
  for (const std::string& input : node.input()) {
    if (input.empty()) continue;
    const onnx::TensorProto* constant = FindAt(index, graph, input, depth + 1);
    if (constant == nullptr) return nullptr;
    absl::StatusOr<eval::Tensor> value = eval::FromProto(*constant, kMaxFoldedElements);
    if (!value.ok()) return nullptr;
    values.push_back(*std::move(value));
  }
  std::vector<const eval::Tensor*> inputs;
  size_t next = 0;
  for (const std::string& input : node.input()) {
    inputs.push_back(input.empty() ? nullptr : &values[next++]);
  }
  absl::StatusOr<std::vector<eval::Tensor>> outputs =
      eval::EvaluateNode(node, op->since_version, inputs);
  if (!outputs.ok()) return nullptr;
  for (const eval::Tensor& output : *outputs) {
    if (output.size() > kMaxFoldedElements) return nullptr;
  }
  const onnx::TensorProto* asked = nullptr;
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    const onnx::TensorProto* value =
        &owned_.emplace_back(eval::ToProto((*outputs)[i], node.output(i)));
    scope.constants.try_emplace(node.output(i), value);
    if (node.output(i) == name) asked = value;
  }
  return asked;
}

ConstantTable::Scope& ConstantTable::ScopeOf(const ir::OpIndex& index,
                                             const onnx::GraphProto* graph) {
  auto [it, inserted] = graphs_.try_emplace(graph);
  if (inserted) Collect(*graph, index.ParentOf(graph) == nullptr, it->second);
  return it->second;
}

void ConstantTable::Clear() {
  graphs_.clear();
  owned_.clear();
}

void ConstantTable::AddInitializers(const onnx::GraphProto* graph,
                                    absl::Span<const onnx::TensorProto* const> added) {
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return;  // collected when first asked for
  for (const onnx::TensorProto* tensor : added) {
    it->second.constants.try_emplace(tensor->name(), tensor);
  }
}

void ConstantTable::Collect(const onnx::GraphProto& graph, bool main, Scope& scope) {
  auto& constants = scope.constants;
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    constants.try_emplace(tensor.name(), &tensor);
  }
  // The values of this graph that are surely no constants (views of its
  // names): a node reading one cannot fold, so it is not among the
  // foldable ones, and its outputs are such values too.
  absl::flat_hash_set<absl::string_view> varying;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!constants.contains(input.name())) varying.insert(input.name());
  }
  auto may_be_constant = [&](absl::string_view name) {
    if (name.empty() || scope.foldable.contains(name)) return true;
    if (varying.contains(name)) return false;
    if (constants.contains(name)) return opaque_ == nullptr || !opaque_->contains(name);
    // Defined outside the graph: in an enclosing one, or for the main
    // graph, by a Constant no longer among its nodes.
    return !main || (carried_ != nullptr && carried_->contains(name));
  };
  auto note_varying = [&](const onnx::NodeProto& node) {
    for (const std::string& output : node.output()) {
      if (!output.empty() && !constants.contains(output)) varying.insert(output);
    }
  };
  for (const onnx::NodeProto& node : graph.node()) {
    if (!CanonicalDomain(node.domain()).empty()) {
      note_varying(node);
      continue;
    }
    if (node.output_size() == 1 && node.op_type() == "Identity" && node.input_size() == 1) {
      // An Identity of a constant is that constant (a Constant a
      // downgrade made an initializer is passed on by one).
      if (opaque_ != nullptr && opaque_->contains(node.input(0))) {
        note_varying(node);
        continue;
      }
      auto found = constants.find(node.input(0));
      if (found != constants.end()) {
        // A copy: the insertion may move the entry `found` points at.
        const onnx::TensorProto* value = found->second;
        constants.try_emplace(node.output(0), value);
        continue;
      }
    }
    if (node.output_size() == 1 && node.op_type() == "Constant") {
      if (const onnx::TensorProto* value = ConstantNodeValue(node, owned_)) {
        std::optional<int64_t> count = ElementCount(*value);
        if (count && *count <= kMaxFoldedElements && value->data_location() !=
                                                        onnx::TensorProto::EXTERNAL) {
          value = &owned_.emplace_back(*value);
        }
        constants.try_emplace(node.output(0), value);
      }
      continue;
    }
    if (!MayFold(node) ||
        !std::all_of(node.input().begin(), node.input().end(), may_be_constant)) {
      note_varying(node);
      continue;
    }
    for (const std::string& output : node.output()) {
      if (!output.empty() && !constants.contains(output)) scope.foldable.try_emplace(output, &node);
    }
  }
}

}  // namespace onnxconvert::converter
