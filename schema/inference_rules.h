#ifndef ONNX_CONVERT_SCHEMA_INFERENCE_RULES_H_
#define ONNX_CONVERT_SCHEMA_INFERENCE_RULES_H_

// The per-operator inference rules, one table per family of operators, and
// the lookup the inference engine uses to find an operator version's rule.

#include "absl/types/span.h"
#include "schema/inference_context.h"
#include "schema/registry.h"

namespace onnxconvert::schema {

// The inference rule for an operator version, or null when there is none.
InferenceFn FindInferenceRule(const OpSchema& schema);

// Rules of each family, registered in one table by FindInferenceRule.
absl::Span<const InferenceRule> ElementwiseRules();
absl::Span<const InferenceRule> ShapeRules();
absl::Span<const InferenceRule> TensorRules();
absl::Span<const InferenceRule> NnRules();
absl::Span<const InferenceRule> MiscRules();

// Sets LayerNormalization's Mean and InvStdDev to its stash_type.
absl::Status LayerNormalizationStashType(InferenceContext& ctx);

}  // namespace onnxconvert::schema

#endif  // ONNX_CONVERT_SCHEMA_INFERENCE_RULES_H_
