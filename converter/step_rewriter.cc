#include "converter/step_rewriter.h"

#include <utility>

#include "absl/strings/str_cat.h"

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

const onnx::TypeProto* StepRewriter::TypeOf(absl::string_view value) const {
  // The anchor's graph, else an enclosing graph (the outer scope).
  const onnx::GraphProto* graph = site_.graph;
  for (int depth = 0; graph != nullptr && depth <= kMaxGraphDepth; ++depth) {
    if (const onnx::TypeProto* type = step_.types.TypeOf(graph, value)) return type;
    graph = step_.index.ParentOf(graph);
  }
  return nullptr;
}

const onnx::TensorProto* StepRewriter::ConstantOf(absl::string_view name) const {
  return step_.constants.Find(step_.index, site_.graph, name);
}

std::optional<bool> StepRewriter::ValueUsed(absl::string_view value) const {
  if (!step_.whole_graphs) {
    if (!unanswered_.has_value()) unanswered_ = std::string(value);
    return std::nullopt;
  }
  if (site_.graph == nullptr) return std::nullopt;
  return ReadsValue(*site_.graph, value);
}

std::string StepRewriter::FreshName(absl::string_view hint) {
  return step_.names.FreshName(hint);
}

absl::StatusOr<std::string> StepRewriter::AddConstant(onnx::TensorProto value) {
  return step_.added.Add(site_.graph, step_.names, step_.edits, *site_.node, std::move(value),
                         step_.order);
}

onnx::NodeProto* StepRewriter::InsertBefore(onnx::NodeProto node) {
  return step_.edits.InsertBefore(site_, std::move(node));
}

onnx::NodeProto* StepRewriter::InsertAfter(onnx::NodeProto node) {
  return step_.edits.InsertAfter(site_, std::move(node));
}

std::string StepRewriter::DetachOutput(int i) {
  auto* outputs = site_.node->mutable_output();
  std::string fresh = step_.names.FreshName(outputs->Get(i));
  // The old string object stays alive: inferred types view it.
  outputs->AddAllocated(new std::string(fresh));
  outputs->SwapElements(i, outputs->size() - 1);
  step_.edits.Retire(outputs->ReleaseLast());
  return fresh;
}

void StepRewriter::RemoveAnchor() { step_.edits.Remove(site_); }

void StepRewriter::TrackSubgraph(onnx::GraphProto& graph) {
  step_.edits.TrackSubgraph(graph, absl::StrCat(site_.path, "/", graph.name()), site_.graph);
}

absl::Status StepRewriter::Unanswered() const {
  if (!unanswered_.has_value()) return absl::OkStatus();
  // The step's error names the node.
  return absl::UnimplementedError(absl::StrCat(
      "whether '", *unanswered_, "' is read cannot be told in a window of the model"));
}

}  // namespace onnxconvert::converter
