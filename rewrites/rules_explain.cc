// Explains rules: the pattern walked as the engine (rules.cc) walks it, the
// first thing that fails named, then `where` evaluated by the engine's own
// predicates (rules_internal::EvaluatePredicate). Whether a rule matches is
// always the engine's MatchRule; this only finds why not.

#include "rewrites/rules_explain.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "ir/text_printer.h"
#include "rewrites/rules_internal.h"
#include "schema/registry.h"

namespace onnxconvert::rewrites {
namespace {

using rules_internal::PredicateOutcome;

// How far an attempt got before failing; the furthest one is explained.
constexpr int kStructureMatched = 1000;
constexpr int kUsesChecked = 2000;
constexpr int kWhereBegins = 3000;

// "node 'n' (#3, Mul)", or "node #3 (Mul)" when unnamed.
std::string NodeLabel(const GraphIndex& graph, NodeId id) {
  const onnx::NodeProto& node = graph.node(id);
  if (node.name().empty()) return absl::StrCat("node #", id, " (", node.op_type(), ")");
  return absl::StrCat("node '", node.name(), "' (#", id, ", ", node.op_type(), ")");
}

// A pattern node as written: "pattern node `T = Mul (X, k)`".
std::string PatternLabel(const onnx::NodeProto& node) {
  return absl::StrCat("pattern node `", absl::StripAsciiWhitespace(PrintNodeText(node)), "`");
}

// A node's inputs without the trailing omitted ones (as the engine counts).
std::vector<absl::string_view> Inputs(const onnx::NodeProto& node) {
  std::vector<absl::string_view> inputs(node.input().begin(), node.input().end());
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  return inputs;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, absl::string_view name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

// An attribute's content, name and doc aside.
std::string AttributeContent(onnx::AttributeProto attribute) {
  attribute.clear_name();
  attribute.clear_doc_string();
  return attribute.SerializeAsString();
}

// An attribute's value as the report prints it: "1", "[0, 2]", "'x'".
std::string AttributeValueText(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: return absl::StrCat(a.i());
    case onnx::AttributeProto::FLOAT: return absl::StrCat(a.f());
    case onnx::AttributeProto::STRING: return absl::StrCat("'", a.s(), "'");
    case onnx::AttributeProto::INTS: return absl::StrCat("[", absl::StrJoin(a.ints(), ", "), "]");
    case onnx::AttributeProto::FLOATS:
      return absl::StrCat("[", absl::StrJoin(a.floats(), ", "), "]");
    default:
      return absl::StrCat("a ", onnx::AttributeProto::AttributeType_Name(a.type()), " attribute");
  }
}

// The pattern walked at a root as the engine's Matcher walks it, with the
// first failure described. One instance per operand-swap mask.
class Explainer {
 public:
  Explainer(const Rule& rule, const PassContext& context, const GraphIndex& graph, uint32_t swaps)
      : rule_(rule), context_(context), graph_(graph), swaps_(swaps) {
    const onnx::FunctionProto& p = rule.pattern;
    for (int i = 0; i < p.node_size(); ++i) {
      for (int s = 0; s < p.node(i).output_size(); ++s) producer_[p.node(i).output(s)] = {i, s};
    }
    inputs_.insert(p.input().begin(), p.input().end());
  }

  // The first reason the rule does not match at `root` ("" when nothing
  // failed); progress() says how far it got.
  std::string Explain(NodeId root) {
    RuleMatch match;
    match.nodes.assign(rule_.pattern.node_size(), kNoNode);
    auto [index, slot] = producer_.at(rule_.pattern.output(0));
    if (std::string why = MatchNode(index, root, match); !why.empty()) return why;
    progress_ = kStructureMatched;
    if (std::string why = CheckUses(match); !why.empty()) return why;
    progress_ = kUsesChecked;
    if (std::string why = CheckForwarded(match); !why.empty()) return why;
    // Two steps per predicate: one failing on a fact it knows got further
    // than one failing for want of the fact.
    for (size_t i = 0; i < rule_.where.size(); ++i) {
      progress_ = kWhereBegins + 2 * static_cast<int>(i);
      if (std::string why = CheckPredicate(rule_.where[i], match); !why.empty()) return why;
    }
    progress_ = kWhereBegins + 2 * static_cast<int>(rule_.where.size());
    return "";
  }

  int progress() const { return progress_; }

