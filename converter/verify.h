#ifndef ONNX_CONVERT_CONVERTER_VERIFY_H_
#define ONNX_CONVERT_CONVERTER_VERIFY_H_

// Verifying a conversion by evaluation (ConvertOptions::verify), first
// form of issue 19 item 3: the original is evaluated once on the input
// sets, the converted model after the conversion, and their graph outputs
// compared. When they disagree the conversion is run again with the whole
// model evaluated after every step (only then), to name the first step,
// and within it the first node of the main graph, whose values differ from
// the original's values of the same name. Evaluating only the nodes each
// step touched, on recorded values, is the full design still to come.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "converter/converter.h"
#include "eval/graph.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

// One set of inputs to verify on.
struct VerifyInputSet {
  std::string name;  // "random set 0", "test_data_set_1"
  std::vector<eval::NamedValue> inputs;
};

// What the original computed on each input set, or why it could not.
struct VerifyReference {
  std::vector<VerifyInputSet> sets;
  std::vector<std::vector<eval::NamedValue>> outputs;  // per set
  std::string skipped;  // "" when evaluated
};

// Evaluates `original` on the input sets `options` ask for: the
// test_data_set_* of options.verify_inputs, or options.verify random sets
// from the declared types with a fixed seed, symbolic dims 1 in the first
// set and 2 in the others. A model the evaluator cannot run gives a
// reference with `skipped` set; unreadable input files are an error.
absl::StatusOr<VerifyReference> EvaluateReference(const onnx::ModelProto& original,
                                                  const ConvertOptions& options);

// Compares what `converted` computes on the reference's sets with it:
// the verification report, or FailedPrecondition naming the output, the
// input set and the max abs/rel error at the first disagreement, with the
// index of that set in `*failed_set`.
absl::StatusOr<VerificationReport> CompareWithReference(const onnx::ModelProto& converted,
                                                        const VerifyReference& reference,
                                                        size_t* failed_set);

// Called after every applied step of a conversion with the model as it
// stands; an error ends the conversion with it.
using AfterStepHook =
    std::function<absl::Status(const onnx::ModelProto& model, const StepReport& step)>;

// The conversion step loop with a hook after every step (converter.cc).
absl::StatusOr<ConversionReport> ConvertSteps(onnx::ModelProto& converted,
                                              const ConvertOptions& options,
                                              const AfterStepHook& after_step);

// Converts `original` again step by step to find the first step, and the
// first node in it, whose values on `set` differ from the original's:
// FailedPrecondition naming step, graph, node, op versions, output, max
// abs/rel error and the set; `end_to_end` itself when no step shows it.
absl::Status LocaliseDisagreement(const onnx::ModelProto& original,
                                  const ConvertOptions& options, const VerifyInputSet& set,
                                  const absl::Status& end_to_end);

namespace internal {

// Test-only fault injection: after every step, a node the adapter named
// named `adapter` (or "<adapter>: ...") converted is corrupted (its first float attribute moved by
// 0.5, else its first two inputs swapped). Set through
// converter/verify_testing.h only.
struct FaultInjection {
  std::string adapter;  // e.g. "Clip 11->10"; "" : none
};
FaultInjection& FaultForTesting();

// Applies FaultForTesting() to `model` after `step`.
void InjectFault(onnx::ModelProto& model, const StepReport& step);

}  // namespace internal
}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_VERIFY_H_
