#include "converter/incremental_validation.h"

#include <map>
#include <memory>
#include <new>
#include <system_error>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "converter/side_by_side.h"
#include "schema/checker.h"
#include "schema/tensor_checks.h"

namespace onnxconvert::converter {
namespace {

// How many groups ahead the type table is prefetched.
constexpr size_t kLookahead = 8;

// The values a graph has when the early validator fetches their types
// ahead (fewer stay in the cache).
constexpr size_t kFetchAheadValues = 65536;

// Checks the initializers a step added to `where` (a graph) as CheckModel
// checks an initializer.
absl::Status CheckAddedInitializers(absl::Span<const onnx::TensorProto* const> added,
                                    absl::string_view where) {
  for (const onnx::TensorProto* tensor : added) {
    absl::Status valid = schema::CheckTensor(*tensor);
    if (!valid.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("initializer '", tensor->name(),
                                                        "' added to ", where, ": ",
                                                        valid.message()));
    }
  }
  return absl::OkStatus();
}

// Fetches the types of `node`'s values from `types` ahead of their use
// (large graphs miss the cache on every value).
void PrefetchTypes(const schema::GraphTypes& types, const onnx::NodeProto& node) {
  for (const std::string& input : node.input()) types.types.prefetch(input);
  for (const std::string& output : node.output()) types.types.prefetch(output);
}

// How many nodes the step queues at a time for early validation.
constexpr size_t kBatch = 256;

// The types a reinferencer sees, for the checker.
class ReinferredTypes : public schema::NodeChecker::TypeSource {
 public:
  explicit ReinferredTypes(const schema::NodeReinferencer& reinfer) : reinfer_(reinfer) {}
  const onnx::TypeProto* TypeOf(absl::string_view name) const override {
    return reinfer_.TypeOf(name);
  }