 private:
  std::string MatchNode(int pi, NodeId id, RuleMatch& match) {
    const onnx::NodeProto& p = rule_.pattern.node(pi);
    if (match.nodes[pi] != kNoNode) {
      if (match.nodes[pi] == id) return "";
      return absl::StrCat(PatternLabel(p), " is ", NodeLabel(graph_, match.nodes[pi]),
                          " and would also be ", NodeLabel(graph_, id));
    }
    for (size_t other = 0; other < match.nodes.size(); ++other) {
      if (match.nodes[other] == id) {
        return absl::StrCat(NodeLabel(graph_, id), " would match both ",
                            PatternLabel(rule_.pattern.node(other)), " and ", PatternLabel(p));
      }
    }
    const onnx::NodeProto& g = graph_.node(id);
    if (p.op_type() != g.op_type() || CanonicalDomain(p.domain()) !=
                                          CanonicalDomain(g.domain())) {
      return absl::StrCat(PatternLabel(p), " wants op ", p.op_type(), "; ", NodeLabel(graph_, id),
                          " is ", g.domain().empty() ? "" : absl::StrCat(g.domain(), "."),
                          g.op_type());
    }
    ++progress_;
    RuleMatch trial = match;
    trial.nodes[pi] = id;
    if (std::string why = BindOutputs(p, id, trial); !why.empty()) return why;
    if (std::string why = BindAttributes(p, id, trial); !why.empty()) return why;
    std::vector<absl::string_view> p_inputs = Inputs(p);
    std::vector<absl::string_view> g_inputs = Inputs(g);
    if (p_inputs.size() != g_inputs.size()) {
      return absl::StrCat(NodeLabel(graph_, id), " has ", g_inputs.size(), " inputs; ",
                          PatternLabel(p), " has ", p_inputs.size());
    }
    if (((swaps_ >> pi) & 1) != 0) std::swap(g_inputs[0], g_inputs[1]);
    for (size_t i = 0; i < p_inputs.size(); ++i) {
      if (std::string why = MatchValue(p_inputs[i], g_inputs[i], id, i, trial); !why.empty()) {
        return why;
      }
    }
    match = std::move(trial);
    return "";
  }

  std::string BindOutputs(const onnx::NodeProto& p, NodeId id, RuleMatch& match) const {
    const onnx::NodeProto& g = graph_.node(id);
    for (int s = 0; s < g.output_size(); ++s) {
      const std::string& value = g.output(s);
      if (s >= p.output_size() || p.output(s).empty()) {
        if (!value.empty() && !graph_.Consumers(value).empty()) {
          return absl::StrCat("output ", s, " '", value, "' of ", NodeLabel(graph_, id),
                              " is used; ", PatternLabel(p), " leaves it out");
        }
        continue;
      }
      if (value.empty()) {
        return absl::StrCat("output ", s, " of ", NodeLabel(graph_, id), " is omitted; ",
                            PatternLabel(p), " uses it");
      }
      if (std::string why = Bind(p.output(s), value, match); !why.empty()) return why;
    }
    if (p.output_size() > g.output_size()) {
      return absl::StrCat(NodeLabel(graph_, id), " has ", g.output_size(), " outputs; ",
                          PatternLabel(p), " has ", p.output_size());
    }
    return "";
  }

  std::string BindAttributes(const onnx::NodeProto& p, NodeId id, RuleMatch& match) const {
    const onnx::NodeProto& g = graph_.node(id);
    for (const onnx::AttributeProto& attribute : p.attribute()) {
      const onnx::AttributeProto* found = FindAttribute(g, attribute.name());
      std::optional<onnx::AttributeProto> by_default;
      if (found == nullptr) {
        bool defined = false;
        by_default = rules_internal::AttributeDefault(context_, g, attribute.name(), defined);
        if (!defined && attribute.ref_attr_name().empty()) continue;
        if (!by_default) {
          return absl::StrCat(NodeLabel(graph_, id), " leaves attribute ", attribute.name(),
                              " unset and its op has no default for it (", PatternLabel(p),
                              " names it)");
        }
        found = &*by_default;
      }
      const char* unset = by_default ? " (unset: the default)" : "";
      if (attribute.ref_attr_name().empty()) {
        if (AttributeContent(attribute) != AttributeContent(*found)) {
          return absl::StrCat("attribute ", attribute.name(), " of ", NodeLabel(graph_, id), " is ",
                              AttributeValueText(*found), unset, "; ", PatternLabel(p), " wants ",
                              AttributeValueText(attribute));
        }
        continue;
      }
      auto [it, inserted] = match.attributes.emplace(attribute.ref_attr_name(), *found);
      if (!inserted && AttributeContent(it->second) != AttributeContent(*found)) {
        return absl::StrCat("@", attribute.ref_attr_name(), " is ", AttributeValueText(it->second),
                            ", but attribute ", attribute.name(), " of ", NodeLabel(graph_, id),
                            " is ", AttributeValueText(*found), unset);
      }
    }
    return "";
  }

