// The rule engine: rule-file errors name file, line and column; the
// built-in rules match (or not) in ONNX-text models, one case per
// behaviour.

#include "rewrites/rules.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "rewrites/pass_manager.h"

namespace onnxconvert::rewrites {
namespace {

TEST(RulesTest, BuiltinRulesParse) {
  absl::StatusOr<std::vector<Rule>> rules = BuiltinRules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_GE(rules->size(), 10u);
}

TEST(RulesTest, ParsesTheFormat) {
  absl::StatusOr<std::vector<Rule>> rules = ParseRules(R"(# comment
rule mul_one commutative   # trailing comment
  pattern (X, k) => (Y) {
    Y = Mul(X, k)
  }
  replace (X, k) => (X)
  where value(k) == 1
  where broadcast_keeps(X, k) && opset >= 7 && dtype(X) != string
)",
                                                       "t.rules");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 1u);
  const Rule& rule = (*rules)[0];
  EXPECT_EQ(rule.name, "mul_one");
  EXPECT_TRUE(rule.commutative);
  EXPECT_EQ(rule.line, 2);
  EXPECT_EQ(rule.pattern.node_size(), 1);
  EXPECT_EQ(rule.replacement.node_size(), 0);
  EXPECT_EQ(rule.where.size(), 4u);
}

struct BadRule {
  const char* name;
  const char* text;
  const char* error;  // the start of the message
};

const BadRule kBadRules[] = {
    {"pattern_does_not_parse",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X }\n  replace (X) => (X)\n", "t.rules:2:35: "},
    {"pattern_error_on_a_later_line",
     "rule r\n  pattern (X) => (Y) {\n    Y = = Relu(X)\n  }\n  replace (X) => (X)\n",
     "t.rules:3:9: "},
    {"unknown_predicate",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n  replace (X) => (X)\n  where rank(X) == 2 && "
     "shiny(X)\n",
     "t.rules:4:25: unknown predicate 'shiny'"},
    {"signature_differs",
     "rule r\n  pattern (X, k) => (Y) { Y = Mul(X, k) }\n  replace (X) => (X)\n",
     "t.rules:3:11: the replacement's signature"},
    {"unknown_keyword", "rule r\n  patern (X) => (Y) { Y = Relu(X) }\n",
     "t.rules:2:3: expected 'rule', 'pattern', 'replace' or 'where'"},
    {"clause_outside_a_rule", "  pattern (X) => (Y) { Y = Relu(X) }\n",
     "t.rules:1:3: 'pattern' outside a rule"},
    {"missing_replace", "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n",
     "t.rules:1:1: rule 'r' needs a pattern and a replace"},
    {"unbound_attribute",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n  replace (X) => (Y) { Y = Cast<to: int = "
     "@t>(X) }\n",
     "t.rules:3:11: @t is not bound"},
    {"unknown_value_in_where",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n  replace (X) => (X)\n  where rank(Z) == 2\n",
     "t.rules:4:9: 'Z' is not a value"},
    {"missing_comparison",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n  replace (X) => (X)\n  where rank(X)\n",
     "t.rules:4:16: rank must be compared"},
    {"boolean_compared",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n  replace (X) => (X)\n  where is_const(X) == 1\n",
     "t.rules:4:21: is_const takes no comparison"},
    {"pattern_output_not_computed",
     "rule r\n  pattern (X) => (X) { Y = Relu(X) }\n  replace (X) => (X)\n",
     "t.rules:2:11: pattern output 'X' is not computed"},
    {"unclosed_body", "rule r\n  pattern (X) => (Y) {\n  Y = Relu(X)\n", "t.rules:2:11: unclosed '{'"},
    {"duplicate_rule",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n  replace (X) => (X)\nrule r\n  pattern (X) => "
     "(Y) { Y = Relu(X) }\n  replace (X) => (X)\n",
     "t.rules:4:1: a second rule 'r'"},
};

class BadRuleTest : public ::testing::TestWithParam<BadRule> {};

TEST_P(BadRuleTest, ErrorNamesFileLineAndColumn) {
  absl::StatusOr<std::vector<Rule>> rules = ParseRules(GetParam().text, "t.rules");
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().message().substr(0, strlen(GetParam().error)), GetParam().error)
      << rules.status().message();
}

INSTANTIATE_TEST_SUITE_P(Cases, BadRuleTest, ::testing::ValuesIn(kBadRules),
                         [](const auto& info) { return std::string(info.param.name); });

struct MatchCase {
  const char* name;
  const char* model;
  std::vector<std::string> ops;  // the main graph's ops after the rules pass
  const char* report = "";
};

