#ifndef ONNX_CONVERT_CONVERTER_STEP_RUNNER_H_
#define ONNX_CONVERT_CONVERTER_STEP_RUNNER_H_

// Internal to the converter: one opset step over the nodes an OpIndex
// holds, and what it works with. ConvertModel runs the steps over a whole
// model; ConvertBytes over windows of a large graph's nodes.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "adapters/adapter_helpers.h"
#include "converter/constant_table.h"
#include "converter/converter.h"
#include "converter/incremental_validation.h"
#include "converter/op_index.h"
#include "converter/step_edits.h"
#include "ir/graph_index.h"
#include "ir/wire.h"
#include "proto/onnx.pb.h"
#include "schema/inference.h"
#include "schema/registry.h"

namespace onnxconvert::converter {

// The version `imports` gives `domain` (canonical), if any.
std::optional<int64_t> ImportedOpset(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
    absl::string_view domain);

// Sets the version `imports` gives `domain` (canonical) to `opset`.
void SetImportedOpset(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                      absl::string_view domain, int64_t opset);

// The types of every value, looked up by graph and name: inferred when
// first asked for, and replaced by the validation of each changed step.
class TypeTable {
 public:
  using Result = absl::StatusOr<schema::InferenceResult>;

  explicit TypeTable(const onnx::ModelProto& model) : model_(model) {}

  const onnx::TypeProto* TypeOf(const onnx::GraphProto* graph, absl::string_view name) const {
    if (graph == nullptr) return nullptr;
    if (result_ == nullptr) result_ = std::make_unique<Result>(schema::InferModel(model_));
    if (!result_->ok()) return nullptr;
    auto g = (*result_)->graphs.find(graph);
    if (g == (*result_)->graphs.end()) return nullptr;
    auto it = g->second.types.find(name);
    return it == g->second.types.end() ? nullptr : it->second;
  }
  // Uses `result`, inferred (strictly, if `strict`) for the model as it is
  // now.
  void Reset(std::unique_ptr<Result> result, bool strict) {
    result_ = std::move(result);
    strict_ = strict;
  }
  // Forgets the types: the model changed; the next lookup infers again.
  void Invalidate() {
    result_.reset();
    strict_ = false;
  }
  // The strict inference of the model as it is now, or null.
  schema::InferenceResult* strict() {
    return strict_ && result_ != nullptr && result_->ok() ? &**result_ : nullptr;
  }

 private:
  const onnx::ModelProto& model_;
  mutable std::unique_ptr<Result> result_;
  bool strict_ = false;
};


// The constants adapters add: one initializer per distinct small value and
// graph (a thousand Unsqueeze nodes moving axes = [0] to an input share
// one), under fresh names.
class AddedConstants {
 public:
  absl::StatusOr<std::string> Add(onnx::GraphProto* graph, NameGenerator& names,
                                  StepEdits& edits, const onnx::NodeProto& node,
                                  onnx::TensorProto&& value, int64_t order = 0) {
    if (graph == nullptr) {
      return absl::FailedPreconditionError(
          "a constant input would be needed inside a function body (not supported yet)");
    }
    value.clear_name();
    size_t bytes = value.ByteSizeLong();
    bool shareable = bytes <= kShareableBytes;
    Shared& shared = added_[graph];
    if (shareable) {
      key_.clear();  // reuses the buffer
      wire::AppendSerialized(value, bytes, key_);
      auto it = shared.find(key_);
      if (it != shared.end()) {
        // Work that comes before the constant's creator in a whole
        // conversion would have created it.
        if (order < it->second.order) out_of_order_ = true;
        return it->second.name;
      }
    }
    std::string name = names.FreshName(node.name().empty() ? node.op_type() : node.name());
    value.set_name(name);
    edits.AddInitializer(*graph, std::move(value));
    if (shareable) shared.emplace(key_, Created{name, order});
    orders_.emplace(name, order);
    return name;
  }

  // Whether a constant was shared with work ordered before its creator's
  // (ConvertBytes: the windows then disagree with a whole conversion).
  bool out_of_order() const { return out_of_order_; }
  // The order of the work that created the constant `name`, or 0.
  int64_t OrderOf(absl::string_view name) const {
    auto it = orders_.find(name);
    return it == orders_.end() ? 0 : it->second;
  }

