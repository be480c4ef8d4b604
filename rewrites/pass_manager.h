#ifndef ONNX_CONVERT_REWRITES_PASS_MANAGER_H_
#define ONNX_CONVERT_REWRITES_PASS_MANAGER_H_

// The graph rewriter's entry point: runs the passes of a profile over every
// graph of a model (main graph, subgraphs, model-local functions) until a
// round changes nothing, then checks the result.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/onnx.pb.h"
#include "rewrites/pass.h"
#include "rewrites/rules_explain.h"

namespace onnxconvert::rewrites {

// What a rewrite did.
struct RewriteReport {
  std::string profile;
  // Per pass, in the order they ran, summed over rounds and graphs.
  std::vector<PassStats> passes;
  // Rounds run; false when the last round still changed something (the
  // round cap was reached before a fixed point).
  int rounds = 0;
  bool converged = true;
  int64_t nodes_before = 0;  // in every graph
  int64_t nodes_after = 0;
  int64_t initializers_before = 0;
  int64_t initializers_after = 0;
  int64_t bytes_before = 0;  // serialized model
  int64_t bytes_after = 0;
  // RewriteOptions::explain: the rules explained at each node of their
  // root op, on the model as given (before any pass ran).
  std::vector<RuleExplanation> explain;

  // A few lines: totals, then one line per pass that matched (and per
  // rule); `with_records` adds each recorded rewrite's before (-) and
  // after (+) in ONNX text; then a line per explanation.
  std::string ToText(bool with_records = false) const;
  // The same as JSON, records included (`rewrites` of each pass), the
  // explanations as `explain`.
  std::string ToJson() const;
};

// The passes `options` ask for, in order: the profile's (less `skip`), or
// `passes`. InvalidArgument naming an unknown pass or profile.
absl::StatusOr<std::vector<const PassEntry*>> SelectPasses(const RewriteOptions& options);

// Rewrites `model` in place with the passes `options` select. Graph inputs
// and outputs keep their names and types; value_info of values that no
// longer exist, initializers nothing uses and model-local functions nothing
// calls are removed. The result must pass the checker, and strict inference
// when the model did: an error otherwise (the model is then partly
// rewritten; callers keep their copy). Errors name the pass and graph.
absl::StatusOr<RewriteReport> Optimize(onnx::ModelProto& model, const RewriteOptions& options);

}  // namespace onnxconvert::rewrites

#endif  // ONNX_CONVERT_REWRITES_PASS_MANAGER_H_
