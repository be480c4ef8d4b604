#include "converter/incremental_validation.h"

#include <memory>
#include <system_error>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "converter/side_by_side.h"
#include "schema/checker.h"

namespace onnxconvert::converter {
namespace {

// How many groups ahead the type table is prefetched.
constexpr size_t kLookahead = 8;

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

absl::Status IncrementalValidator::CheckWiring(const TouchedGroup& group,
                                               const schema::GraphTypes& types) const {
  absl::InlinedVector<absl::string_view, 4> produced;
  for (const onnx::NodeProto* node : group.nodes) {
    for (const onnx::AttributeProto& attribute : node->attribute()) {
      if (attribute.has_g() || attribute.graphs_size() > 0) {
        return absl::FailedPreconditionError(absl::StrCat(Label(*node), " has subgraphs"));
      }
    }
    for (const std::string& input : node->input()) {
      if (input.empty() || Contains(group.old_inputs, input) || Contains(produced, input) ||
          graph_level_.contains(input)) {
        continue;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          Label(*node), ": input '", input, "' may be defined only after the node"));
    }
    for (const std::string& output : node->output()) {
      if (output.empty()) continue;
      bool fresh_or_old = Contains(group.old_outputs, output) ||
                          (!types.types.contains(output) && !graph_level_.contains(output));
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

absl::Status IncrementalValidator::Validate(absl::Span<const TouchedGroup> groups,
                                            absl::Span<const onnx::TensorProto* const> added,
                                            schema::InferenceResult& types) {
  const onnx::GraphProto& graph = model_.graph();
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
  first->Commit();
  second->Commit();
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
    for (const Item& item : batch) Process(item);
    batch.clear();
  }
}

void EarlyValidator::Process(const Item& item) {
  if (!status_.ok()) return;
  if (item.tensor != nullptr) {
    reinfer_->AddInitializer(*item.tensor);
    return;
  }
  status_ = checker_->Check(*item.node, path_, ReinferredTypes(*reinfer_));
  if (status_.ok()) status_ = reinfer_->Infer(*item.node);
}

absl::Status IncrementalValidator::ValidateGroups(absl::Span<const TouchedGroup> groups,
                                                  const schema::GraphTypes& main,
                                                  schema::NodeReinferencer& reinfer) const {
  schema::NodeChecker checker(model_);
  ReinferredTypes types(reinfer);
  for (size_t g = 0; g < groups.size(); ++g) {
    // Large graphs miss the cache on every value: fetch ahead.
    if (g + kLookahead < groups.size()) {
      for (const onnx::NodeProto* node : groups[g + kLookahead].nodes) {
        for (const std::string& input : node->input()) main.types.prefetch(input);
        for (const std::string& output : node->output()) main.types.prefetch(output);
      }
    }
    OC_RETURN_IF_ERROR(CheckWiring(groups[g], main));
    for (const onnx::NodeProto* node : groups[g].nodes) {
      // Inputs are defined before the node: CheckWiring saw to it.
      OC_RETURN_IF_ERROR(checker.Check(*node, main.path, types));
      OC_RETURN_IF_ERROR(reinfer.Infer(*node));
    }
  }
  return absl::OkStatus();
}

}  // namespace onnxconvert::converter