const MatchCase kMatchCases[] = {
    {"identity", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  T = Identity(X)
  Y = Relu(T)
})",
     {"Relu"}, "identity: 1"},
    // The forwarded output is a graph output: the rule does not apply.
    {"identity_graph_output", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  T = Relu(X)
  Y = Identity(T)
})",
     {"Relu", "Identity"}},
    {"cast_same_type", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  T = Cast<to = 1>(X)
  Y = Relu(T)
})",
     {"Relu"}, "cast_to_same_type: 1"},
    // where false: a Cast to another type stays.
    {"cast_other_type", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (double[2] Y) {
  T = Cast<to = 11>(X)
  Y = Relu(T)
})",
     {"Cast", "Relu"}},
    {"mul_by_one", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <float[3] k = {1.0, 1.0, 1.0}> {
  T = Mul(X, k)
  Y = Relu(T)
})",
     {"Relu"}, "mul_by_one: 1"},
    // Commutative: 1 * X matches too.
    {"one_times_x", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <float[1] k = {1.0}> {
  T = Mul(k, X)
  Y = Relu(T)
})",
     {"Relu"}, "mul_by_one: 1"},
    // The constant would broadcast X to a larger shape.
    {"mul_by_one_broadcasts", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[3] X) => (float[2,3] Y) <float[2,3] k = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0}> {
  T = Mul(X, k)
  Y = Relu(T)
})",
     {"Mul", "Relu"}},
    // Sub is not commutative: 0 - X stays.
    {"zero_minus_x", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <float[1] k = {0.0}> {
  T = Sub(k, X)
  Y = Relu(T)
})",
     {"Sub", "Relu"}},
    {"x_plus_zero_stays", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <float[1] k = {0.0}> {
  T = Add(X, k)
  Y = Relu(T)
})",
     {"Add", "Relu"}},
    {"x_plus_negative_zero", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <float[1] k = {-0.0}> {
  T = Add(k, X)
  Y = Relu(T)
})",
     {"Relu"}, "add_negative_zero: 1"},
    {"transpose_pair", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] X) => (float[2,3,4] Y) {
  T = Transpose<perm = [1, 2, 0]>(X)
  U = Transpose<perm = [2, 0, 1]>(T)
  Y = Relu(U)
})",
     {"Relu"}, "transpose_transpose: 1"},
    // The intermediate has another user (one_use fails): nothing changes.
    {"transpose_pair_shared", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] X) => (float[2,3,4] Y, float[3,4,2] Z) {
  T = Transpose<perm = [1, 2, 0]>(X)
  U = Transpose<perm = [2, 0, 1]>(T)
  Y = Relu(U)
  Z = Neg(T)
})",
     {"Transpose", "Transpose", "Relu", "Neg"}},
    {"squeeze_unsqueeze_13", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <int64[1] a = {1}, int64[1] b = {1}> {
  T = Unsqueeze(X, a)
  U = Squeeze(T, b)
  Y = Relu(U)
})",
     {"Relu"}, "squeeze_unsqueeze: 1"},
    {"squeeze_unsqueeze_11", R"(<ir_version: 7, opset_import: ["" : 11]>
g (float[2,3] X) => (float[2,3] Y) {
  T = Unsqueeze<axes = [0]>(X)
  U = Squeeze<axes = [0]>(T)
  Y = Relu(U)
})",
     {"Relu"}, "squeeze_unsqueeze_attributes: 1"},
    {"squeeze_other_axes", R"(<ir_version: 7, opset_import: ["" : 11]>
g (float[2,1] X) => (float[1,2] Y) {
  T = Unsqueeze<axes = [0]>(X)
  U = Squeeze<axes = [2]>(T)
  Y = Relu(U)
})",
     {"Unsqueeze", "Squeeze", "Relu"}},
    {"reshape_chain", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] X) => (float[4,6] Y) <int64[2] s1 = {6, 4}, int64[2] s2 = {4, -1}> {
  T = Reshape(X, s1)
  Y = Reshape(T, s2)
})",
     {"Reshape"}, "reshape_reshape: 1"},
    {"reshape_chain_with_zero", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] X) => (float[6,4] Y) <int64[2] s1 = {6, 4}, int64[2] s2 = {0, -1}> {
  T = Reshape(X, s1)
  Y = Reshape(T, s2)
})",
     {"Reshape", "Reshape"}},
    {"dropout_inference", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) <float r = {0.5}, bool t = {0}> {
  T, mask = Dropout(X, r, t)
  Y = Relu(T)
})",
     {"Relu"}, "dropout_training_false: 1"},
    {"dropout_mask_used", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y, bool[2] M) {
  T, M = Dropout(X)
  Y = Relu(T)
})",
     {"Dropout", "Relu"}},
};

class MatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(MatchTest, RulesPassRewrites) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(GetParam().model);
  ASSERT_TRUE(model.ok()) << model.status();
  RewriteOptions options;
  options.passes = {"rules"};
  absl::StatusOr<RewriteReport> report = Optimize(*model, options);
  ASSERT_TRUE(report.ok()) << report.status();
  std::vector<std::string> ops;
  for (const onnx::NodeProto& node : model->graph().node()) ops.push_back(node.op_type());
  std::string text = report->ToText();
  EXPECT_EQ(ops, GetParam().ops) << text;
  EXPECT_NE(text.find(GetParam().report), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Cases, MatchTest, ::testing::ValuesIn(kMatchCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace onnxconvert::rewrites