 private:
  static constexpr size_t kShareableBytes = 256;
  // Names of the constants added to a graph, by serialized value.
  struct Created {
    std::string name;
    int64_t order;
  };
  using Shared = absl::flat_hash_map<std::string, Created>;
  absl::flat_hash_map<const onnx::GraphProto*, Shared> added_;
  absl::flat_hash_map<std::string, int64_t> orders_;
  bool out_of_order_ = false;
  std::string key_;  // scratch
};

// What one step works with.
struct StepContext {
  OpIndex& index;
  const TypeTable& types;
  NameGenerator& names;
  StepEdits& edits;
  ConstantTable& constants;
  AddedConstants& added;
  absl::string_view domain;  // canonical: "" for ai.onnx
  int64_t from;
  int64_t to;
  bool dry_run;
  bool expand;
  bool allow_casts;
  const std::function<bool()>& should_stop;
  // Whether the graphs hold all their nodes (false for the windows of a
  // large model): else a rewrite that asks whether a value is used fails
  // (StepRewriter::Unanswered), and the model is converted whole.
  bool whole_graphs = true;
  int64_t polled = 0;  // nodes seen since the last poll of should_stop
  // The step's rank in the conversion, from 0.
  int64_t step_rank = 0;
  // Where the work RunStep is doing comes in a whole conversion: step_rank
  // times kOpRanks plus the rank of the op it is converting among those
  // that change at the step.
  int64_t order = 0;
};

// How many ops a step orders its work by at most.
inline constexpr int64_t kOpRanks = 4096;

// How many nodes a step converts between polls of should_stop.
constexpr int64_t kStopPollNodes = 256;
// The error of a conversion stopped at a step.
absl::Status Stopped(absl::string_view domain, int64_t from, int64_t to);

// Whether `change`, of a node of `op` in `graph`, is exactly what `kept`
// records (so that `kept` lists the node among those changed alike).
bool SameChange(const NodeChange& kept, const NodeChange& change, absl::string_view graph,
                absl::string_view op);

using Imports = google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>;

// Lets the step to opset `to` of `domain` validate early the nodes it
// rewrites in place in `model`'s main graph, against `before`, the strict
// inference before the step (nothing when it has no types for that graph).
// `imports_after` holds the step's opsets while it runs.
void ArmEarlyValidation(StepEdits& edits, const onnx::ModelProto& model,
                        absl::string_view domain, int64_t to, schema::InferenceResult& before,
                        IncrementalValidator& incremental, Imports& imports_after);

// Runs one step: every node whose op binds to another version at the
// step's target is rebound or rewritten (edits applied by the caller).
absl::StatusOr<StepReport> RunStep(StepContext& step);

// Applies the edits of `step` to the node lists and brings the constants
// of `main` up to date.
StepChanges ApplyStep(const StepReport& step, StepEdits& edits, OpIndex& index, Retired& retired,
                      ConstantTable& constants, const onnx::GraphProto* main);

// Adds `step` to `report`, counting the nodes it converted (or, in dry
// runs, refused).
void AddStep(StepReport step, ConversionReport& report);

// The IR version a conversion to `target_opset` gives a model of IR
// `source_ir`: the one pinned by the options, else raised as needed.
int64_t TargetIrVersion(const ConvertOptions& options, int64_t source_ir, int64_t target_opset);

// Whether a step may have changed what the constant table knows beyond the
// initializers it added: Constant nodes changed, inserted or retyped, or a
// change outside what the step can list node by node.
bool ChangesConstants(const StepReport& step, const StepChanges& changes);

// Strict inference of the whole model.
absl::StatusOr<schema::InferenceResult> InferStrictly(const onnx::ModelProto& model);

// Check and strict inference of the whole model: the inferred types, or the
// first error.
absl::StatusOr<schema::InferenceResult> Validate(const onnx::ModelProto& model);

// Validates the model after a step: the nodes the step touched when that
// is enough to show the whole model valid, else (when `whole_model_allowed`)
// the whole model. Without it, a step the touched nodes cannot show valid
// fails with Unimplemented.
absl::Status ValidateStep(const onnx::ModelProto& model, const StepChanges& changes,
                          const ConvertOptions& options, const OpIndex& index, TypeTable& types,
                          IncrementalValidator& incremental, StepReport& step,
                          bool whole_model_allowed = true);

// One domain's way from its source opset to its target.
struct Track {
  std::string domain;  // canonical
  int64_t source;
  int64_t target;
};

// The domains to convert: ai.onnx always, ai.onnx.ml when asked for.
absl::StatusOr<std::vector<Track>> PlanTracks(const onnx::ModelProto& model,
                                              const ConvertOptions& options);

// The domains `tracks` convert, for the index.
absl::flat_hash_set<std::string> DomainsOf(const std::vector<Track>& tracks);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_STEP_RUNNER_H_
