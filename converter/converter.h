#ifndef ONNX_CONVERT_CONVERTER_CONVERTER_H_
#define ONNX_CONVERT_CONVERTER_CONVERTER_H_

// The converter's entry points: ConvertModel and ConvertModelInPlace take a
// model from its opsets to the target ones, one version step at a time, and
// return what each step did (ConversionReport). Used by the CLI, the service
// and the benchmarks.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "adapters/adapter.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::converter {

// Lists every initializer of `graph` that is not a graph input among its
// inputs, with the initializer's type and shape: before IR version 4 an
// initializer is the default of an input and must be declared as one.
void ListInitializersAsInputs(onnx::GraphProto& graph);

// Choices for a conversion.
struct ConvertOptions {
  int64_t target_opset = 0;             // ai.onnx opset to reach
  // ai.onnx.ml opset to reach; unset: ai.onnx.ml nodes are left as they are.
  std::optional<int64_t> ml_target_opset;
  std::optional<int64_t> ir_version;    // pins ir_version; default: raised as needed
  // After every step: check + strict inference of what the step touched
  // (the whole model where a change may reach further).
  bool validate_each_step = true;
  // Validate the whole model after every step instead (slower, the same
  // verdict).
  bool full_validation = false;
  // Validate both ways and fail (Internal) where they disagree: a test of
  // the incremental validation.
  bool cross_check = false;
  bool dry_run = false;                 // plan only: find adapters, change nothing
  // Downgrading past an op's introduction expands the op into the function
  // body the spec gives for it (then converts that further down).
  bool expand_functions = true;
  // A node using an element type its target version lacks gets Casts to a
  // wider type that holds every value exactly around it (listed in the
  // report); true: such a node is refused instead (--no-casts). A cast that
  // could lose a value is refused either way.
  bool no_casts = false;
  // Polled before every step and every few hundred nodes; once it returns
  // true the conversion ends with CANCELLED (a cancelled call, a passed
  // deadline). Null: never.
  std::function<bool()> should_stop;
  // Verifies the conversion by evaluation on this many seeded random input
  // sets (0: off): the original's outputs against the converted model's,
  // within eval/compare.h's tolerances. A disagreement fails the
  // conversion (FailedPrecondition) naming the first step and node that
  // show it; a model the evaluator cannot run is converted and reported as
  // not verified, with the reason.
  int verify = 0;
  // Verifies on the test_data_set_* folders of this directory instead of
  // random inputs ("" : random).
  std::string verify_inputs;
};

// Names held compactly, in one buffer: a large model's report may name
// hundreds of thousands of nodes changed alike.
class NameList {
 public:
  NameList() = default;
  NameList(std::initializer_list<absl::string_view> names) {
    for (absl::string_view name : names) push_back(name);
  }
  template <typename Iterator>
  NameList(Iterator begin, Iterator end) {
    for (; begin != end; ++begin) push_back(*begin);
  }

  void push_back(absl::string_view name) {
    chars_.append(name.data(), name.size());
    ends_.push_back(static_cast<uint32_t>(chars_.size()));
  }
  // Appends every name of `other`.
  void Append(const NameList& other) {
    size_t base = chars_.size();
    chars_.append(other.chars_);
    for (uint32_t end : other.ends_) ends_.push_back(static_cast<uint32_t>(base + end));
  }
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  absl::string_view operator[](size_t i) const {
    size_t begin = i == 0 ? 0 : ends_[i - 1];
    return absl::string_view(chars_).substr(begin, ends_[i] - begin);
  }
  bool operator==(const NameList& other) const = default;

