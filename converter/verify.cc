#include "converter/verify.h"

#include <cmath>
#include <optional>
#include <random>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "eval/compare.h"
#include "eval/data_sets.h"
#include "ir/status_macros.h"

namespace onnxconvert::converter {
namespace {

// The seed of random verification inputs: the same sets everywhere.
constexpr uint64_t kVerifySeed = 0x5eed;
// The extent of symbolic dims in every random set after the first.
constexpr int64_t kOtherDimExtent = 2;
// Most sets options.verify may ask for.
constexpr int kMaxVerifySets = 64;

// The symbolic dims of the fed inputs of `graph`, all at `extent`.
absl::flat_hash_map<std::string, int64_t> SymbolicDims(const onnx::GraphProto& graph,
                                                       int64_t extent) {
  absl::flat_hash_map<std::string, int64_t> dims;
  for (const onnx::ValueInfoProto* input : eval::FedInputs(graph)) {
    if (!input->type().has_tensor_type()) continue;
    for (const auto& dim : input->type().tensor_type().shape().dim()) {
      if (!dim.dim_param().empty()) dims[dim.dim_param()] = extent;
    }
  }
  return dims;
}

// `count` random input sets for `graph`.
absl::StatusOr<std::vector<VerifyInputSet>> RandomSets(const onnx::GraphProto& graph,
                                                       int count) {
  std::mt19937_64 rng(kVerifySeed);
  std::vector<VerifyInputSet> sets;
  for (int i = 0; i < count; ++i) {
    eval::RandomInputOptions options;
    options.dims = SymbolicDims(graph, i == 0 ? 1 : kOtherDimExtent);
    OC_ASSIGN_OR_RETURN(std::vector<eval::NamedValue> inputs,
                        eval::RandomInputs(graph, options, rng));
    sets.push_back({absl::StrCat("random set ", i), std::move(inputs)});
  }
  return sets;
}

// The input sets of the test_data_set_* folders of `dir`.
absl::StatusOr<std::vector<VerifyInputSet>> LoadedSets(const onnx::GraphProto& graph,
                                                       const std::string& dir) {
  absl::StatusOr<std::vector<eval::DataSet>> listed = eval::ListDataSets(dir);
  if (!listed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--verify-inputs '", dir, "': ", listed.status().message()));
  }
  std::vector<VerifyInputSet> sets;
  for (const eval::DataSet& set : *listed) {
    absl::StatusOr<std::vector<eval::NamedValue>> inputs = eval::LoadInputs(set, graph);
    if (!inputs.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("verification inputs '", set.dir,
                                                     "': ", inputs.status().message()));
    }
    sets.push_back({set.name.empty() ? set.dir : set.name, *std::move(inputs)});
  }
  return sets;
}

// Why an evaluation error means "not verified": "no kernel for Foo-3: ...".
std::string SkipReason(absl::string_view what, const absl::Status& status) {
  std::optional<std::string> op = eval::FailedOp(status);
  if (status.code() == absl::StatusCode::kUnimplemented && op) {
    return absl::StrCat(what, ": no kernel for ", *op, " (", status.message(), ")");
  }
  return absl::StrCat(what, ": ", status.message());
}

// A copy of `model` whose main graph also outputs every value its nodes
// compute, so that intermediate values can be compared by name.
onnx::ModelProto ExposeIntermediates(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  onnx::GraphProto& graph = *copy.mutable_graph();
  absl::flat_hash_set<std::string> outputs;
  for (const onnx::ValueInfoProto& output : graph.output()) outputs.insert(output.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& name : node.output()) {
      if (!name.empty() && outputs.insert(name).second) graph.add_output()->set_name(name);
    }
  }
  return copy;
}

// Values by name.
using ValueMap = absl::flat_hash_map<std::string, eval::Value>;

// Evaluates `model` with its intermediates exposed, on `set`.
absl::StatusOr<ValueMap> EvaluateAll(const onnx::ModelProto& model, const VerifyInputSet& set) {
  OC_ASSIGN_OR_RETURN(eval::EvalResult result,
                      eval::EvaluateModel(ExposeIntermediates(model), set.inputs));
  ValueMap values;
  for (eval::NamedValue& output : result.outputs) {
    values.emplace(output.name, std::move(output.value));
  }
  return values;
}

