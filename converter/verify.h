#ifndef ONNX_CONVERT_CONVERTER_VERIFY_H_
#define ONNX_CONVERT_CONVERTER_VERIFY_H_

// Verifying a conversion by evaluation (ConvertOptions::verify). The
// original is evaluated once on every input set and each value of its main
// graph recorded. After each step only the nodes the step changed, added or
// rebound to another operator version are evaluated, on the recorded values
// of their inputs, and what they compute is compared with the recorded
// values of the names they produce: the first disagreement fails the
// conversion naming the step, node, op versions, error and input set. At
// the end the graph outputs are compared end to end, evaluating only the
// nodes whose values may differ from the original's.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
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

// Verifies one conversion as it goes: made from the original before the
// first step, told of every step, finished on the converted model.
class ConversionVerifier {
 public:
  // Evaluates `original` on the input sets `options` ask for and records
  // its values: the test_data_set_* of options.verify_inputs, or
  // options.verify random sets made by role from the declared types with a
  // fixed seed, symbolic dims 1 in the first set and 3 in the others (or
  // the next of 16, 64, 256 the original accepts). When the original cannot be evaluated (an op the evaluator
  // lacks, a non-deterministic op, inputs that cannot be made), the
  // verifier is made with skipped() saying why and verifies nothing.
  // The model is lent: outputs are added to it while it is evaluated and
  // removed after, leaving it as it was.
  static absl::StatusOr<std::unique_ptr<ConversionVerifier>> Begin(
      onnx::ModelProto& original, const ConvertOptions& options);

  // Why nothing is verified, or "".
  const std::string& skipped() const { return skipped_; }

  // Verifies the step `step` that made `model`, recording what it found in
  // step.verification: FailedPrecondition naming step, graph, node, op
  // versions, value, max abs/rel error and input set at a disagreement.
  absl::Status AfterStep(const onnx::ModelProto& model, StepReport& step);

  // Compares the graph outputs of `converted` with the original's.
  absl::StatusOr<VerificationReport> Finish(const onnx::ModelProto& converted);

 private:
  // What one input set knows: the value of each name of the main graph as
  // recorded (the original's, or for names the conversion added, what the
  // step that added them computed), and the names whose value in the model
  // as it stands may differ from the recorded one (or is not recorded).
  struct SetState {
    VerifyInputSet set;
    absl::flat_hash_map<std::string, eval::Value> values;
    absl::flat_hash_set<std::string> changed;
    // The names a step's nodes computed within tolerance but not to the
    // bit, with the largest absolute difference the step showed.
    absl::flat_hash_map<std::string, double> rounded;
  };

  ConversionVerifier() = default;

  // Evaluates `original` on the input sets `options` ask for, every value
  // of its main graph an output while it runs, and records the values;
  // sets skipped_ when it cannot. Unreadable input files are an error.
  absl::Status RecordSets(onnx::ModelProto& original, const ConvertOptions& options);
  // Evaluates `exposed` (the original, every value of its main graph an
  // output) on `set` and records its values.
  absl::Status Record(eval::PreparedModel& exposed, VerifyInputSet set);
  // Records random set `index` for `graph` (the original's), its symbolic
  // dims at the first extent the original accepts.
  absl::Status RecordRandomSet(const onnx::GraphProto& graph, eval::PreparedModel& exposed,
                               int index);

  // How far the graph output `output` moves on `state` when the values
  // the conversion computes differently (`state.rounded`) are the
  // original's moved by the difference their step showed, all up or all
  // down (the larger): the model's own amplification of those differences.
  absl::StatusOr<double> RoundingSensitivity(const onnx::ModelProto& converted,
                                             const std::vector<int>& cone,
                                             const SetState& state,
                                             const std::string& output) const;

  // How far `output` moves when the values of `state.rounded` are the
  // original's moved by their difference `up` (or down).
  absl::StatusOr<double> OutputMovement(const onnx::ModelProto& converted,
                                        const std::vector<int>& cone, const SetState& state,
                                        const std::string& output, bool up) const;

  // Records the values of the original's Constant nodes (not exposed as
  // outputs) in every set, taken from `exposed` once its runs are done.
  void RecordConstants(eval::PreparedModel& exposed);
  // Notes the main-graph nodes of `original` as the nodes before the first
  // step, each version-blind when it ran so on every set
  // (eval::PreparedModel::RanVersionBlind), and the opsets it imports.
  void NoteNodes(const onnx::ModelProto& original, const eval::PreparedModel& exposed);
  // Whether `node`, a version-blind original node that `step` rebinds and
  // left as it was, computes what the original did: its op runs the same
  // graph-level op or kernel at its original version and at its version
  // after the step.
  bool ComputesAsOriginal(const onnx::NodeProto& node, const StepReport& step) const;

  // Brings `state.changed` up to date with `main` after a step, in graph
  // order: a value differs when a value its node reads differs, when the
  // step's evaluation found it not identical (`differs`), or when it is not
  // recorded. Forgets the values `main` no longer has.
  static void Settle(const onnx::GraphProto& main,
                     const absl::flat_hash_set<std::string>& differs, SetState& state);

  std::string skipped_;
  std::vector<SetState> sets_;
  // The main-graph nodes of the model before the step, by address (the
  // conversion edits the model in place): their serialized bytes, and
  // whether they are original nodes, unchanged, that ran version-blind.
  // A node whose address and bytes are found here is one the step left as
  // it was.
  struct SeenNode {
    std::string print;
    bool version_blind = false;
  };
  absl::flat_hash_map<const onnx::NodeProto*, SeenNode> nodes_before_;
  // Serialized model-local functions of the model before the step, by id.
  absl::flat_hash_map<std::string, std::string> functions_before_;
  // The original's opset of each (canonical) domain.
  absl::flat_hash_map<std::string, int64_t> original_opsets_;
  // The original node of each value name, for messages.
  absl::flat_hash_map<std::string, std::string> original_producer_;
  // The original's graph outputs, by name.
  std::vector<std::string> output_names_;
};

// Called after every applied step of a conversion with the model as it
// stands; an error ends the conversion with it.
using AfterStepHook = std::function<absl::Status(const onnx::ModelProto& model, StepReport& step)>;

// The conversion step loop with a hook after every step (converter.cc).
absl::StatusOr<ConversionReport> ConvertSteps(onnx::ModelProto& converted,
                                              const ConvertOptions& options,
                                              const AfterStepHook& after_step);

namespace internal {

// Test-only fault injection: after every step, a node the adapter named
// `adapter` (or "<adapter>: ...") converted is corrupted (its first float
// attribute moved by 0.5, else its first two inputs swapped). Set through
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
