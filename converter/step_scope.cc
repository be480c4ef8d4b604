#include "converter/step_scope.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "schema/shape_util.h"

namespace onnxconvert::converter {
namespace {

// Whether a node of `graph` or of a graph nested in it reads `value`, or
// `graph` gives it as an output.
bool ReadsValue(const onnx::GraphProto& graph, absl::string_view value) {
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (output.name() == value) return true;
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) {
      if (input == value) return true;
    }
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g() && ReadsValue(attribute.g(), value)) return true;
      for (const onnx::GraphProto& subgraph : attribute.graphs()) {
        if (ReadsValue(subgraph, value)) return true;
      }
    }
  }
  return false;
}

}  // namespace

StepScope::Typed StepScope::TypedIn(absl::string_view value) const {
  // The anchor's graph, else an enclosing graph (the outer scope).
  const onnx::GraphProto* graph = site_.graph;
  for (int depth = 0; graph != nullptr && depth <= kMaxGraphDepth; ++depth) {
    if (const onnx::TypeProto* type = step_.types.TypeOf(graph, value)) return {graph, type};
    graph = step_.index.ParentOf(graph);
  }
  return {};
}

const onnx::TypeProto* StepScope::TypeOf(absl::string_view value) const {
  return TypedIn(value).type;
}

const onnx::TensorProto* StepScope::ConstantOf(absl::string_view name) const {
  if (site_.graph == nullptr) return step_.constants.FindInFunction(*site_.list, name);
  return step_.constants.Find(step_.index, site_.graph, name);
}

std::optional<bool> StepScope::ValueUsed(absl::string_view value) const {
  if (!step_.whole_graphs) {
    if (!unanswered_.has_value()) unanswered_ = std::string(value);
    return std::nullopt;
  }
  if (site_.graph == nullptr) return std::nullopt;
  return ReadsValue(*site_.graph, value);
}

std::optional<std::vector<int64_t>> StepScope::StaticInts(absl::string_view name) const {
  if (!step_.whole_graphs) {
    if (!unanswered_.has_value()) unanswered_ = std::string(name);
    return std::nullopt;
  }
  const schema::ValueFacts* facts = step_.types.FactsOf(TypedIn(name).graph, name);
  if (facts == nullptr) return std::nullopt;
  return schema::KnownInts(facts->constant, facts->shape_data);
}

std::string StepScope::FreshName(absl::string_view hint) {
  return step_.names.FreshName(hint);
}

absl::StatusOr<std::string> StepScope::AddConstant(onnx::TensorProto&& value) {
  return step_.added.Add(site_, step_.names, step_.touches, std::move(value),
                         step_.order);
}

absl::Status StepScope::AddNamedConstant(onnx::TensorProto value) {
  if (site_.graph == nullptr) {
    return absl::FailedPreconditionError("a function body holds no constants");
  }
  step_.touches.AddInitializer(*site_.graph, std::move(value));
  return absl::OkStatus();
}

absl::Status StepScope::Unanswered() const {
  if (!unanswered_.has_value()) return absl::OkStatus();
  // The step's error names the node.
  return absl::UnimplementedError(absl::StrCat(
      "whether '", *unanswered_, "' is read cannot be told in a window of the model"));
}

}  // namespace onnxconvert::converter
