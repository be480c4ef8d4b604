#ifndef ONNX_CONVERT_REWRITES_RULES_INTERNAL_H_
#define ONNX_CONVERT_REWRITES_RULES_INTERNAL_H_

// What the rule file parser (rule_parser.cc), the rule engine (rules.cc,
// its `where` facts in rules_facts.cc) and its explainer (rules_explain.cc)
// share; not for other callers.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/graph_index.h"
#include "rewrites/pass.h"
#include "rewrites/rules.h"

namespace onnxconvert::rewrites::rules_internal {

// Element types by the names `where` spells them (float, int64, ...).
const std::map<std::string, int>& DtypeNames();

// Whether every `where` predicate of `rule` holds on `match` in `graph`,
// in order; a binding (`fact == @var`, rules.h) binds @var on `match`.
bool WhereHolds(const Rule& rule, const PassContext& context, const GraphIndex& graph,
                RuleMatch& match);

// How one `where` predicate came out on a match (for ExplainRule): whether
// it holds, the fact the predicate saw (nullopt: unknown) and the right-hand
// side it was compared to (nullopt: none, or unknown), both as text.
struct PredicateOutcome {
  bool holds = false;
  std::optional<std::string> fact;
  std::optional<std::string> rhs;
};

// Evaluates `predicate` of `rule` on `match` in `graph` as the engine does;
// a binding (`fact == @var`, rules.h) binds @var on `match`.
PredicateOutcome EvaluatePredicate(const Rule& rule, const Predicate& predicate,
                                   const PassContext& context, const GraphIndex& graph,
                                   RuleMatch& match);

// The operand swaps the engine tries for `rule`, in its order: bit i set
// swaps the two operands of commutative pattern node i (0 alone when the
// rule is not commutative).
std::vector<uint32_t> OperandSwaps(const Rule& rule);

// The default the schema of `node`'s op (at the model's opset) gives
// attribute `name`, as the engine takes it; `defined` says whether that op
// version has the attribute at all.
std::optional<onnx::AttributeProto> AttributeDefault(const PassContext& context,
                                                     const onnx::NodeProto& node,
                                                     absl::string_view name, bool& defined);

}  // namespace onnxconvert::rewrites::rules_internal

#endif  // ONNX_CONVERT_REWRITES_RULES_INTERNAL_H_