  static std::string Bind(absl::string_view pattern, absl::string_view value, RuleMatch& match) {
    auto [it, inserted] = match.values.emplace(pattern, value);
    if (inserted || it->second == value) return "";
    return absl::StrCat("pattern value ", pattern, " would be both '", it->second, "' and '", value,
                        "'");
  }

  // Pattern value `pattern` against `value`, input `slot` of node `user`.
  std::string MatchValue(absl::string_view pattern, absl::string_view value, NodeId user,
                         size_t slot, RuleMatch& match) {
    std::string where = absl::StrCat("input ", slot, " of ", NodeLabel(graph_, user));
    if (pattern.empty() || value.empty()) {
      if (pattern.empty() && value.empty()) return "";
      return absl::StrCat(where, pattern.empty() ? " is given; the pattern omits it"
                                                 : " is omitted; the pattern gives it");
    }
    if (inputs_.contains(pattern)) return Bind(pattern, value, match);
    auto found = match.values.find(pattern);
    if (found != match.values.end()) {
      if (found->second == value) return "";
      return absl::StrCat(where, " is '", value, "'; the pattern wants ", pattern, ", which is '",
                          found->second, "'");
    }
    auto [pi, wanted_slot] = producer_.at(pattern);
    ValueSource source = graph_.Producer(value);
    if (source.kind != ValueSource::Kind::kNodeOutput) {
      return absl::StrCat(where, ", '", value, "', is not computed by a node here (",
                          SourceText(source), "); ", PatternLabel(rule_.pattern.node(pi)),
                          " computes it");
    }
    if (source.slot != wanted_slot) {
      return absl::StrCat(where, ", '", value, "', is output ", source.slot, " of ",
                          NodeLabel(graph_, source.index), "; the pattern wants output ",
                          wanted_slot);
    }
    return MatchNode(pi, source.index, match);
  }

  static const char* SourceText(const ValueSource& source) {
    switch (source.kind) {
      case ValueSource::Kind::kUndefined: return "undefined";
      case ValueSource::Kind::kGraphInput: return "a graph input";
      case ValueSource::Kind::kInitializer: return "an initializer";
      case ValueSource::Kind::kSparseInitializer: return "a sparse initializer";
      case ValueSource::Kind::kNodeOutput: return "a node output";
      case ValueSource::Kind::kOuterScope: return "an outer-scope value";
    }
    return "";
  }

  std::string CheckUses(const RuleMatch& match) const {
    absl::flat_hash_set<NodeId> matched(match.nodes.begin(), match.nodes.end());
    absl::flat_hash_set<std::string> outputs(rule_.pattern.output().begin(),
                                             rule_.pattern.output().end());
    for (const auto& [pattern, value] : match.values) {
      if (inputs_.contains(pattern)) {
        ValueSource source = graph_.Producer(value);
        if (source.kind == ValueSource::Kind::kNodeOutput && matched.contains(source.index)) {
          return absl::StrCat("pattern input ", pattern, " ('", value,
                              "') is computed inside the match, by ",
                              NodeLabel(graph_, source.index));
        }
        continue;
      }
      if (outputs.contains(pattern)) continue;
      std::string intermediate = absl::StrCat("intermediate ", pattern, " ('", value, "')");
      for (const ValueUse& use : graph_.Consumers(value)) {
        if (use.is_graph_output()) return absl::StrCat(intermediate, " is a graph output");
        if (use.is_subgraph()) {
          return absl::StrCat(intermediate, " is read by a subgraph of ",
                              NodeLabel(graph_, use.node));
        }
        if (!matched.contains(use.node)) {
          return absl::StrCat(intermediate, " has another user: ", NodeLabel(graph_, use.node));
        }
      }
    }
    return "";
  }

  // A pattern output the replacement forwards from an input must not be a
  // graph output.
  std::string CheckForwarded(const RuleMatch& match) const {
    const onnx::FunctionProto& r = rule_.replacement;
    for (int o = 0; o < r.output_size(); ++o) {
      for (int i = 0; i < r.input_size(); ++i) {
        if (r.output(o) != r.input(i)) continue;
        absl::string_view value = match.values.at(rule_.pattern.output(o));
        if (IsGraphOutput(graph_, value)) {
          return absl::StrCat("the replacement forwards ", r.input(i), " to output ",
                              rule_.pattern.output(o), ", but '", value, "' is a graph output");
        }
        break;
      }
    }
    return "";
  }