  // Iterates over the names as views.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = absl::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = const absl::string_view*;
    using reference = absl::string_view;
    const_iterator(const NameList* list, size_t i) : list_(list), i_(i) {}
    absl::string_view operator*() const { return (*list_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const const_iterator& other) const { return i_ == other.i_; }
    bool operator!=(const const_iterator& other) const { return i_ != other.i_; }

   private:
    const NameList* list_;
    size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  std::string chars_;
  std::vector<uint32_t> ends_;  // where each name ends in chars_ (under 4 GiB)
};

// What happened to one node at one step (and to the nodes after it that
// changed exactly alike).
struct NodeChange {
  std::string graph;    // graph path, e.g. "main" or "function 'local.F'"
  std::string node;     // node name ("" if unnamed)
  // Names of the further nodes of the same graph and op that the step
  // changed exactly alike (same adapter, same changes), in graph order.
  NameList alike;
  std::string op;       // e.g. "Relu"
  int from_version = 0;
  int to_version = 0;
  std::string adapter;  // e.g. "Relu 13->14"
  std::vector<adapters::Change> changes;
  // Dry runs only: why the node cannot be converted ("" when it can).
  std::string refusal;
  // When the adapter restructured the node (replaced it by other nodes,
  // inserted nodes around it or rewired its inputs): the node before and
  // the nodes in its place after, in ONNX text, a line each ("" otherwise;
  // kept for the first kRestructuredTexts such nodes of a step).
  std::string before_text;
  std::string after_text;

  // The nodes this entry stands for: 1 + alike.size().
  int NodeCount() const { return 1 + static_cast<int>(alike.size()); }
};

// How many restructured nodes of a step keep their before and after text.
inline constexpr int kRestructuredTexts = 20;

// Nodes of one op in one graph that a step rebinds to the op's next version
// and leaves as they are.
struct VersionBump {
  std::string graph;
  std::string op;
  int from_version = 0;
  int to_version = 0;
  int nodes = 0;
};

// What verification by evaluation found at one step: the nodes the step
// changed or added (and those it rebound to another version) evaluated on
// the values the model computed before it, against what they replace.
struct StepVerification {
  // Why the step could not be verified ("" when it was): an op the
  // evaluator lacks, a non-deterministic op, an input no step computed.
  std::string skipped;
  int nodes = 0;  // nodes evaluated on each set
  int sets = 0;   // input sets they were evaluated on
  int values = 0;  // values of the model before the step compared on each set
  double max_abs_error = 0;
  double max_rel_error = 0;
  // Nodes the step only rebound and did not evaluate: original nodes whose
  // op runs the same kernel at both versions, and which never asked for
  // their version, so compute what the original computed.
  int rebound_alike = 0;
};

// How a step's result was validated; the report prints each as its word
// (StepValidationName).
enum class StepValidation {
  kSkipped,      // "skipped": not validated
  kOk,           // "ok": the whole model checked and inferred
  kIncremental,  // "incremental": the touched nodes checked and inferred
                 // against the types before the step
  kUnchanged,    // "unchanged": no node binds to another version, so still valid
};

// The last StepValidation, for walking them all.
inline constexpr StepValidation kLastStepValidation = StepValidation::kUnchanged;

// The report's word for `validation`, e.g. "incremental".
absl::string_view StepValidationName(StepValidation validation);

// The validation the report word `word` names, or nullopt for a word this
// build does not know.
std::optional<StepValidation> ParseStepValidation(absl::string_view word);

// One opset step.
struct StepReport {
  std::string domain;  // "" for ai.onnx, else e.g. "ai.onnx.ml"
  int64_t from_opset = 0;
  int64_t to_opset = 0;
  // Nodes the step changed (or, in dry runs, cannot convert).
  std::vector<NodeChange> nodes;
  // Nodes it only rebinds, by graph and op, in the order first met.
  std::vector<VersionBump> bumps;
  StepValidation validation = StepValidation::kSkipped;
  int nodes_validated = 0;  // nodes checked and inferred after the step
  double milliseconds = 0;
  // Set when verification was asked for and the original was evaluated.
  std::optional<StepVerification> verification;

