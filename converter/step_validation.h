#ifndef ONNX_CONVERT_CONVERTER_STEP_VALIDATION_H_
#define ONNX_CONVERT_CONVERTER_STEP_VALIDATION_H_

// Internal to the converter: validation of the model before and after each
// step (check and strict inference of the whole model, or of the nodes a
// step touched where that shows the whole model valid).

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "converter/converter.h"
#include "converter/incremental_validation.h"
#include "converter/step_tables.h"
#include "converter/step_touches.h"
#include "converter/tracks.h"
#include "ir/op_index.h"
#include "proto/onnx.pb.h"
#include "schema/inference.h"

namespace onnxconvert::converter {

// Lets the step to opset `to` of `domain` validate early the nodes it
// rewrites in place in `model`'s main graph, against `before`, the strict
// inference before the step (nothing when it has no types for that graph).
// `imports_after` holds the step's opsets while it runs.
void ArmEarlyValidation(StepTouches& touches, const onnx::ModelProto& model,
                        absl::string_view domain, int64_t to, schema::InferenceResult& before,
                        IncrementalValidator& incremental, Imports& imports_after);

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
                          const ConvertOptions& options, const ir::OpIndex& index, TypeTable& types,
                          IncrementalValidator& incremental, StepReport& step,
                          bool whole_model_allowed = true);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_STEP_VALIDATION_H_