  std::string CheckPredicate(const Predicate& predicate, RuleMatch& match) {
    PredicateOutcome outcome =
        rules_internal::EvaluatePredicate(rule_, predicate, context_, graph_, match);
    if (outcome.holds) return "";
    std::string call = PredicateCall(predicate);
    std::string text = predicate.comparison.empty() ? call
                                                    : absl::StrCat(call, " ", predicate.comparison,
                                                                   " ", TermText(predicate.rhs));
    std::string out = absl::StrCat("where `", text, "` (", rule_.file, ":", predicate.line, ":",
                                   predicate.column, ") fails: ");
    if (outcome.fact) ++progress_;
    if (!outcome.fact) {
      absl::StrAppend(&out, call, " is unknown");
    } else if (predicate.comparison.empty()) {
      absl::StrAppend(&out, call, " is ", *outcome.fact);
    } else {
      absl::StrAppend(&out, call, " is ", *outcome.fact, ", wanted ", predicate.comparison, " ",
                      outcome.rhs.value_or(absl::StrCat(TermText(predicate.rhs), " (unknown)")));
    }
    std::vector<std::string> seen = ArgumentFacts(predicate, match);
    if (!seen.empty()) absl::StrAppend(&out, "; ", absl::StrJoin(seen, ", "));
    return out;
  }

  // What inference knows of the predicate's arguments: "A ('a'): float[2,3]".
  std::vector<std::string> ArgumentFacts(const Predicate& predicate, const RuleMatch& match) const {
    std::vector<std::string> facts;
    for (const Term& term : predicate.args) {
      if (term.kind == Term::Kind::kAttribute) {
        auto found = match.attributes.find(term.name);
        facts.push_back(
            found == match.attributes.end()
                ? absl::StrCat("@", term.name, " unbound")
                : absl::StrCat("@", term.name, " = ", AttributeValueText(found->second)));
        continue;
      }
      if (term.kind != Term::Kind::kValue) continue;
      absl::string_view value = match.values.at(term.name);
      facts.push_back(absl::StrCat(term.name, " ('", value, "'): ", ValueFacts(value)));
    }
    return facts;
  }

  // Its type as inference knows it, whether it is a known constant, and
  // how many uses it has.
  std::string ValueFacts(absl::string_view value) const {
    const onnx::TypeProto* type = context_.TypeOf(graph_, value);
    std::string out;
    if (type == nullptr || !type->has_tensor_type()) {
      out = "no known tensor type";
    } else if (!type->tensor_type().has_shape()) {
      out = absl::StrCat(PrintTypeText(*type), ", no static shape");
    } else {
      out = PrintTypeText(*type);
    }
    absl::StrAppend(&out, context_.KnownConstant(graph_, value) != nullptr
                              ? ", a known constant"
                              : ", not a known constant");
    size_t uses = graph_.Consumers(value).size();
    absl::StrAppend(&out, ", ", uses, uses == 1 ? " use" : " uses");
    return out;
  }

  static std::string TermText(const Term& term) {
    switch (term.kind) {
      case Term::Kind::kValue: return term.name;
      case Term::Kind::kAttribute: return absl::StrCat("@", term.name);
      case Term::Kind::kNumber: return absl::StrCat(term.numbers.empty() ? 0 : term.numbers[0]);
      case Term::Kind::kList: return absl::StrCat("[", absl::StrJoin(term.numbers, ", "), "]");
      case Term::Kind::kDtype: return term.name;
      case Term::Kind::kString: return absl::StrCat("\"", term.name, "\"");
    }
    return term.name;
  }

  // "rank(A)", "opset", "@axis".
  static std::string PredicateCall(const Predicate& predicate) {
    if (predicate.function == "@") return TermText(predicate.args.at(0));
    if (predicate.args.empty()) return predicate.function;
    std::vector<std::string> args;
    for (const Term& term : predicate.args) args.push_back(TermText(term));
    return absl::StrCat(predicate.function, "(", absl::StrJoin(args, ", "), ")");
  }

