#ifndef ONNX_CONVERT_CONVERTER_INCREMENTAL_VALIDATION_H_
#define ONNX_CONVERT_CONVERTER_INCREMENTAL_VALIDATION_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"
#include "schema/checker.h"
#include "schema/inference.h"

namespace onnxconvert::converter {

// The nodes one step touched around one node (the anchor), in graph order:
// those inserted before it, the anchor itself unless the step removed it,
// those inserted after it.
struct TouchedGroup {
  const onnx::GraphProto* graph;  // the main graph or a subgraph
  absl::Span<const onnx::NodeProto* const> nodes;
  // The anchor's inputs and outputs before the step.
  absl::Span<const absl::string_view> old_inputs;
  absl::Span<const absl::string_view> old_outputs;
};

// Validates the model after a step from the nodes the step touched, given
// the strict inference of the model before the step, which it brings up to
// date. OK means the model as a whole checks and infers strictly, with
// every value the step left in place keeping its type:
//  - each group's nodes read only values available where the anchor was
//    (its old inputs, graph inputs, initializers) or defined by an earlier
//    node of the group, and define the anchor's old outputs (each once)
//    and otherwise values used nowhere else;
//  - each node checks as CheckModel checks it, with the inferred types;
//  - each node re-infers strictly, and the values that had a type keep it.
// An error means this could not be shown (the change may reach further, or
// be invalid): validate the whole model to know which.
class IncrementalValidator {
 public:
  explicit IncrementalValidator(const onnx::ModelProto& model) : model_(model) {}

  // The graph enclosing a subgraph (null for the main graph).
  using ParentOf = std::function<const onnx::GraphProto*(const onnx::GraphProto*)>;

  // Validates after a step that touched `groups` and added the initializers
  // `added` to the main graph; `types` is the inference before the step.
  absl::Status Validate(absl::Span<const TouchedGroup> groups,
                        absl::Span<const onnx::TensorProto* const> added,
                        schema::InferenceResult& types, const ParentOf& parent_of);

  // Forgets what it collected of the main graph: a step was validated
  // otherwise, and may have changed it.
  void Forget() {
    graph_level_.clear();
    collected_ = false;
  }

 private:
  // Collects the inputs and initializers of the main graph, once.
  void Collect();

  // Checks and re-infers `groups` through `reinfer`, reading `main`, the
  // types before the step, which it leaves as they are.
  absl::Status ValidateGroups(absl::Span<const TouchedGroup> groups,
                              const schema::GraphTypes& main,
                              schema::NodeReinferencer& reinfer) const;

  // Validates `groups`, all in subgraph `graph`, against `types`.
  absl::Status ValidateSubgraph(const onnx::GraphProto& graph,
                                absl::Span<const TouchedGroup> groups,
                                schema::InferenceResult& types, const ParentOf& parent_of);

  // Checks the wiring rules of `group` (the first list above) in the main
  // graph.
  absl::Status CheckWiring(const TouchedGroup& group, const schema::GraphTypes& types) const {
    return CheckWiring(group, graph_level_, {&types});
  }
  // Checks them in a graph whose inputs and initializers are `graph_level`
  // and whose values, and those of the graphs enclosing it, `scopes` type.
  static absl::Status CheckWiring(const TouchedGroup& group,
                                  const absl::flat_hash_set<std::string>& graph_level,
                                  absl::Span<const schema::GraphTypes* const> scopes);

  const onnx::ModelProto& model_;
  // Inputs and initializers of the main graph, collected on first use.
  absl::flat_hash_set<std::string> graph_level_;
  bool collected_ = false;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_INCREMENTAL_VALIDATION_H_