// " max abs 0.5, rel 0.5" from a failed comparison.
std::string ErrorText(const eval::Comparison& comparison) {
  if (!comparison.mismatch.empty()) return absl::StrCat(" (", comparison.mismatch, ")");
  if (!comparison.worst) return "";
  return absl::StrFormat(": max abs error %g, rel %g (at %s: expected %s, got %s)",
                         comparison.worst->abs_error, comparison.worst->rel_error,
                         comparison.worst->index, comparison.worst->expected,
                         comparison.worst->actual);
}

// The change of `step` that converted the node named `node` (or that
// produced `value` in the original), or null.
const NodeChange* ChangeOf(const StepReport& step, absl::string_view node,
                           absl::string_view original_node) {
  for (const NodeChange& change : step.nodes) {
    if (change.graph != "main") continue;
    if (change.node == node || change.node == original_node) return &change;
    for (absl::string_view alike : change.alike) {
      if (alike == node || alike == original_node) return &change;
    }
  }
  return nullptr;
}

// The node of `graph` that outputs `value`, or null.
const onnx::NodeProto* Producer(const onnx::GraphProto& graph, absl::string_view value) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) {
      if (output == value) return &node;
    }
  }
  return nullptr;
}

// The first node of `model`'s main graph (in graph order) with an output
// whose value differs from `reference`'s value of that name: the error
// naming it, or OK when none differs.
absl::Status FirstDisagreeingNode(const onnx::ModelProto& original, const ValueMap& reference,
                                  const onnx::ModelProto& model, const ValueMap& values,
                                  const StepReport& step, const VerifyInputSet& set) {
  for (const onnx::NodeProto& node : model.graph().node()) {
    for (const std::string& output : node.output()) {
      auto expected = reference.find(output);
      auto actual = values.find(output);
      if (expected == reference.end() || actual == values.end()) continue;
      eval::Comparison comparison = eval::CompareValues(expected->second, actual->second);
      if (comparison.ok) continue;
      const onnx::NodeProto* before = Producer(original.graph(), output);
      std::string before_name = before == nullptr ? "" : before->name();
      const NodeChange* change = ChangeOf(step, node.name(), before_name);
      std::string versions =
          change == nullptr
              ? absl::StrCat(node.op_type(), " at opset ", step.to_opset)
              : absl::StrCat(change->op, " ", change->from_version, " -> ",
                             change->to_version, " by adapter '", change->adapter, "'");
      return absl::FailedPreconditionError(absl::StrCat(
          "verification failed at ", StepName(step.domain, step.from_opset, step.to_opset),
          ": graph 'main', node '", node.name(), "' (", node.op_type(), "; ", versions,
          before != nullptr && before_name != node.name()
              ? absl::StrCat("; replaces node '", before_name, "'")
              : "",
          "): output '", output, "' differs from the original on input set '", set.name,
          "'", ErrorText(comparison)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<VerifyReference> EvaluateReference(const onnx::ModelProto& original,
                                                  const ConvertOptions& options) {
  VerifyReference reference;
  if (options.verify > kMaxVerifySets || options.verify < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("verify takes a number of input sets from 1 to ", kMaxVerifySets));
  }
  if (!options.verify_inputs.empty()) {
    OC_ASSIGN_OR_RETURN(reference.sets, LoadedSets(original.graph(), options.verify_inputs));
  } else {
    absl::StatusOr<std::vector<VerifyInputSet>> sets = RandomSets(original.graph(), options.verify);
    if (!sets.ok()) {
      reference.skipped = absl::StrCat("no random inputs: ", sets.status().message());
      return reference;
    }
    reference.sets = *std::move(sets);
  }
  for (const VerifyInputSet& set : reference.sets) {
    absl::StatusOr<eval::EvalResult> result = eval::EvaluateModel(original, set.inputs);
    if (!result.ok()) {
      reference.skipped = SkipReason("the original cannot be evaluated", result.status());
      return reference;
    }
    if (!result->deterministic) {
      reference.skipped = "the original has a non-deterministic op";
      return reference;
    }
    reference.outputs.push_back(std::move(result->outputs));
  }
  return reference;
}

absl::StatusOr<VerificationReport> CompareWithReference(const onnx::ModelProto& converted,
                                                        const VerifyReference& reference,
                                                        size_t* failed_set) {
  VerificationReport report;
  for (size_t i = 0; i < reference.sets.size(); ++i) {
    const VerifyInputSet& set = reference.sets[i];
    *failed_set = i;
    absl::StatusOr<eval::EvalResult> result = eval::EvaluateModel(converted, set.inputs);
    if (!result.ok()) {
      if (result.status().code() == absl::StatusCode::kUnimplemented) {
        report.skipped = SkipReason("the converted model cannot be evaluated", result.status());
        return report;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "verification failed: the converted model fails on input set '", set.name,
          "' where the original runs: ", result.status().message()));
    }
    const std::vector<eval::NamedValue>& expected = reference.outputs[i];
    for (size_t k = 0; k < expected.size() && k < result->outputs.size(); ++k) {
      eval::Comparison comparison =
          eval::CompareValues(expected[k].value, result->outputs[k].value);
      if (!comparison.ok) {
        return absl::FailedPreconditionError(
            absl::StrCat("verification failed: output '", expected[k].name,
                         "' differs from the original on input set '", set.name, "'",
                         ErrorText(comparison)));
      }
      if (comparison.worst) {
        report.max_abs_error = std::max(report.max_abs_error, comparison.worst->abs_error);
        if (std::isfinite(comparison.worst->rel_error)) {
          report.max_rel_error = std::max(report.max_rel_error, comparison.worst->rel_error);
        }
      }
    }
    report.outputs = static_cast<int>(expected.size());
    ++report.sets;
  }
  return report;
}

absl::Status LocaliseDisagreement(const onnx::ModelProto& original,
                                  const ConvertOptions& options, const VerifyInputSet& set,
                                  const absl::Status& end_to_end) {
  absl::StatusOr<ValueMap> reference = EvaluateAll(original, set);
  if (!reference.ok()) return end_to_end;
  onnx::ModelProto model = original;
  // Whole-model evaluation after each step: the first form, run only after
  // a failure (the design evaluates only the touched nodes).
  AfterStepHook hook = [&](const onnx::ModelProto& stepped,
                           const StepReport& step) -> absl::Status {
    absl::StatusOr<ValueMap> values = EvaluateAll(stepped, set);
    if (!values.ok() && values.status().code() == absl::StatusCode::kUnimplemented) {
      return absl::OkStatus();  // this step cannot tell; the next may
    }
    if (!values.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "verification failed at ", StepName(step.domain, step.from_opset, step.to_opset),
          ": graph 'main': the model fails on input set '", set.name,
          "' where the original runs: ", values.status().message()));
    }
    return FirstDisagreeingNode(original, *reference, stepped, *values, step, set);
  };
  ConvertOptions plain = options;
  plain.verify = 0;
  plain.verify_inputs.clear();
  absl::StatusOr<ConversionReport> rerun = ConvertSteps(model, plain, hook);
  if (!rerun.ok() && rerun.status().code() == absl::StatusCode::kFailedPrecondition &&
      absl::StartsWith(rerun.status().message(), "verification failed")) {
    return rerun.status();
  }
  return end_to_end;
}

namespace internal {

FaultInjection& FaultForTesting() {
  static FaultInjection* fault = new FaultInjection();
  return *fault;
}

void InjectFault(onnx::ModelProto& model, const StepReport& step) {
  const std::string& adapter = FaultForTesting().adapter;
  if (adapter.empty()) return;
  for (const NodeChange& change : step.nodes) {
    if (!absl::StartsWith(change.adapter, adapter) || change.graph != "main") continue;
    for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
      if (node.name() != change.node) continue;
      bool moved = false;
      for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
        if (attribute.type() == onnx::AttributeProto::FLOAT) {
          attribute.set_f(attribute.f() + 0.5f);
          moved = true;
          break;
        }
      }
      if (!moved && node.input_size() >= 2) {
        node.mutable_input()->SwapElements(0, 1);
      }
    }
  }
}

}  // namespace internal
}  // namespace onnxconvert::converter
