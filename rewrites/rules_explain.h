#ifndef ONNX_CONVERT_REWRITES_RULES_EXPLAIN_H_
#define ONNX_CONVERT_REWRITES_RULES_EXPLAIN_H_

// Why a rewrite rule (rewrites/rules.h) matches or not at the nodes it
// could match at: `onnx-convert optimize --explain RULE`.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph_index.h"
#include "rewrites/pass.h"
#include "rewrites/rules.h"

namespace onnxconvert::rewrites {

// What a rule did at one node of its root op (the op of the pattern node
// computing the pattern's first output).
struct RuleExplanation {
  std::string rule;
  std::string graph;  // "main", "function 'local.F'", ...
  std::string node;   // the node's name ("" when unnamed)
  std::string op;     // the node's op
  int index = -1;     // its position in the graph's node list; -1: no such node
  bool matched = false;
  // Matched: the nodes the match takes. Else the first reason it does not
  // match: the pattern node or input that failed and how, or the `where`
  // predicate that failed (its text, file:line:column and the facts seen).
  std::string reason;
};

// `rule` explained at every live node of `graph` of its root op, in graph
// order, with the facts of `context`.
std::vector<RuleExplanation> ExplainRule(const Rule& rule, const PassContext& context,
                                         const GraphIndex& graph);

// The rules `options.explain` names, among the built-in rules and
// `options.rule_files`; InvalidArgument naming one that is neither.
absl::StatusOr<std::vector<Rule>> RulesToExplain(const RewriteOptions& options);

// ExplainRule of each of `rules` over every graph of `index`; a rule no
// node could match at gets one entry (index -1) saying so.
std::vector<RuleExplanation> ExplainRules(const std::vector<Rule>& rules,
                                          const PassContext& context, const ModelIndex& index);

// One line: "RULE at node 'n' (#3, Mul) in main: no match: REASON".
std::string ExplanationText(const RuleExplanation& explanation);

}  // namespace onnxconvert::rewrites

#endif  // ONNX_CONVERT_REWRITES_RULES_EXPLAIN_H_