 private:
  const schema::NodeReinferencer& reinfer_;
};

// "node 'x' (Op)" or "unnamed node (Op)".
std::string Label(const onnx::NodeProto& node) {
  return node.name().empty() ? absl::StrCat("unnamed node (", node.op_type(), ")")
                             : absl::StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

bool Contains(absl::Span<const absl::string_view> names, absl::string_view name) {
  for (absl::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

absl::Status InferAndCheck(schema::NodeChecker& checker, schema::NodeReinferencer& reinfer,
                           const onnx::NodeProto& node, const std::string& path) {
  absl::Status inferred = reinfer.Infer(node);
  if (inferred.ok() && reinfer.RepeatsCheckedNode()) return absl::OkStatus();
  OC_RETURN_IF_ERROR(checker.Check(node, path, ReinferredTypes(reinfer)));
  OC_RETURN_IF_ERROR(inferred);
  reinfer.NoteChecked();
  return absl::OkStatus();
}

absl::Status IncrementalValidator::CheckWiring(
    const TouchedGroup& group, const absl::flat_hash_set<std::string>& graph_level,
    absl::Span<const schema::GraphTypes* const> scopes) {
  // A name no scope knows is fresh.
  auto known = [&](absl::string_view name) {
    if (graph_level.contains(name)) return true;
    for (const schema::GraphTypes* scope : scopes) {
      if (scope->types.contains(name)) return true;
    }
    return false;
  };
  absl::InlinedVector<absl::string_view, 4> produced;
  for (const onnx::NodeProto* node : group.nodes) {
    for (const onnx::AttributeProto& attribute : node->attribute()) {
      if (!group.rebound && (attribute.has_g() || attribute.graphs_size() > 0)) {
        return absl::FailedPreconditionError(absl::StrCat(Label(*node), " has subgraphs"));
      }
    }
    for (const std::string& input : node->input()) {
      if (input.empty() || Contains(group.old_inputs, input) || Contains(produced, input) ||
          graph_level.contains(input)) {
        continue;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          Label(*node), ": input '", input, "' may be defined only after the node"));
    }
    for (const std::string& output : node->output()) {
      if (output.empty()) continue;
      bool fresh_or_old = Contains(group.old_outputs, output) || !known(output);
      if (Contains(produced, output) || !fresh_or_old) {
        return absl::FailedPreconditionError(
            absl::StrCat(Label(*node), ": output '", output, "' is defined elsewhere too"));
      }
      produced.push_back(output);
    }
  }
  for (absl::string_view output : group.old_outputs) {
    if (!output.empty() && !Contains(produced, output)) {
      return absl::FailedPreconditionError(
          absl::StrCat("value '", output, "' is no longer defined"));
    }
  }
  return absl::OkStatus();
}

absl::Status IncrementalValidator::Validate(absl::Span<const TouchedGroup> all_groups,
                                            absl::Span<const onnx::TensorProto* const> added,
                                            schema::InferenceResult& types,
                                            const ParentOf& parent_of,
                                            absl::Span<const SubgraphInitializer> added_to_subgraphs) {
  const onnx::GraphProto& graph = model_.graph();
  OC_RETURN_IF_ERROR(CheckAddedInitializers(added, "the main graph"));
  // Groups in subgraphs, and the initializers added there, are validated
  // graph by graph, after the main graph's (they only read values from
  // before the step, as those do).
  struct SubgraphChanges {
    std::vector<TouchedGroup> groups;
    std::vector<const onnx::TensorProto*> added;
  };
  std::vector<TouchedGroup> main_groups;
  std::map<const onnx::GraphProto*, SubgraphChanges> subgraphs;
  for (const SubgraphInitializer& added_there : added_to_subgraphs) {
    subgraphs[added_there.graph].added.push_back(added_there.tensor);
  }
  bool in_subgraphs = !added_to_subgraphs.empty();
  for (const TouchedGroup& group : all_groups) in_subgraphs |= group.graph != &graph;
  if (in_subgraphs) {
    for (const TouchedGroup& group : all_groups) {
      (group.graph == &graph ? main_groups : subgraphs[group.graph].groups).push_back(group);
    }
  }
  absl::Span<const TouchedGroup> groups = in_subgraphs ? main_groups : all_groups;
  auto found = types.graphs.find(&graph);
  if (found == types.graphs.end()) {
    return absl::FailedPreconditionError("no types for the main graph");
  }
  const schema::GraphTypes& main = found->second;  // stays put in the node map
  if (!collected_) {
    Collect();
  } else {
    for (const onnx::TensorProto* tensor : added) graph_level_.insert(tensor->name());
  }
  // The groups are independent (each reads values from before the step or
  // its own), so two halves are validated side by side, each writing only
  // its own reinferencer until both are done. The added initializers are
  // committed first, for both to see.
  OC_ASSIGN_OR_RETURN(std::unique_ptr<schema::NodeReinferencer> first,
                      schema::NodeReinferencer::Create(model_, graph, added, types));
  first->Commit();
  OC_ASSIGN_OR_RETURN(std::unique_ptr<schema::NodeReinferencer> second,
                      schema::NodeReinferencer::Create(model_, graph, {}, types));
  size_t nodes = 0;
  for (const TouchedGroup& group : groups) nodes += group.nodes.size();
  size_t half = 0;
  for (size_t counted = 0; half < groups.size() && 2 * counted < nodes; ++half) {
    counted += groups[half].nodes.size();
  }
  absl::Status first_status, second_status;
  RunSideBySide(
      [&] { first_status = ValidateGroups(groups.subspan(0, half), main, *first); },
      [&] { second_status = ValidateGroups(groups.subspan(half), main, *second); },
      nodes >= kSideBySideNodes);
  OC_RETURN_IF_ERROR(first_status);
  OC_RETURN_IF_ERROR(second_status);
  for (const auto& [subgraph, changes] : subgraphs) {
    OC_RETURN_IF_ERROR(
        ValidateSubgraph(*subgraph, changes.groups, changes.added, types, parent_of));
  }
  first->Commit();
  second->Commit();
  return absl::OkStatus();
}

absl::Status IncrementalValidator::ValidateSubgraph(const onnx::GraphProto& graph,
                                                    absl::Span<const TouchedGroup> groups,
                                                    absl::Span<const onnx::TensorProto* const> added,
                                                    schema::InferenceResult& types,
                                                    const ParentOf& parent_of) {
  OC_RETURN_IF_ERROR(CheckAddedInitializers(added, "a subgraph"));
  // The enclosing graphs, innermost first, with their types.
  std::vector<const onnx::GraphProto*> ancestors;
  std::vector<const schema::GraphTypes*> scopes;
  auto found = types.graphs.find(&graph);
  if (found == types.graphs.end()) {
    return absl::FailedPreconditionError("the subgraph was not inferred");
  }
  scopes.push_back(&found->second);
  for (const onnx::GraphProto* g = parent_of(&graph); g != nullptr; g = parent_of(g)) {
    auto outer = types.graphs.find(g);
    if (outer == types.graphs.end() || ancestors.size() > 64) {
      return absl::FailedPreconditionError("an enclosing graph was not inferred");
    }
    ancestors.push_back(g);
    scopes.push_back(&outer->second);
  }
  absl::flat_hash_set<std::string> graph_level;
  for (const auto& input : graph.input()) graph_level.insert(input.name());
  for (const auto& tensor : graph.initializer()) graph_level.insert(tensor.name());
  for (const TouchedGroup& group : groups) {
    OC_RETURN_IF_ERROR(CheckWiring(group, graph_level, scopes));
  }
  OC_ASSIGN_OR_RETURN(std::unique_ptr<schema::NodeReinferencer> reinfer,
                      schema::NodeReinferencer::Create(model_, graph, added, types, nullptr,
                                                       ancestors));
  schema::NodeChecker checker(model_);
  for (const TouchedGroup& group : groups) {
    for (const onnx::NodeProto* node : group.nodes) {
      OC_RETURN_IF_ERROR(InferAndCheck(checker, *reinfer, *node, found->second.path));
    }
  }
  reinfer->Commit();
  return absl::OkStatus();
}

void IncrementalValidator::Collect() {
  const onnx::GraphProto& graph = model_.graph();
  for (const auto& input : graph.input()) graph_level_.insert(input.name());
  for (const auto& tensor : graph.initializer()) graph_level_.insert(tensor.name());
  for (const auto& sparse : graph.sparse_initializer()) graph_level_.insert(sparse.values().name());
  collected_ = true;
}

void IncrementalValidator::NoteInitializer(const onnx::TensorProto& tensor) {
  if (collected_) graph_level_.insert(tensor.name());  // else Collect finds it
}

absl::Status IncrementalValidator::CheckWiringNow(const TouchedGroup& group,
                                                  const schema::GraphTypes& types) {
  if (!collected_) Collect();
  return CheckWiring(group, types);
}

EarlyValidator::EarlyValidator(const onnx::ModelProto& model,
                               const schema::NodeChecker::Imports& imports,
                               schema::InferenceResult& types)
    : model_(model) {
  auto found = types.graphs.find(&model.graph());
  if (found == types.graphs.end()) return;
  absl::StatusOr<std::unique_ptr<schema::NodeReinferencer>> reinfer =
      schema::NodeReinferencer::Create(model, model.graph(), {}, types, &imports);
  if (!reinfer.ok()) return;
  reinfer_ = *std::move(reinfer);
  checker_ = std::make_unique<schema::NodeChecker>(model, imports);
  path_ = found->second.path;
  if (found->second.types.size() >= kFetchAheadValues) base_ = &found->second;
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::system_error&) {
    // No thread to be had: AddNode validates at once.
  }
}

EarlyValidator::~EarlyValidator() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }
}

