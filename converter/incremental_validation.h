#ifndef ONNX_CONVERT_CONVERTER_INCREMENTAL_VALIDATION_H_
#define ONNX_CONVERT_CONVERTER_INCREMENTAL_VALIDATION_H_

// Validation of a model after a conversion step from the nodes the step
// touched, instead of checking and inferring the whole model again; the
// converter falls back to full validation when this cannot decide.

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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
  // Whether the group is its anchor alone, only bound to another version of
  // its op (StepTouches::Touch): a node with subgraphs may be one.
  bool rebound = false;
};

// An initializer a step added to a subgraph.
struct SubgraphInitializer {
  const onnx::GraphProto* graph;
  const onnx::TensorProto* tensor;
};

// Infers `node` (in the graph at `path`) with `reinfer`, then checks it
// against the types inferred, unless it repeats a node checked so before
// (NodeReinferencer::RepeatsCheckedNode). The checker's finding comes
// first when both fail.
absl::Status InferAndCheck(schema::NodeChecker& checker, schema::NodeReinferencer& reinfer,
                           const onnx::NodeProto& node, const std::string& path);

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
  // `added` to the main graph and `added_to_subgraphs` to subgraphs (each
  // checked as CheckModel checks an initializer); `types` is the inference
  // before the step.
  absl::Status Validate(absl::Span<const TouchedGroup> groups,
                        absl::Span<const onnx::TensorProto* const> added,
                        schema::InferenceResult& types, const ParentOf& parent_of,
                        absl::Span<const SubgraphInitializer> added_to_subgraphs = {});

  // Forgets what it collected of the main graph: a step was validated
  // otherwise, and may have changed it.
  void Forget() {
    graph_level_.clear();
    collected_ = false;
  }

  // Notes initializer `tensor`, just added to the main graph by the step.
  void NoteInitializer(const onnx::TensorProto& tensor);

  // Checks the wiring of `group` (the first rule above) against `types`,
  // the inference before the step, while the step goes on: for a node
  // rewritten in place, validated early.
  absl::Status CheckWiringNow(const TouchedGroup& group, const schema::GraphTypes& types);

 private:
  // Collects the inputs and initializers of the main graph, once.
  void Collect();

  // Re-infers and checks `groups` through `reinfer`, reading `main`, the
  // types before the step, which it leaves as they are.
  absl::Status ValidateGroups(absl::Span<const TouchedGroup> groups,
                              const schema::GraphTypes& main,
                              schema::NodeReinferencer& reinfer) const;

  // Validates `groups`, all in subgraph `graph`, to which the step added
  // the initializers `added`, against `types`.
  absl::Status ValidateSubgraph(const onnx::GraphProto& graph,
                                absl::Span<const TouchedGroup> groups,
                                absl::Span<const onnx::TensorProto* const> added,
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

// Validates, on a second thread while a step goes on, the nodes the step
// rewrote in place (nothing inserted or removed around them, wiring checked
// by the caller), so that most of the step's validation is done when its
// rewrites are. Each node is re-inferred and checked as
// IncrementalValidator does, against the inference before the step, which
// it only reads until Commit.
class EarlyValidator {
 public:
  // Starts the thread (or, if none can be had, validates in AddNode);
  // `imports` are the opsets the step converts to.
  EarlyValidator(const onnx::ModelProto& model, const schema::NodeChecker::Imports& imports,
                 schema::InferenceResult& types);
  // Stops the thread; what it found is dropped unless committed.
  ~EarlyValidator();
  EarlyValidator(const EarlyValidator&) = delete;
  EarlyValidator& operator=(const EarlyValidator&) = delete;

  // Whether it could start (the main graph was inferred before).
  bool ok() const { return reinfer_ != nullptr; }
  // Queues `tensor`, an initializer the step added to the main graph.
  void AddInitializer(const onnx::TensorProto* tensor);
  // Queues `node`, rewritten in place.
  void AddNode(const onnx::NodeProto* node);
  // Waits for the queued nodes: OK if each re-inferred and checked.
  absl::Status Finish();
  // Writes the types it inferred into the inference (after Finish).
  void Commit() { reinfer_->Commit(); }
  // The nodes queued.
  int nodes() const { return nodes_; }

 private:
  struct Item {
    const onnx::NodeProto* node;      // or
    const onnx::TensorProto* tensor;  // an initializer
  };
  void Queue(Item item);
  void Flush();
  void Process(const Item& item);
  void Run();

  const onnx::ModelProto& model_;
  std::unique_ptr<schema::NodeReinferencer> reinfer_;
  std::unique_ptr<schema::NodeChecker> checker_;
  std::string path_;
  // The main graph's types before the step, when there are enough that
  // they are fetched ahead; else null.
  const schema::GraphTypes* base_ = nullptr;
  std::vector<Item> pending_;  // the caller's, not yet queued
  int nodes_ = 0;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<Item> queue_;  // guarded by mutex_
  bool closed_ = false;      // guarded by mutex_
  absl::Status status_;  // the thread's until it is joined
  std::thread thread_;
  bool finished_ = false;
};

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_INCREMENTAL_VALIDATION_H_