  // The nodes the step converted: changed and rebound.
  int NodeCount() const;
};

// What verification by evaluation found (ConvertOptions::verify).
struct VerificationReport {
  // Why the conversion could not be verified ("" when it was): an op the
  // evaluator lacks, a type it does not hold, a non-deterministic op.
  std::string skipped;
  int sets = 0;     // input sets both models were evaluated on
  int outputs = 0;  // graph outputs compared on each set
  // The largest absolute and relative errors of the worst elements of the
  // outputs (relative errors where the expected value is not 0).
  double max_abs_error = 0;
  double max_rel_error = 0;
  // How: "per step" (the nodes each step touched, then the graph outputs
  // end to end by evaluating only the nodes whose values changed).
  std::string method = "per step";
  // Nodes evaluated for the end-to-end comparison: those whose values may
  // differ from the original's.
  int end_to_end_nodes = 0;
  // Set when a graph output differed end to end beyond the tolerance while
  // every step agreed within it, and by no more than twice this: how far
  // the original's outputs move when the values the conversion computes
  // differently move by the differences their steps showed (the model
  // amplifying differences each within tolerance).
  double rounding_sensitivity = 0;
};

// "verified per step: 3 input sets, ..." or "not verified: <why>".
std::string VerificationText(const VerificationReport& verification);

// "verified 3 nodes on 2 input sets, ..." or "not verified (3 nodes): <why>".
std::string StepVerificationText(const StepVerification& verified);

// Everything a conversion did, in order.
struct ConversionReport {
  int64_t source_opset = 0;
  int64_t target_opset = 0;
  std::optional<int64_t> source_ml_opset;  // when ai.onnx.ml was converted
  std::optional<int64_t> target_ml_opset;
  int64_t source_ir_version = 0;
  int64_t target_ir_version = 0;
  std::vector<StepReport> steps;
  // Nodes of other domains, left as they are: "domain.op" with counts.
  std::vector<std::pair<std::string, int>> untouched_ops;
  int nodes_converted = 0;
  int nodes_refused = 0;  // dry runs: nodes that cannot be converted
  // Set when verification was asked for.
  std::optional<VerificationReport> verification;

  // The report as deterministic JSON (timings included).
  std::string ToJson() const;
  // The report as text, a line per step and per changed node.
  std::string ToText() const;
};

// A converted model with its report.
struct ConversionResult {
  onnx::ModelProto model;
  ConversionReport report;
};

// How reports and errors name a step: "step 12 -> 13", or
// "ai.onnx.ml step 2 -> 1" for another domain.
std::string StepName(absl::string_view domain, int64_t from, int64_t to);

// Whether `options` ask for verification by evaluation.
inline bool VerifyRequested(const ConvertOptions& options) {
  return options.verify > 0 || !options.verify_inputs.empty();
}

// The ai.onnx IR version that opset `opset` first shipped with.
int64_t MinIrVersionForOpset(int64_t opset);

// Converts `model` one ai.onnx opset at a time to `options.target_opset`,
// up or down, through per-operator adapters, validating after each step.
// `model` is not modified. On failure the error names the step, graph, node,
// op and versions, and the reason (FailedPrecondition when the model cannot
// be expressed at the target, InvalidArgument when it is invalid).
absl::StatusOr<ConversionResult> ConvertModel(const onnx::ModelProto& model,
                                              const ConvertOptions& options);

// ConvertModel for a model the caller gives up: converted in place of a
// copy (the caller's object is left empty).
absl::StatusOr<ConversionResult> ConvertModel(onnx::ModelProto&& model,
                                              const ConvertOptions& options);

// ConvertModel on the caller's object itself, which may live on an arena:
// `model` becomes the converted model and the report is returned. On
// failure `model` is left part-converted (the caller discards it).
absl::StatusOr<ConversionReport> ConvertModelInPlace(onnx::ModelProto& model,
                                                     const ConvertOptions& options);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_CONVERTER_H_