void EarlyValidator::AddInitializer(const onnx::TensorProto* tensor) { Queue({nullptr, tensor}); }

void EarlyValidator::AddNode(const onnx::NodeProto* node) {
  ++nodes_;
  Queue({node, nullptr});
}

void EarlyValidator::Queue(Item item) {
  if (!thread_.joinable()) {
    Process(item);
    return;
  }
  pending_.push_back(item);
  if (pending_.size() >= kBatch) Flush();
}

void EarlyValidator::Flush() {
  if (pending_.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.insert(queue_.end(), pending_.begin(), pending_.end());
  }
  pending_.clear();
  ready_.notify_one();
}

absl::Status EarlyValidator::Finish() {
  if (!finished_ && thread_.joinable()) {
    Flush();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }
  finished_ = true;
  return status_;
}

void EarlyValidator::Run() {
  std::vector<Item> batch;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return !queue_.empty() || closed_; });
      batch.swap(queue_);
      if (batch.empty() && closed_) return;
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (base_ != nullptr && i + kLookahead < batch.size() &&
          batch[i + kLookahead].node != nullptr) {
        PrefetchTypes(*base_, *batch[i + kLookahead].node);
      }
      Process(batch[i]);
    }
    batch.clear();
  }
}

void EarlyValidator::Process(const Item& item) {
  if (!status_.ok()) return;
  // On the validator's own thread an exception would end the process: out
  // of memory ends the validation instead.
  try {
    if (item.tensor != nullptr) {
      reinfer_->AddInitializer(*item.tensor);
      return;
    }
    status_ = InferAndCheck(*checker_, *reinfer_, *item.node, path_);
  } catch (const std::bad_alloc&) {
    status_ = absl::ResourceExhaustedError(absl::StrCat(path_, ": out of memory while validating"));
  }
}

absl::Status IncrementalValidator::ValidateGroups(absl::Span<const TouchedGroup> groups,
                                                  const schema::GraphTypes& main,
                                                  schema::NodeReinferencer& reinfer) const {
  schema::NodeChecker checker(model_);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g + kLookahead < groups.size()) {
      for (const onnx::NodeProto* node : groups[g + kLookahead].nodes) PrefetchTypes(main, *node);
    }
    OC_RETURN_IF_ERROR(CheckWiring(groups[g], main));
    for (const onnx::NodeProto* node : groups[g].nodes) {
      // Inputs are defined before the node: CheckWiring saw to it.
      OC_RETURN_IF_ERROR(InferAndCheck(checker, reinfer, *node, main.path));
    }
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::converter
