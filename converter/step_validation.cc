#include "converter/step_validation.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "schema/checker.h"
#include "schema/type_strings.h"

namespace onnxconvert::converter {

void ArmEarlyValidation(StepTouches& touches, const onnx::ModelProto& model,
                        absl::string_view domain, int64_t to, schema::InferenceResult& before,
                        IncrementalValidator& incremental, Imports& imports_after) {
  auto main = before.graphs.find(&model.graph());
  if (main == before.graphs.end()) return;
  imports_after = model.opset_import();
  SetImportedOpset(imports_after, domain, to);
  touches.ArmEarly(
      [&model, &imports_after, &before] {
        return std::make_unique<EarlyValidator>(model, imports_after, before);
      },
      &incremental, &main->second);
}

// Strict inference of the whole model.
absl::StatusOr<schema::InferenceResult> InferStrictly(const onnx::ModelProto& model) {
  schema::InferenceOptions strict;
  strict.strict = true;
  return schema::InferModel(model, strict);
}

// Check and strict inference of the whole model: the inferred types, or the
// first error.
absl::StatusOr<schema::InferenceResult> Validate(const onnx::ModelProto& model) {
  schema::CheckReport report = schema::CheckModel(model);
  OC_RETURN_IF_ERROR(report.status());
  return InferStrictly(model);
}

namespace {

// The first value of the main graph whose type `incremental` (validated
// node by node) and `full` (the whole model inferred again) disagree on,
// as an error.
absl::Status CompareTypes(const onnx::ModelProto& model, const schema::InferenceResult& incremental,
                          const schema::InferenceResult& full) {
  const auto& mine = incremental.graphs.at(&model.graph()).types;
  for (const auto& [name, type] : full.graphs.at(&model.graph()).types) {
    auto it = mine.find(name);
    if (it == mine.end()) {
      return absl::InternalError(absl::StrCat("value '", name, "' has no type incrementally"));
    }
    if (!schema::SameType(*it->second, *type)) {
      return absl::InternalError(absl::StrCat("value '", name, "' is {",
                                              it->second->ShortDebugString(),
                                              "} incrementally, {", type->ShortDebugString(),
                                              "} in full"));
    }
  }
  return absl::OkStatus();
}

// Checks the functions of `model` after `step` changed some (an error
// leaves the step to the whole model's validation, which names it).
absl::Status CheckFunctionsAfter(const onnx::ModelProto& model, StepReport& step) {
  schema::CheckReport report = schema::CheckFunctions(model);
  step.nodes_validated += report.nodes_checked;
  return report.status();
}

}  // namespace

// Validates the model after a step: the nodes the step touched when that
// is enough to show the whole model valid, else the whole model.
absl::Status ValidateStep(const onnx::ModelProto& model, const StepChanges& changes,
                          const ConvertOptions& options, const ir::OpIndex& index, TypeTable& types,
                          IncrementalValidator& incremental, StepReport& step,
                          bool whole_model_allowed) {
  std::string name = StepName(step.domain, step.from_opset, step.to_opset);
  schema::InferenceResult* before = types.strict();
  // The nodes validated early, while the step went on.
  absl::Status early = changes.early != nullptr ? changes.early->Finish() : absl::OkStatus();
  if (!options.full_validation && changes.needs_full.empty() && before != nullptr && early.ok()) {
    absl::Status status =
        incremental.Validate(changes.groups, changes.added, *before,
                             [&index](const onnx::GraphProto* g) { return index.ParentOf(g); },
                             changes.added_to_subgraphs);
    if (status.ok() && changes.functions_changed) status = CheckFunctionsAfter(model, step);
    if (status.ok()) {
      if (changes.early != nullptr) {
        changes.early->Commit();
        step.nodes_validated += changes.early->nodes();
      }
      step.validation = StepValidation::kIncremental;
      for (const TouchedGroup& group : changes.groups) step.nodes_validated += group.nodes.size();
      if (!options.cross_check) return absl::OkStatus();
      absl::StatusOr<schema::InferenceResult> full = Validate(model);
      if (!full.ok()) {
        return absl::InternalError(absl::StrCat(
            name, ": validated node by node, but the whole model does not validate: ",
            full.status().message()));
      }
      absl::Status same = CompareTypes(model, *before, *full);
      if (!same.ok()) return absl::InternalError(absl::StrCat(name, ": ", same.message()));
      return absl::OkStatus();
    }
  }
  if (!whole_model_allowed) {
    return absl::UnimplementedError(
        absl::StrCat(name, ": the touched nodes do not show the model valid"));
  }
  incremental.Forget();
  // The previous step's types are stale now: free them first, so that two
  // inference results are never held at once.
  types.Invalidate();
  auto validated = std::make_unique<TypeTable::Result>(Validate(model));
  if (!validated->ok()) {
    return absl::InternalError(absl::StrCat(name, ": the converted model does not validate: ",
                                            validated->status().message()));
  }
  step.validation = StepValidation::kOk;
  step.nodes_validated = (*validated)->nodes_inferred;
  types.Reset(std::move(validated), /*strict=*/true);
  return absl::OkStatus();
}

}  // namespace onnxconvert::converter