  const Rule& rule_;
  const PassContext& context_;
  const GraphIndex& graph_;
  const uint32_t swaps_;
  absl::flat_hash_map<std::string, std::pair<int, int>> producer_;
  absl::flat_hash_set<std::string> inputs_;
  int progress_ = 0;
};

// The pattern node computing the rule's first output (null when none).
const onnx::NodeProto* RootNode(const Rule& rule) {
  for (const onnx::NodeProto& node : rule.pattern.node()) {
    for (const std::string& output : node.output()) {
      if (output == rule.pattern.output(0)) return &node;
    }
  }
  return nullptr;
}

// The nodes `match` takes, for a matched entry.
std::string MatchedText(const GraphIndex& graph, const RuleMatch& match) {
  std::vector<NodeId> ids(match.nodes.begin(), match.nodes.end());
  std::sort(ids.begin(), ids.end());
  std::vector<std::string> labels;
  for (NodeId id : ids) labels.push_back(NodeLabel(graph, id));
  return absl::StrCat("takes ", absl::StrJoin(labels, ", "));
}

// Why `rule` does not match at `id`: the attempt (operand swap) that got
// furthest.
std::string WhyNot(const Rule& rule, const PassContext& context, const GraphIndex& graph,
                   NodeId id) {
  std::string best;
  int best_progress = -1;
  uint32_t best_swaps = 0;
  for (uint32_t swaps : rules_internal::OperandSwaps(rule)) {
    Explainer explainer(rule, context, graph, swaps);
    std::string why = explainer.Explain(id);
    if (explainer.progress() > best_progress) {
      best = std::move(why);
      best_progress = explainer.progress();
      best_swaps = swaps;
    }
  }
  if (best.empty())
    return "no match (no failing part found: the explainer disagrees with the engine)";
  if (best_swaps != 0) absl::StrAppend(&best, " (with commutative operands swapped)");
  return best;
}

}  // namespace

std::vector<RuleExplanation> ExplainRule(const Rule& rule, const PassContext& context,
                                         const GraphIndex& graph) {
  std::vector<RuleExplanation> out;
  const onnx::NodeProto* root = RootNode(rule);
  if (root == nullptr) return out;
  for (NodeId id : graph.LiveNodes()) {
    const onnx::NodeProto& node = graph.node(id);
    if (node.op_type() != root->op_type() ||
        CanonicalDomain(node.domain()) !=
            CanonicalDomain(root->domain())) {
      continue;
    }
    RuleExplanation entry{rule.name, graph.path(), node.name(), node.op_type(), id, false, ""};
    if (std::optional<RuleMatch> match = MatchRule(rule, context, graph, id)) {
      entry.matched = true;
      entry.reason = MatchedText(graph, *match);
    } else {
      entry.reason = WhyNot(rule, context, graph, id);
    }
    if (!rule.profile.empty() && rule.profile != context.options().profile) {
      absl::StrAppend(&entry.reason, " (the rule applies only under profile ", rule.profile, ")");
    }
    out.push_back(std::move(entry));
  }
  return out;
}

absl::StatusOr<std::vector<Rule>> RulesToExplain(const RewriteOptions& options) {
  if (options.explain.empty()) return std::vector<Rule>{};
  absl::StatusOr<std::vector<Rule>> all = BuiltinRules();
  if (!all.ok()) return all.status();
  for (const RewriteOptions::RuleFile& file : options.rule_files) {
    absl::StatusOr<std::vector<Rule>> parsed = ParseRules(file.text, file.name);
    if (!parsed.ok()) return parsed.status();
    for (Rule& rule : *parsed) all->push_back(std::move(rule));
  }
  std::vector<Rule> rules;
  for (const std::string& name : options.explain) {
    auto found =
        std::find_if(all->begin(), all->end(), [&](const Rule& rule) { return rule.name == name; });
    if (found == all->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no rule '", name, "' to explain among the built-in rules and the rule files"));
    }
    rules.push_back(*found);
  }
  return rules;
}

std::vector<RuleExplanation> ExplainRules(const std::vector<Rule>& rules,
                                          const PassContext& context, const ModelIndex& index) {
  std::vector<RuleExplanation> out;
  for (const Rule& rule : rules) {
    size_t before = out.size();
    for (const GraphIndex* graph : index.Graphs()) {
      for (RuleExplanation& entry : ExplainRule(rule, context, *graph)) {
        out.push_back(std::move(entry));
      }
    }
    if (out.size() == before) {
      const onnx::NodeProto* root = RootNode(rule);
      std::string op = root != nullptr ? root->op_type() : "";
      out.push_back(
          {rule.name, "", "", op, -1, false,
           absl::StrCat("the model has no ", op, " node, where the rule's pattern ends")});
    }
  }
  return out;
}

std::string ExplanationText(const RuleExplanation& e) {
  if (e.index < 0) return absl::StrCat(e.rule, ": ", e.reason);
  std::string node = e.node.empty()
                         ? absl::StrCat("node #", e.index, " (", e.op, ")")
                         : absl::StrCat("node '", e.node, "' (#", e.index, ", ", e.op, ")");
  return absl::StrCat(e.rule, " at ", node, " in ", e.graph, ": ",
                      e.matched ? "matches, " : "no match: ", e.reason);
}

}  // namespace onnxconvert::rewrites
