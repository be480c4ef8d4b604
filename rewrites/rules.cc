// The rule engine: patterns matched at a root node through the
// GraphIndex, `where` checked on the facts inference knows (rules_facts.cc),
// replacements applied through ir::GraphIndexRewriter; the rules pass. Rule
// files are read by rule_parser.cc.

#include "rewrites/rules.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "ir/graph_index_rewriter.h"
#include "base/status_macros.h"
#include "rewrites/rules_internal.h"
#include "schema/registry.h"

namespace onnxconvert::rewrites {
namespace {

// ---- Tables ----

// Binary ops whose two operands may be swapped.
const absl::flat_hash_set<std::string>& CommutativeOps() {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Add", "Mul", "Max", "Min", "Sum", "And", "Or", "Xor", "Equal",
      "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  return *ops;
}

// ---- Matching ----

// An attribute's content, name and doc aside.
std::string AttributeContent(onnx::AttributeProto attribute) {
  attribute.clear_name();
  attribute.clear_doc_string();
  return attribute.SerializeAsString();
}

// Whether two attributes hold the same content, names and docs aside
// (without copying them when those are the same already, as they are for
// a pattern's attribute and the node's of its name).
bool SameContent(const onnx::AttributeProto& a, const onnx::AttributeProto& b) {
  if (a.name() == b.name() && a.doc_string() == b.doc_string()) {
    return a.SerializeAsString() == b.SerializeAsString();
  }
  return AttributeContent(a) == AttributeContent(b);
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, absl::string_view name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

// The default the schema of `node`'s op (at the model's opset for its
// domain) gives attribute `name`, named `name`; nullopt when it has none.
// `defined` says whether that op version has the attribute at all.
std::optional<onnx::AttributeProto> SchemaDefault(const PassContext& context,
                                                  const onnx::NodeProto& node,
                                                  absl::string_view name, bool& defined) {
  defined = false;
  absl::string_view domain = CanonicalDomain(node.domain());
  const schema::OpSchema* op =
      schema::Registry::Get().Lookup(domain, node.op_type(), context.OpsetVersion(domain));
  if (op == nullptr) return std::nullopt;
  const schema::AttrSpec* spec = op->FindAttr(name);
  defined = spec != nullptr;
  if (spec == nullptr) return std::nullopt;
  return schema::DefaultAttribute(*spec, name);
}

// The inputs of `node` without the trailing omitted ones.
int TrimmedInputCount(const onnx::NodeProto& node) {
  int n = node.input_size();
  while (n > 0 && node.input(n - 1).empty()) --n;
  return n;
}

// The swap masks to try: bit i set swaps the operands of pattern node i,
// for the commutative binary nodes of a commutative rule.
std::vector<uint32_t> SwapMasks(const Rule& rule) {
  std::vector<uint32_t> masks = {0};
  if (!rule.commutative) return masks;
  for (int i = 0; i < rule.pattern.node_size() && i < 8; ++i) {
    const onnx::NodeProto& node = rule.pattern.node(i);
    if (TrimmedInputCount(node) != 2 || !CommutativeOps().contains(node.op_type())) continue;
    for (size_t m = 0, n = masks.size(); m < n; ++m) masks.push_back(masks[m] | (1u << i));
  }
  return masks;
}

// The pattern outputs the replacement forwards from an input: output
// position -> pattern input position.
std::vector<std::pair<int, int>> Forwarded(const Rule& rule) {
  std::vector<std::pair<int, int>> forwarded;
  const onnx::FunctionProto& r = rule.replacement;
  for (int o = 0; o < r.output_size(); ++o) {
    for (int i = 0; i < r.input_size(); ++i) {
      if (r.output(o) == r.input(i)) {
        forwarded.push_back({o, i});
        break;
      }
    }
  }
  return forwarded;
}

// The pattern inputs a `value(k)` predicate of `rule`'s `where` reads:
// unless such an input is a constant its predicate, and so the rule,
// cannot hold.
absl::flat_hash_set<std::string> ValueInputs(const Rule& rule) {
  absl::flat_hash_set<std::string> names;
  for (const Predicate& predicate : rule.where) {
    if (predicate.function == "value" && !predicate.args.empty() &&
        predicate.args[0].kind == Term::Kind::kValue) {
      names.insert(predicate.args[0].name);
    }
  }
  return names;
}

// What matching `rule` needs of its pattern, worked out once.
struct CompiledRule {
  explicit CompiledRule(const Rule& r)
      : rule(&r), swaps(SwapMasks(r)), forwarded(Forwarded(r)),
        reach(std::max(1, r.pattern.node_size())) {
    const onnx::FunctionProto& p = r.pattern;
    const absl::flat_hash_set<std::string> value_inputs = ValueInputs(r);
    for (int i = 0; i < p.node_size(); ++i) {
      for (int s = 0; s < p.node(i).output_size(); ++s) producer[p.node(i).output(s)] = {i, s};
    }
    inputs.insert(p.input().begin(), p.input().end());
    outputs.insert(p.output().begin(), p.output().end());
    auto root = producer.find(p.output_size() > 0 ? p.output(0) : "");
    if (root != producer.end()) root_node = root->second.first;
    for (const onnx::NodeProto& node : p.node()) {
      input_counts.push_back(TrimmedInputCount(node));
      std::vector<InputRole>& roles = input_roles.emplace_back();
      for (const std::string& input : node.input()) {
        InputRole& role = roles.emplace_back();
        role.pattern_input = inputs.contains(input);
        role.constant = role.pattern_input && value_inputs.contains(input);
        if (auto found = producer.find(input); found != producer.end()) {
          std::tie(role.node, role.slot) = found->second;
        }
      }
    }
  }

  // What input i of a pattern node reads: a pattern input, or output
  // `slot` of pattern node `node` (-1: neither, an empty name).
  // `constant`: a pattern input `value(...)` reads.
  struct InputRole {
    bool pattern_input = false;
    bool constant = false;
    int node = -1;
    int slot = -1;
  };

  const Rule* rule;
  std::vector<uint32_t> swaps;
  std::vector<std::pair<int, int>> forwarded;
  int reach;  // how many nodes up from its root the pattern reaches
  // Pattern value -> (pattern node, output slot) computing it.
  absl::flat_hash_map<std::string, std::pair<int, int>> producer;
  absl::flat_hash_set<std::string> inputs;
  absl::flat_hash_set<std::string> outputs;
  int root_node = -1;               // the pattern node computing output 0
  std::vector<int> input_counts;    // per pattern node, trailing omitted ones aside
  std::vector<std::vector<InputRole>> input_roles;  // per pattern node and input
};

class Matcher {
 public:
  // Matches with the commutative pattern nodes whose bit is set in `swaps`
  // taking their operands swapped.
  Matcher(const CompiledRule& compiled, const PassContext& context, const GraphIndex& graph,
          uint32_t swaps)
      : compiled_(compiled), rule_(*compiled.rule), context_(context), graph_(graph),
        swaps_(swaps) {}

  // Whether the pattern matches at `root`, into `match` (cleared first;
  // partly filled when it does not match).
  bool Match(NodeId root, RuleMatch& match) {
    if (compiled_.root_node < 0) return false;
    origins_.clear();
    match.nodes.assign(rule_.pattern.node_size(), kNoNode);
    match.values.clear();
    match.attributes.clear();
    match.input_sites.clear();
    return MatchNode(compiled_.root_node, root, match) && CheckUses(match);
  }

 private:
  // Binds pattern node `pi` to graph node `id`; a failure anywhere fails
  // the whole match (nothing is tried instead), so `match` needs no undo.
  bool MatchNode(int pi, NodeId id, RuleMatch& match) {
    if (match.nodes[pi] != kNoNode) return match.nodes[pi] == id;
    for (NodeId other : match.nodes) {
      if (other == id) return false;
    }
    const onnx::NodeProto& p = rule_.pattern.node(pi);
    const onnx::NodeProto& g = graph_.node(id);
    if (p.op_type() != g.op_type() || CanonicalDomain(p.domain()) !=
                                          CanonicalDomain(g.domain())) {
      return false;
    }
    const int inputs = compiled_.input_counts[pi];
    if (inputs != TrimmedInputCount(g)) return false;
    match.nodes[pi] = id;
    if (!BindOutputs(p, id, g, match) || !BindAttributes(p, g, match)) return false;
    const bool swapped = ((swaps_ >> pi) & 1) != 0;
    for (int i = 0; i < inputs; ++i) {
      const int slot = swapped && i < 2 ? 1 - i : i;
      if (!MatchValue(pi, i, id, slot, match)) return false;
    }
    return true;
  }

  bool BindOutputs(const onnx::NodeProto& p, NodeId id, const onnx::NodeProto& g,
                   RuleMatch& match) {
    for (int s = 0; s < g.output_size(); ++s) {
      const std::string& value = g.output(s);
      if (s >= p.output_size() || p.output(s).empty()) {
        if (!value.empty() && !graph_.OutputConsumers(id, s).empty()) return false;
        continue;
      }
      if (value.empty() || !Bind(p.output(s), value, match)) return false;
      origins_.push_back({&p.output(s), id, s, /*output=*/true});
    }
    return p.output_size() <= g.output_size();
  }

  // Binds the pattern's attributes; one the graph node leaves unset takes
  // the schema's default. A literal the node's op version does not define
  // matches when unset.
  bool BindAttributes(const onnx::NodeProto& p, const onnx::NodeProto& g, RuleMatch& match) const {
    for (const onnx::AttributeProto& attribute : p.attribute()) {
      const onnx::AttributeProto* found = FindAttribute(g, attribute.name());
      std::optional<onnx::AttributeProto> by_default;
      if (found == nullptr) {
        bool defined = false;
        by_default = SchemaDefault(context_, g, attribute.name(), defined);
        if (!defined && attribute.ref_attr_name().empty()) continue;
        if (!by_default) return false;
        found = &*by_default;
      }
      if (attribute.ref_attr_name().empty()) {
        if (!SameContent(attribute, *found)) return false;
        continue;
      }
      auto [it, inserted] = match.attributes.emplace(attribute.ref_attr_name(), *found);
      if (!inserted && !SameContent(it->second, *found)) return false;
    }
    return true;
  }

  static bool Bind(const std::string& pattern, const std::string& value, RuleMatch& match) {
    auto [it, inserted] = match.values.emplace(pattern, value);
    return inserted || it->second == value;
  }

  // Matches input `i` of pattern node `pi` to input `slot` of graph node
  // `id`.
  bool MatchValue(int pi, int i, NodeId id, int slot, RuleMatch& match) {
    const std::string& pattern = rule_.pattern.node(pi).input(i);
    const CompiledRule::InputRole& role = compiled_.input_roles[pi][i];
    const std::string& value = graph_.node(id).input(slot);
    if (pattern.empty() || value.empty()) return pattern.empty() && value.empty();
    if (role.pattern_input) {
      origins_.push_back({&pattern, id, slot, /*output=*/false});
      auto [it, inserted] = match.values.emplace(pattern, value);
      if (!inserted) return it->second == value;
      match.input_sites.push_back({&pattern, id, slot});
      return !role.constant || MayBeConstant(id, slot, value);
    }
    auto found = match.values.find(pattern);
    if (found != match.values.end()) return found->second == value;
    if (role.node < 0) throw std::out_of_range(pattern);  // as producer.at() did
    ValueSource source = graph_.InputProducer(id, slot);
    if (source.kind != ValueSource::Kind::kNodeOutput || source.slot != role.slot) return false;
    return MatchNode(role.node, source.index, match);
  }

  // Whether input `slot` of graph node `id`, `value`, may be a constant
  // as `value(...)` sees it (ConstantNumbers in rules_facts.cc): a node's
  // output only when inference knows it as one. Rejects before the rest of
  // the pattern is bound what `where` would reject.
  bool MayBeConstant(NodeId id, int slot, absl::string_view value) const {
    if (graph_.InputProducer(id, slot).kind != ValueSource::Kind::kNodeOutput) return true;
    const schema::GraphTypes* types = context_.GraphTypesOf(graph_);
    return types != nullptr && types->facts.contains(value);
  }

  // Intermediates used only inside the match; pattern inputs not computed
  // by matched nodes.
  bool CheckUses(const RuleMatch& match) const {
    auto matched = [&](NodeId id) { return absl::c_linear_search(match.nodes, id); };
    for (const Origin& origin : origins_) {
      if (!origin.output) {
        ValueSource source = graph_.InputProducer(origin.node, origin.slot);
        if (source.kind == ValueSource::Kind::kNodeOutput && matched(source.index)) return false;
        continue;
      }
      if (compiled_.outputs.contains(*origin.pattern)) continue;
      for (const ValueUse& use : graph_.OutputConsumers(origin.node, origin.slot)) {
        if (!use.is_input() || !matched(use.node)) return false;
      }
    }
    return true;
  }

  // Where a pattern value was bound: a pattern input to a graph node's
  // input slot, or a pattern node's output to the graph node's output.
  struct Origin {
    const std::string* pattern;
    NodeId node;
    int slot;
    bool output;
  };

  const CompiledRule& compiled_;
  const Rule& rule_;
  const PassContext& context_;
  const GraphIndex& graph_;
  const uint32_t swaps_;
  absl::InlinedVector<Origin, 8> origins_;
};

// ---- Matching with commutative operands, and `where` ----

// The nodes `match` took, in graph order, in ONNX text.
std::string MatchedText(const GraphIndex& graph, const RuleMatch& match) {
  std::vector<NodeId> ids(match.nodes.begin(), match.nodes.end());
  std::sort(ids.begin(), ids.end());
  std::vector<const onnx::NodeProto*> nodes;
  for (NodeId id : ids) nodes.push_back(&graph.node(id));
  return NodesText(nodes);
}

// The match of `compiled`'s rule at `root` with operands swapped as
// `swaps` says.
// (Into `match`, a scratch the caller reuses.)
bool MatchWith(const CompiledRule& compiled, const PassContext& context, const GraphIndex& graph,
               NodeId root, uint32_t swaps, RuleMatch& match) {
  const Rule& rule = *compiled.rule;
  if (!Matcher(compiled, context, graph, swaps).Match(root, match)) return false;
  for (auto [output, input] : compiled.forwarded) {
    auto [pi, slot] = compiled.producer.at(rule.pattern.output(output));
    if (graph.IsGraphOutputOf(match.nodes[pi], slot)) return false;
  }
  return rules_internal::WhereHolds(rule, context, graph, match);
}

// Whether `compiled`'s rule matches at live node `root`, trying each swap;
// the match in `match` when it does (a scratch the caller reuses).
bool MatchCompiled(const CompiledRule& compiled, const PassContext& context,
                   const GraphIndex& graph, NodeId root, RuleMatch& match) {
  if (!graph.IsLive(root)) return false;
  for (uint32_t swaps : compiled.swaps) {
    if (MatchWith(compiled, context, graph, root, swaps, match)) return true;
  }
  return false;
}

// Rules compiled for matching, indexed by the op they match at.
struct RuleSet {
  explicit RuleSet(std::vector<Rule> all) : rules(std::move(all)) {
    compiled.reserve(rules.size());
    for (const Rule& rule : rules) {
      const CompiledRule& c = compiled.emplace_back(rule);
      if (c.root_node < 0) continue;
      const onnx::NodeProto& root = rule.pattern.node(c.root_node);
      std::pair<std::string, std::string> key(CanonicalDomain(root.domain()), root.op_type());
      auto it = absl::c_find_if(by_root, [&](const auto& entry) { return entry.first == key; });
      if (it == by_root.end()) it = by_root.insert(by_root.end(), {std::move(key), {}});
      it->second.push_back(&c);
    }
  }
  RuleSet(const RuleSet&) = delete;
  RuleSet& operator=(const RuleSet&) = delete;

  std::vector<Rule> rules;
  std::vector<CompiledRule> compiled;  // one per rule, pointing into rules
  // The rules by the (domain, op_type) they can match at, each list in
  // file order.
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<const CompiledRule*>>>
      by_root;
};

// `rules` compiled, or why they could not be read.
absl::StatusOr<std::shared_ptr<const RuleSet>> Compile(absl::StatusOr<std::vector<Rule>> rules) {
  if (!rules.ok()) return rules.status();
  return std::make_shared<const RuleSet>(*std::move(rules));
}

// The built-in rules, read and compiled once per process.
const absl::StatusOr<std::shared_ptr<const RuleSet>>& BuiltinRuleSet() {
  static const auto* set =
      new absl::StatusOr<std::shared_ptr<const RuleSet>>(Compile(BuiltinRules()));
  return *set;
}

class RulesPass : public Pass {
 public:
  RulesPass(std::string name, absl::StatusOr<std::shared_ptr<const RuleSet>> set)
      : name_(std::move(name)), loaded_(set.status()) {
    if (set.ok()) set_ = *std::move(set);
  }

  absl::string_view name() const override { return name_; }
  // A match takes nodes up to a pattern's size upstream of where it matches.
  int Reach(const RewriteOptions& options) const override {
    int reach = 1;
    if (set_ == nullptr) return 1;
    for (const Rule& rule : set_->rules) {
      if (!rule.profile.empty() && rule.profile != options.profile) continue;
      reach = std::max(reach, rule.pattern.node_size());
    }
    return reach;
  }

  absl::StatusOr<bool> Run(const PassContext& context, GraphIndex& graph,
                           PassStats& stats) override {
    if (!loaded_.ok()) return loaded_;
    bool changed = false;
    // The rules to try at each node, found through the index: nodes of an
    // op no rule (of this profile) roots at are passed over unread.
    std::vector<std::vector<const CompiledRule*>> lists(set_->by_root.size());
    std::vector<const std::vector<const CompiledRule*>*> candidates(graph.node_count(), nullptr);
    for (size_t k = 0; k < set_->by_root.size(); ++k) {
      const auto& [key, rules] = set_->by_root[k];
      for (const CompiledRule* compiled : rules) {
        const std::string& profile = compiled->rule->profile;
        if (profile.empty() || profile == context.options().profile) lists[k].push_back(compiled);
      }
      if (lists[k].empty()) continue;
      for (NodeId id : graph.NodesOf(key.first, key.second)) candidates[id] = &lists[k];
    }
    RuleMatch scratch;  // each attempt's, reused
    for (NodeId id : graph.LiveNodes()) {
      // Not rooted at, or removed by a match.
      if (candidates[id] == nullptr || !graph.IsLive(id) || !context.focus().Visit(id)) continue;
      for (const CompiledRule* compiled : *candidates[id]) {
        // Nothing within the rule's reach changed since it last failed here.
        if (!context.focus().Within(id, compiled->reach)) continue;
        const Rule& rule = *compiled->rule;
        if (!MatchCompiled(*compiled, context, graph, id, scratch)) continue;
        const RuleMatch* match = &scratch;
        // The record's text is written only while records are kept.
        std::optional<RewriteRecord> record;
        if (stats.WantsRecord(context.options())) {
          record = RewriteRecord{graph.path(), rule.name, MatchedText(graph, *match), ""};
        }
        OC_RETURN_IF_ERROR(
            ApplyRule(rule, *match, graph, stats, record ? &record->after : nullptr));
        if (record) stats.Record(context.options(), *std::move(record));
        ++stats.matches;
        ++stats.rule_matches[rule.name];
        changed = true;
        break;
      }
    }
    return changed;
  }

 private:
  std::string name_;
  absl::Status loaded_;  // why the rules could not be read
  std::shared_ptr<const RuleSet> set_;  // null when they could not
};

// A replacement node named as a pattern node of the same op takes the
// attributes of the graph node matched there that it does not set itself.
void CopyUnsetAttributes(const Rule& rule, const RuleMatch& match, const GraphIndex& graph,
                         onnx::NodeProto& node) {
  if (node.name().empty()) return;
  for (int i = 0; i < rule.pattern.node_size(); ++i) {
    const onnx::NodeProto& p = rule.pattern.node(i);
    if (p.name() != node.name() || p.op_type() != node.op_type()) continue;
    for (const onnx::AttributeProto& attribute : graph.node(match.nodes[i]).attribute()) {
      if (FindAttribute(node, attribute.name()) == nullptr) *node.add_attribute() = attribute;
    }
    return;
  }
}

}  // namespace

std::optional<RuleMatch> MatchRule(const Rule& rule, const PassContext& context,
                                   const GraphIndex& graph, NodeId root) {
  RuleMatch match;
  if (!MatchCompiled(CompiledRule(rule), context, graph, root, match)) return std::nullopt;
  return match;
}

absl::Status ApplyRule(const Rule& rule, const RuleMatch& match, GraphIndex& graph,
                       PassStats& stats, std::string* added_text) {
  const onnx::FunctionProto& p = rule.pattern;
  const onnx::FunctionProto& r = rule.replacement;
  // Replacement names -> graph names.
  absl::flat_hash_map<std::string, std::string> names;
  for (int i = 0; i < r.input_size(); ++i) {
    names[r.input(i)] = std::string(match.values.at(p.input(i)));
  }
  std::vector<std::pair<std::string, std::string>> renames;  // forwarded: from, to
  for (int o = 0; o < r.output_size(); ++o) {
    const std::string graph_output(match.values.at(p.output(o)));
    if (names.contains(r.output(o))) {
      renames.push_back({graph_output, names[r.output(o)]});
    } else {
      names[r.output(o)] = graph_output;
    }
  }
  std::vector<onnx::NodeProto> added;
  for (const onnx::NodeProto& node : r.node()) {
    onnx::NodeProto out = node;
    CopyUnsetAttributes(rule, match, graph, out);
    out.set_name(graph.FreshName(rule.name));
    for (int i = 0; i < out.input_size(); ++i) {
      if (!out.input(i).empty()) out.set_input(i, names.at(out.input(i)));
    }
    for (int i = 0; i < out.output_size(); ++i) {
      if (out.output(i).empty()) continue;
      auto [it, inserted] = names.emplace(out.output(i), "");
      if (inserted) it->second = graph.FreshName(out.output(i));
      out.set_output(i, it->second);
    }
    for (onnx::AttributeProto& attribute : *out.mutable_attribute()) {
      if (attribute.ref_attr_name().empty()) continue;
      std::string name = attribute.name();
      attribute = match.attributes.at(attribute.ref_attr_name());
      attribute.set_name(name);
    }
    added.push_back(std::move(out));
  }
  auto [root_index, root_slot] = std::pair<int, int>{-1, -1};
  for (int i = 0; i < p.node_size(); ++i) {
    for (const std::string& output : p.node(i).output()) {
      if (output == p.output(0)) root_index = i;
    }
  }
  if (added_text != nullptr) {
    std::vector<const onnx::NodeProto*> nodes;
    for (const onnx::NodeProto& node : added) nodes.push_back(&node);
    *added_text = NodesText(nodes);
  }
  // The root's place goes to the replacement's nodes (none when it only
  // forwards inputs); the other matched nodes go.
  const NodeId root = match.nodes[root_index];
  ir::GraphIndexRewriter rewrite(graph, root);
  ir::Rewriter& rewriter = rewrite.rewriter();
  for (NodeId id : match.nodes) {
    if (id != root) rewrite.EraseNode(id);
  }
  for (onnx::NodeProto& node : added) rewriter.InsertBefore(std::move(node));
  rewriter.RemoveAnchor();
  for (const auto& [from, to] : renames) rewriter.ReplaceAllUses(from, to);
  OC_RETURN_IF_ERROR(rewrite.Finish());
  stats.nodes_removed += static_cast<int64_t>(match.nodes.size());
  stats.nodes_added += r.node_size();
  return absl::OkStatus();
}

std::unique_ptr<Pass> MakeRulesPass(std::string name, std::vector<Rule> rules) {
  return std::make_unique<RulesPass>(std::move(name), Compile(std::move(rules)));
}

std::unique_ptr<Pass> MakeRules() {
  // A built-in rule file that does not parse (rules_test catches it) fails
  // the pass when it runs.
  return std::make_unique<RulesPass>("rules", BuiltinRuleSet());
}

// ---- For ExplainRule (rules_explain.cc) ----

namespace rules_internal {

std::vector<uint32_t> OperandSwaps(const Rule& rule) { return SwapMasks(rule); }

std::optional<onnx::AttributeProto> AttributeDefault(const PassContext& context,
                                                     const onnx::NodeProto& node,
                                                     absl::string_view name, bool& defined) {
  return SchemaDefault(context, node, name, defined);
}

}  // namespace rules_internal

}  // namespace onnxconvert::rewrites
