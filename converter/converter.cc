#include "converter/converter.h"

#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "converter/incremental_validation.h"
#include "converter/side_by_side.h"
#include "converter/step_runner.h"
#include "converter/step_validation.h"
#include "converter/tracks.h"
#include "converter/verify.h"
#include "ir/graph_index.h"
#include "ir/node_edits.h"
#include "ir/op_index.h"
#include "schema/checker.h"
#include "schema/inference.h"

namespace onnxconvert::converter {

int64_t MinIrVersionForOpset(int64_t opset) {
  // (first opset, IR version) of each ONNX release that raised the IR.
  static constexpr std::pair<int64_t, int64_t> kFirstOpsetOfIr[] = {
      {1, 3}, {9, 4}, {10, 5}, {11, 6}, {12, 7}, {15, 8}, {19, 9},
      {21, 10}, {23, 11}, {24, 12}, {25, 13},
  };
  int64_t ir = 3;
  for (auto [first_opset, version] : kFirstOpsetOfIr) {
    if (opset >= first_opset) ir = version;
  }
  return ir;
}

absl::StatusOr<ConversionResult> ConvertModel(const onnx::ModelProto& model,
                                              const ConvertOptions& options) {
  return ConvertModel(onnx::ModelProto(model), options);
}

absl::StatusOr<ConversionResult> ConvertModel(onnx::ModelProto&& input,
                                              const ConvertOptions& options) {
  ConversionResult result;
  result.model.Swap(&input);
  OC_ASSIGN_OR_RETURN(result.report, ConvertModelInPlace(result.model, options));
  return result;
}

absl::StatusOr<ConversionReport> ConvertModelInPlace(onnx::ModelProto& converted,
                                                     const ConvertOptions& options) {
  if (!VerifyRequested(options) || options.dry_run) return ConvertSteps(converted, options, {});
  OC_ASSIGN_OR_RETURN(std::unique_ptr<ConversionVerifier> verifier,
                      ConversionVerifier::Begin(converted, options));
  OC_ASSIGN_OR_RETURN(ConversionReport report,
                      ConvertSteps(converted, options,
                                   [&](const onnx::ModelProto& model, StepReport& step) {
                                     return verifier->AfterStep(model, step);
                                   }));
  OC_ASSIGN_OR_RETURN(report.verification.emplace(), verifier->Finish(converted));
  return report;
}

absl::StatusOr<ConversionReport> ConvertSteps(onnx::ModelProto& converted,
                                              const ConvertOptions& options,
                                              const AfterStepHook& after_step) {
  const onnx::ModelProto& model = converted;  // as given, until the first step
  OC_ASSIGN_OR_RETURN(std::vector<Track> tracks, PlanTracks(model, options));
  ConversionReport report;
  for (const Track& track : tracks) {
    if (track.domain.empty()) {
      report.source_opset = track.source;
      report.target_opset = track.target;
    } else {
      report.source_ml_opset = track.source;
      report.target_ml_opset = track.target;
    }
  }
  report.source_ir_version = model.ir_version();

  // The input is checked, inferred strictly (the types each step's
  // validation then brings up to date) and indexed: side by side in a large
  // model, as all of it only reads the model.
  bool validate = options.validate_each_step && !options.dry_run;
  schema::CheckReport check;
  auto inferred = std::make_unique<TypeTable::Result>(absl::UnknownError("not inferred"));
  std::optional<ir::OpIndex> index;
  std::optional<NameGenerator> names;
  RunSideBySide(
      [&] {
        check = schema::CheckModel(model);
        names.emplace(model);
        index.emplace(converted, DomainsOf(tracks));
      },
      [&] {
        if (validate) *inferred = InferStrictly(model);
      },
      static_cast<size_t>(model.graph().node_size()) >= kSideBySideNodes);
  if (!check.status().ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the input model is invalid: ", check.status().message()));
  }
  // Types for the adapters, brought up to date by every step's validation.
  TypeTable types(converted);
  if (validate) {
    if (!inferred->ok()) {
      return absl::InvalidArgumentError(absl::StrCat("the input model does not validate: ",
                                                     inferred->status().message()));
    }
    types.Reset(std::move(inferred), /*strict=*/true);
  }
  ir::NodeEdits edits;
  StepTouches touches(edits, model.has_graph() ? &model.graph() : nullptr);
  ConstantTable constants;
  AddedConstants added;
  IncrementalValidator incremental(converted);
  // The opsets a step converts to, for its early validation.
  Imports imports_after;
  ir::Retired retired;
  for (const auto& [op, count] : index->others()) report.untouched_ops.emplace_back(op, count);
  int64_t step_rank = 0;  // the step's place in the conversion
  for (const Track& track : tracks) {
    int64_t direction = track.target > track.source ? 1 : -1;
    for (int64_t from = track.source; from != track.target; from += direction) {
      auto start = std::chrono::steady_clock::now();
      int64_t to = from + direction;
      if (options.should_stop && options.should_stop()) return Stopped(track.domain, from, to);
      if (validate && !options.full_validation && types.strict() != nullptr) {
        // The step's rewrites in place are validated while it goes on.
        ArmEarlyValidation(touches, converted, track.domain, to, *types.strict(), incremental,
                           imports_after);
      }
      StepContext context{*index, types, *names, edits, touches, constants, added, track.domain,
                          from, to, options.dry_run, options.expand_functions,
                          !options.no_casts, options.should_stop};
      context.step_rank = step_rank++;
      absl::StatusOr<StepReport> step = RunStep(context);
      if (!step.ok()) return step.status();
      if (!options.dry_run) {
        StepChanges changes =
            ApplyStep(*step, touches, edits, *index, retired, constants, &converted.graph());
        SetImportedOpset(*converted.mutable_opset_import(), track.domain, to);
        for (auto& function : *converted.mutable_functions()) {
          SetImportedOpset(*function.mutable_opset_import(), track.domain, to);
        }
        if (step->nodes.empty() && step->bumps.empty()) {
          // No node binds to another operator version: what validated at
          // the previous opset is still valid.
          step->validation = StepValidation::kUnchanged;
        } else if (validate) {
          OC_RETURN_IF_ERROR(ValidateStep(converted, changes, options, *index, types,
                                          incremental, *step));
        } else {
          types.Invalidate();
        }
        internal::InjectFault(converted, *step);
        if (after_step) OC_RETURN_IF_ERROR(after_step(converted, *step));
      }
      step->milliseconds = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - start)
                               .count();
      AddStep(*std::move(step), report);
    }
  }
  int64_t ir = TargetIrVersion(options, report.source_ir_version, report.target_opset);
  if (!options.dry_run) {
    converted.set_ir_version(ir);
    if (ir < 4) ListInitializersAsInputs(*converted.mutable_graph());
  }
  report.target_ir_version = ir;
  return report;
}

void ListInitializersAsInputs(onnx::GraphProto& graph) {
  absl::flat_hash_set<absl::string_view> inputs;
  for (const onnx::ValueInfoProto& input : graph.input()) inputs.insert(input.name());
  std::vector<onnx::ValueInfoProto> added;
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (inputs.contains(tensor.name())) continue;
    onnx::ValueInfoProto& input = added.emplace_back();
    input.set_name(tensor.name());
    onnx::TypeProto::Tensor* type = input.mutable_type()->mutable_tensor_type();
    type->set_elem_type(tensor.data_type());
    onnx::TensorShapeProto* shape = type->mutable_shape();
    for (int64_t dim : tensor.dims()) shape->add_dim()->set_dim_value(dim);
  }
  for (onnx::ValueInfoProto& input : added) *graph.add_input() = std::move(input);
}

}  // namespace onnxconvert::converter
