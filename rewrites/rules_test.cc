// The rule engine: rule-file errors name file, line and column; the
// built-in rules match (or not) in ONNX-text models, one case per
// behaviour.

#include "rewrites/rules.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

TEST(RulesTest, FileProfileAppliesToEveryRule) {
  absl::StatusOr<std::vector<Rule>> rules = ParseRules(R"(profile deploy
rule a
  pattern (X) => (Y) { Y = Identity(X) }
  replace (X) => (X)
rule b
  pattern (X) => (Y) { Y = Neg(X) }
  replace (X) => (X)
)",
                                                       "t.rules");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 2u);
  EXPECT_EQ((*rules)[0].profile, "deploy");
  EXPECT_EQ((*rules)[1].profile, "deploy");
  absl::StatusOr<std::vector<Rule>> plain =
      ParseRules("rule a\n  pattern (X) => (Y) { Y = Identity(X) }\n  replace (X) => (X)\n", "t");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)[0].profile, "");
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
     "t.rules:2:3: expected 'profile', 'rule', 'pattern', 'replace' or 'where'"},
    {"unknown_profile", "profile fast\n", "t.rules:1:1: expected 'profile exact' or 'profile deploy'"},
    {"profile_after_a_rule",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n  replace (X) => (X)\nprofile deploy\n",
     "t.rules:4:1: 'profile' must come before the first rule"},
    {"named_replacement_node_without_pattern_node",
     "rule r\n  pattern (X) => (Y) { [a] Y = Relu(X) }\n  replace (X) => (Y) { [a] Y = Neg(X) }\n",
     "t.rules:3:11: replacement node [a] names no pattern Neg node"},
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
    {"binding_the_replacement_does_not_use",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n  replace (X) => (X)\n  where rank(X) == @r\n",
     "t.rules:4:9: @r is not bound"},
    {"value_or_attribute_argument",
     "rule r\n  pattern (X) => (Y) { Y = Relu(X) }\n  replace (X) => (X)\n"
     "  where trailing_axes(X, 1) == -1\n",
     "t.rules:4:26: argument 2 of trailing_axes must be a value or an @attribute"},
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
  // Set: the whole profile runs (rules, then folding, ...); unset: the
  // rules pass alone in the exact profile.
  const char* profile = nullptr;
};

// A Conv (weights W, bias B) and an inference BatchNormalization after it,
// at `opset`, with `conv` and `bn` the text of the two nodes.
std::string ConvBatchNorm(int opset, const std::string& conv, const std::string& bn,
                          const std::string& extra_outputs = "") {
  return absl::StrCat(R"(<ir_version: 8, opset_import: ["" : )", opset, R"(]>
g (float[1,2,3,3] X)" , ") => (float[1,2,3,3] Y", extra_outputs, R"()
  <float[2,2,1,1] W = {0.5, -1.0, 0.25, 2.0}, float[2] B = {0.1, -0.2},
   float[2] s = {1.5, 0.5}, float[2] b = {0.25, -1.0}, float[2] m = {0.3, -0.7},
   float[2] v = {0.8, 2.5}> {
  )", conv, "\n  ", bn, R"(
  Y = Relu(D)
})");
}

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
    {"expand_to_same_shape", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <int64[2] s = {1, 3}> {
  T = Expand(X, s)
  Y = Relu(T)
})",
     {"Relu"}, "expand_to_same_shape: 1"},
    // The Expand broadcasts X from [1,3] to [2,3]: it stays.
    {"expand_broadcasts", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3] X) => (float[2,3] Y) <int64[2] s = {2, 3}> {
  T = Expand(X, s)
  Y = Relu(T)
})",
     {"Expand", "Relu"}},
    {"flatten_2d", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3] X) => (float[N,3] Y) {
  T = Flatten(X)
  Y = Relu(T)
})",
     {"Relu"}, "flatten_to_same_shape: 1"},
    {"flatten_3d", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] X) => (float[2,12] Y) {
  T = Flatten(X)
  Y = Relu(T)
})",
     {"Flatten", "Relu"}},
    {"tile_once", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <int64[2] r = {1, 1}> {
  T = Tile(X, r)
  Y = Relu(T)
})",
     {"Relu"}, "tile_once: 1"},
    {"tile_twice", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,6] Y) <int64[2] r = {1, 2}> {
  T = Tile(X, r)
  Y = Relu(T)
})",
     {"Tile", "Relu"}},
    {"pad_nothing_reflect", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <int64[4] p = {0, 0, 0, 0}> {
  T = Pad<mode = "reflect">(X, p)
  Y = Relu(T)
})",
     {"Relu"}, "pad_nothing: 1"},
    {"pad_nothing_attribute", R"(<ir_version: 7, opset_import: ["" : 10]>
g (float[2,3] X) => (float[2,3] Y) {
  T = Pad<pads = [0, 0, 0, 0], value = 1.0>(X)
  Y = Relu(T)
})",
     {"Relu"}, "pad_nothing_attribute: 1"},
    {"pad_nothing_on_axes", R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3] X) => (float[2,3] Y) <int64[2] p = {0, 0}, int64[1] a = {-1}> {
  T = Pad(X, p, "", a)
  Y = Relu(T)
})",
     {"Relu"}, "pad_nothing_on_axes: 1"},
    {"pad_something", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,4] Y) <int64[4] p = {0, 0, 0, 1}, float v = {0.0}> {
  T = Pad(X, p, v)
  Y = Relu(T)
})",
     {"Pad", "Relu"}},
    {"slice_everything", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y)
  <int64[1] s = {0}, int64[1] e = {1000}, int64[1] a = {1}, int64[1] t = {1}> {
  T = Slice(X, s, e, a, t)
  Y = Relu(T)
})",
     {"Relu"}, "slice_everything_steps: 1"},
    // A step of -1 keeps the shape but reverses: the Slice stays.
    {"slice_reversed", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y)
  <int64[1] s = {-1}, int64[1] e = {-1000}, int64[1] a = {1}, int64[1] t = {-1}> {
  T = Slice(X, s, e, a, t)
  Y = Relu(T)
})",
     {"Slice", "Relu"}},
    {"slice_part", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,2] Y) <int64[1] s = {1}, int64[1] e = {3}, int64[1] a = {1}> {
  T = Slice(X, s, e, a)
  Y = Relu(T)
})",
     {"Slice", "Relu"}},
    {"split_into_one", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <int64[1] n = {3}> {
  T = Split<axis = 1>(X, n)
  Y = Relu(T)
})",
     {"Relu"}, "split_into_one_sized: 1"},
    // A second output, unused: the first is half of X.
    {"split_into_two", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[1,3] Y) {
  T, U = Split(X)
  Y = Relu(T)
})",
     {"Split", "Relu"}},
    {"concat_one", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) {
  T = Concat<axis = 0>(X)
  Y = Relu(T)
})",
     {"Relu"}, "concat_one: 1"},
    {"sum_one", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) {
  T = Sum(X)
  Y = Relu(T)
})",
     {"Relu"}, "sum_one: 1"},
    // Slices of axes 0 and 1 merge (the whole profile folds the lists).
    {"slice_slice", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4,6] X) => (float[2,2] Y)
  <int64[1] s1 = {1}, int64[1] e1 = {3}, int64[1] a1 = {0}, int64[1] t1 = {1},
   int64[1] s2 = {-1}, int64[1] e2 = {-1000}, int64[1] a2 = {-1}, int64[1] t2 = {-3}> {
  T = Slice(X, s1, e1, a1, t1)
  U = Slice(T, s2, e2, a2, t2)
  Y = Relu(U)
})",
     {"Slice", "Relu"}, "slice_slice: 1", "exact"},
    {"slice_slice_same_axis", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4,6] X) => (float[1,6] Y)
  <int64[1] s1 = {1}, int64[1] e1 = {3}, int64[1] a1 = {0}, int64[1] s2 = {1}, int64[1] e2 = {2},
   int64[1] a2 = {-2}> {
  T = Slice(X, s1, e1, a1)
  U = Slice(T, s2, e2, a2)
  Y = Relu(U)
})",
     {"Slice", "Slice", "Relu"}, "", "exact"},
    // The Cast folds into the constant; the shape is computed at run time.
    {"cast_constant_of_shape", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3] X) => (float[N,3] Y) {
  s = Shape(X)
  T = ConstantOfShape<value = int64[1] {7}>(s)
  U = Cast<to = 1>(T)
  Y = Add(X, U)
})",
     {"Shape", "Expand", "Add"}, "cast_constant_of_shape: 1", "exact"},
    // A scalar: Expand would give [1].
    {"cast_constant_of_shape_scalar", R"(<ir_version: 8, opset_import: ["" : 13]>
g (int64[0] s) => (float Y) {
  T = ConstantOfShape<value = int64[1] {7}>(s)
  U = Cast<to = 1>(T)
  Y = Neg(U)
})",
     {"ConstantOfShape", "Cast", "Neg"}},
};

// The deploy fusions (rules/deploy_fusions.rules): where each applies, and
// where it must not.
const std::string kConvBn = ConvBatchNorm(13, "C = Conv(X, W, B)",
                                          "D = BatchNormalization(C, s, b, m, v)");
const std::string kConvNoBiasBn = ConvBatchNorm(15, "C = Conv<pads = [0, 0, 0, 0]>(X, W)",
                                                "D = BatchNormalization<epsilon = 0.001>(C, s, b, m, v)");
const std::string kConvInputWeightsBn = absl::StrCat(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,3] X, float[2,2,1,1] W) => (float[1,2,3,3] Y)
  <float[2] s = {1.5, 0.5}, float[2] b = {0.25, -1.0}, float[2] m = {0.3, -0.7},
   float[2] v = {0.8, 2.5}> {
  C = Conv(X, W)
  D = BatchNormalization(C, s, b, m, v)
  Y = Relu(D)
})");
const std::string kConvBnTraining = ConvBatchNorm(
    15, "C = Conv(X, W, B)", "D = BatchNormalization<training_mode = 1>(C, s, b, m, v)");
const std::string kConvBnMeanUsed =
    ConvBatchNorm(13, "C = Conv(X, W, B)", "D, M = BatchNormalization(C, s, b, m, v)",
                  ", float[2] M");

const MatchCase kDeployCases[] = {
    {"conv_batch_norm", kConvBn.c_str(), {"Conv", "Relu"}, "conv_batch_norm: 1", "deploy"},
    {"conv_no_bias_batch_norm", kConvNoBiasBn.c_str(), {"Conv", "Relu"},
     "conv_no_bias_batch_norm: 1", "deploy"},
    {"conv_batch_norm_exact_profile", kConvBn.c_str(), {"Conv", "BatchNormalization", "Relu"}, "",
     "exact"},
    {"conv_batch_norm_weights_not_constant", kConvInputWeightsBn.c_str(),
     {"Conv", "BatchNormalization", "Relu"}, "", "deploy"},
    {"conv_batch_norm_training", kConvBnTraining.c_str(), {"Conv", "BatchNormalization", "Relu"},
     "", "deploy"},
    {"conv_batch_norm_mean_output_used", kConvBnMeanUsed.c_str(),
     {"Conv", "BatchNormalization", "Relu"}, "", "deploy"},
    {"conv_transpose_batch_norm", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,3] X) => (float[1,3,3,3] Y)
  <float[2,3,1,1] W = {0.5, -1.0, 0.25, 2.0, 1.5, -0.5},
   float[3] s = {1.5, 0.5, -1.0}, float[3] b = {0.25, -1.0, 0.5}, float[3] m = {0.3, -0.7, 0.1},
   float[3] v = {0.8, 2.5, 1.2}> {
  C = ConvTranspose(X, W)
  D = BatchNormalization(C, s, b, m, v)
  Y = Relu(D)
})",
     {"ConvTranspose", "Relu"}, "conv_transpose_no_bias_batch_norm: 1", "deploy"},
    // group 2: the output channels are not W's axis 1 alone.
    {"conv_transpose_group_2_batch_norm", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,3] X) => (float[1,2,3,3] Y)
  <float[2,1,1,1] W = {0.5, -1.0}, float[2] s = {1.5, 0.5}, float[2] b = {0.25, -1.0},
   float[2] m = {0.3, -0.7}, float[2] v = {0.8, 2.5}> {
  C = ConvTranspose<group = 2>(X, W)
  D = BatchNormalization(C, s, b, m, v)
  Y = Relu(D)
})",
     {"ConvTranspose", "BatchNormalization", "Relu"}, "", "deploy"},
    {"conv_mul_per_channel", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,3] X) => (float[1,2,3,3] Y)
  <float[2,2,1,1] W = {0.5, -1.0, 0.25, 2.0}, float[2,1,1] k = {1.5, -2.0}> {
  C = Conv(X, W)
  D = Mul(k, C)
  Y = Relu(D)
})",
     {"Conv", "Relu"}, "conv_no_bias_mul_channel: 1", "deploy"},
    {"conv_add_per_channel", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,3] X) => (float[1,2,3,3] Y)
  <float[2,2,1,1] W = {0.5, -1.0, 0.25, 2.0}, float[2] B = {0.1, -0.2},
   float[1,2,1,1] k = {1.5, -2.0}> {
  C = Conv(X, W, B)
  D = Add(C, k)
  Y = Relu(D)
})",
     {"Conv", "Relu"}, "conv_add_channel: 1", "deploy"},
    // k varies along the last axis, not the channels.
    {"conv_mul_last_axis", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,3] X) => (float[1,2,3,3] Y)
  <float[2,2,1,1] W = {0.5, -1.0, 0.25, 2.0}, float[3] k = {1.5, -2.0, 3.0}> {
  C = Conv(X, W)
  D = Mul(C, k)
  Y = Relu(D)
})",
     {"Conv", "Mul", "Relu"}, "", "deploy"},
    // Conv + BatchNormalization + Mul: both fold, one after the other.
    {"conv_batch_norm_then_mul", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3,3] X) => (float[1,2,3,3] Y)
  <float[2,2,1,1] W = {0.5, -1.0, 0.25, 2.0}, float[2] s = {1.5, 0.5}, float[2] b = {0.25, -1.0},
   float[2] m = {0.3, -0.7}, float[2] v = {0.8, 2.5}, float[2,1,1] k = {1.5, -2.0}> {
  C = Conv(X, W)
  D = BatchNormalization(C, s, b, m, v)
  E = Mul(D, k)
  Y = Relu(E)
})",
     {"Conv", "Relu"}, "conv_mul_channel: 1", "deploy"},
    {"matmul_add_2d", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] A, float[3,4] B) => (float[2,4] Y) <float[4] c = {1.0, 2.0, 3.0, 4.0}> {
  T = MatMul(A, B)
  U = Add(c, T)
  Y = Relu(U)
})",
     {"Gemm", "Relu"}, "matmul_add_to_gemm: 1", "deploy"},
    {"matmul_add_3d", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[5,2,3] A, float[3,4] B) => (float[5,2,4] Y) <float[4] c = {1.0, 2.0, 3.0, 4.0}> {
  T = MatMul(A, B)
  U = Add(T, c)
  Y = Relu(U)
})",
     {"MatMul", "Add", "Relu"}, "", "deploy"},
    // The addend would grow the product: [2,1] x [1,4] + [3,2,4].
    {"matmul_add_growing", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,1] A, float[1,4] B, float[3,2,4] c) => (float[3,2,4] Y) {
  T = MatMul(A, B)
  U = Add(T, c)
  Y = Relu(U)
})",
     {"MatMul", "Add", "Relu"}, "", "deploy"},
    {"log_softmax_default_axis", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) {
  S = Softmax(X)
  L = Log(S)
  Y = Relu(L)
})",
     {"LogSoftmax", "Relu"}, "log_softmax: 1", "deploy"},
    {"log_softmax_opset_11", R"(<ir_version: 7, opset_import: ["" : 11]>
g (float[2,3] X) => (float[2,3] Y) {
  S = Softmax<axis = 1>(X)
  L = Log(S)
  Y = Relu(L)
})",
     {"Softmax", "Log", "Relu"}, "", "deploy"},
    {"max_to_clip", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <float[] k = {0.0}> {
  T = Max(k, X)
  Y = Neg(T)
})",
     {"Clip", "Neg"}, "max_to_clip: 1", "deploy"},
    {"min_not_scalar", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] X) => (float[2,3] Y) <float[3] k = {0.0, 1.0, 2.0}> {
  T = Min(X, k)
  Y = Neg(T)
})",
     {"Min", "Neg"}, "", "deploy"},
    {"transpose_into_gemm", R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[3,2] A, float[4,3] B, float[4] c) => (float[2,4] Y) {
  T = Transpose<perm = [1, 0]>(A)
  Y = Gemm<transB = 1, alpha = 2.0>(T, B, c)
})",
     {"Gemm"}, "transpose_into_gemm_a: 1", "deploy"},
};

// A Pad of X [1,2,4,4] (`pads`, then `value` if any) before `consumer`,
// at opset `opset`.
std::string PadBefore(int opset, const std::string& pad, const std::string& consumer) {
  return absl::StrCat(R"(<ir_version: 8, opset_import: ["" : )", opset, R"(]>
g (float[1,2,4,4] X) => (Y)
  <float[2,2,3,3] W = {0.5, -1.0, 0.25, 2.0, 1.5, -0.5, 0.75, 1.0, -2.0, 0.5, -1.0, 0.25, 2.0,
     1.5, -0.5, 0.75, 1.0, -2.0, 0.5, -1.0, 0.25, 2.0, 1.5, -0.5, 0.75, 1.0, -2.0, 0.5, -1.0,
     0.25, 2.0, 1.5, -0.5, 0.75, 1.0, -2.0},
   int64[8] spatial = {0, 0, 1, 1, 0, 0, 1, 1}, int64[8] channel = {0, 1, 1, 1, 0, 0, 1, 1},
   float zero = {0.0}, float one = {1.0}, int64[4] hw_pads = {1, 0, 1, 1},
   int64[2] hw = {2, 3}, int64[2] wh = {-1, -2}, int64[2] ch = {1, 2}> {
  P = )", pad, R"(
  C = )", consumer, R"(
  Y = Relu(C)
})");
}

const std::string kPadConv =
    PadBefore(13, "Pad(X, spatial)", "Conv<pads = [1, 0, 1, 0]>(P, W)");
const std::string kPadZeroAveragePool =
    PadBefore(13, "Pad(X, spatial, zero)",
              "AveragePool<kernel_shape = [3, 3], count_include_pad = 1>(P)");
const std::string kPadAveragePoolExcludingPad =
    PadBefore(13, "Pad(X, spatial)", "AveragePool<kernel_shape = [3, 3]>(P)");
const std::string kPadMaxPool =
    PadBefore(13, "Pad(X, spatial)", "MaxPool<kernel_shape = [3, 3]>(P)");
// A Relu's output (never below 0) padded by 1 before a MaxPool of kernel
// 3: every window holds an element of X.
const std::string kReluPadMaxPool = absl::StrCat(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,4,4] X) => (Y) <int64[8] spatial = {0, 0, 1, 1, 0, 0, 1, 1}> {
  R = Relu(X)
  P = Pad(R, spatial)
  Y = MaxPool<kernel_shape = [3, 3], pads = [1, 1, 1, 1]>(P)
})");
// Pads of 2 in all with a kernel of 2: a window of pads alone.
const std::string kReluPadWideMaxPool = absl::StrCat(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,4,4] X) => (Y) <int64[8] spatial = {0, 0, 1, 1, 0, 0, 1, 1}> {
  R = Relu(X)
  P = Pad(R, spatial)
  Y = MaxPool<kernel_shape = [2, 2], pads = [1, 1, 1, 1]>(P)
})");
const std::string kPadOneConv = PadBefore(13, "Pad(X, spatial, one)", "Conv<pads = [1, 1, 1, 1]>(P, W)");
const std::string kPadChannelConv = PadBefore(13, "Pad(X, channel)", "Conv(P, W)");
// Pad-18's axes input: the pads cover the axes listed, in any order and
// either sign.
const std::string kPadAxesConv = PadBefore(18, "Pad(X, hw_pads, \"\", hw)", "Conv(P, W)");
const std::string kPadZeroAxesAveragePool =
    PadBefore(18, "Pad(X, hw_pads, zero, wh)",
              "AveragePool<kernel_shape = [3, 3], count_include_pad = 1>(P)");
const std::string kPadAxesChannelConv =
    PadBefore(18, "Pad(X, hw_pads, \"\", ch)", "Conv(P, W)");
const std::string kPadReflectConv =
    PadBefore(13, "Pad<mode = \"reflect\">(X, spatial)", "Conv<pads = [1, 1, 1, 1]>(P, W)");
const std::string kPadConvAutoPad =
    PadBefore(13, "Pad(X, spatial)", "Conv<auto_pad = \"SAME_UPPER\">(P, W)");

// A BatchNormalization of 3 channels after `producer` of T from A.
std::string BatchNormAfter(const std::string& a, const std::string& producer) {
  return absl::StrCat(R"(<ir_version: 8, opset_import: ["" : 13]>
g ()", a, R"( A) => (Y)
  <float[4,3] W = {0.5, -1.0, 0.25, 2.0, 1.5, -0.5, 0.75, 1.0, -2.0, 0.3, 0.2, 0.1},
   float[3,4] Wt = {0.5, -1.0, 0.25, 2.0, 1.5, -0.5, 0.75, 1.0, -2.0, 0.3, 0.2, 0.1},
   float[3] c = {0.1, -0.2, 0.3}, float[3] s = {1.5, 0.5, -1.0}, float[3] b = {0.25, -1.0, 0.5},
   float[3] m = {0.3, -0.7, 0.1}, float[3] v = {0.8, 2.5, 1.2}> {
  T = )", producer, R"(
  D = BatchNormalization(T, s, b, m, v)
  Y = Relu(D)
})");
}

// The LayerNormalization of X [2,3,4] over its last axis, decomposed in
// `body` (ending in Y) at `opset`.
std::string Decomposed(int opset, const std::string& body) {
  return absl::StrCat(R"(<ir_version: 8, opset_import: ["" : )", opset, R"(]>
g (float[2,3,4] X) => (Z)
  <float two = {2.0}, float eps = {1e-5}, float[4] s = {1.5, 0.5, -1.0, 2.0},
   float[4] b = {0.25, -1.0, 0.5, 0.0}, int64[1] last = {-1}, int64[1] two_axis = {2},
   float r2 = {1.4142135381698608}, float one = {1.0}, float half = {0.5},
   float kappa = {0.044714998453855515}, float beta = {0.7978845834732056}> {
)", body, R"(
  Z = Relu(Y)
})");
}

const char kLayerNormAttributeAxes[] = R"(
  M = ReduceMean<axes = [-1]>(X)
  D = Sub(X, M)
  Q = Pow(D, two)
  V = ReduceMean<axes = [-1]>(Q)
  VE = Add(V, eps)
  S = Sqrt(VE)
  N = Div(D, S)
  NS = Mul(N, s)
  Y = Add(NS, b))";
// The converter's expansion (positive axes, D * D), eps and scale first.
const char kLayerNormInputAxes[] = R"(
  M = ReduceMean(X, two_axis)
  D = Sub(X, M)
  Q = Mul(D, D)
  V = ReduceMean(Q, last)
  VE = Add(eps, V)
  S = Sqrt(VE)
  N = Div(D, S)
  NS = Mul(s, N)
  Y = Add(NS, b))";
const char kGeluErf[] = R"(
  H = Div(X, r2)
  E = Erf(H)
  A = Add(one, E)
  M = Mul(X, A)
  Y = Mul(M, half))";
// The converter's expansion of Gelu<approximate = "tanh">.
const char kGeluTanh[] = R"(
  Q = Mul(X, X)
  C = Mul(X, Q)
  P3 = Mul(C, kappa)
  P = Add(X, P3)
  K = Mul(P, beta)
  T = Tanh(K)
  A = Add(T, one)
  H = Mul(X, half)
  Y = Mul(H, A))";
// The spec's function body of Gelu, inlined.
const char kGeluFunctionBody[] = R"(
  HC = CastLike(half, X)
  OC = CastLike(one, X)
  TC = CastLike(two, X)
  ST = Sqrt(TC)
  D = Div(X, ST)
  E = Erf(D)
  P = Sum(OC, E)
  M = Mul(HC, X)
  Y = Mul(M, P))";
const char kRmsNorm[] = R"(
  Q = Pow(X, two)
  M = ReduceMean(Q, last)
  ME = Add(M, eps)
  R = Sqrt(ME)
  I = Reciprocal(R)
  N = Mul(X, I)
  Y = Mul(N, s))";

const std::string kGemmTransBBn =
    BatchNormAfter("float[2,4]", "Gemm<transB = 1, beta = 0.5>(A, Wt, c)");
const std::string kGemmNoCBn = BatchNormAfter("float[2,4]", "Gemm(A, W)");
const std::string kMatMulBn = BatchNormAfter("float[2,4]", "MatMul(A, W)");
const std::string kMatMul3dBn = BatchNormAfter("float[5,3,4]", "MatMul(A, W)");
// The spec's function body of LayerNormalization<axis = -1> over X
// [2,3,5], inlined and folded; `outputs` besides Y's Relu.
std::string LayerNormFunctionBody(const std::string& outputs) {
  return absl::StrCat(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3,5] X) => (Z)", outputs, R"()
  <float[1,5] W = {1.5, 0.5, -1.0, 2.0, 0.25}, float[1,5] B = {0.25, -1.0, 0.5, 0.0, 1.0},
   int64[1] one = {1}, float eps = {0.1}, int64[3] xs = {2, 3, 5}, int64[3] rs = {2, 3, 1}> {
  X2D = Flatten<axis = -1>(X)
  M = ReduceMean(X2D, one)
  Q = Mul(X2D, X2D)
  MQ = ReduceMean(Q, one)
  QM = Mul(M, M)
  V = Sub(MQ, QM)
  VE = Add(V, eps)
  S = Sqrt(VE)
  D = Sub(X2D, M)
  N = Div(D, S)
  NS = Mul(N, W)
  NB = Add(NS, B)
  Y = Reshape(NB, xs)
  Z = Relu(Y)
  Mean = Reshape(M, rs)
})");
}
const std::string kLayerNormFunctionBody = LayerNormFunctionBody("");
const std::string kLayerNormFunctionBodyMeanUsed = LayerNormFunctionBody(", Mean");

const std::string kLayerNorm17 = Decomposed(17, kLayerNormAttributeAxes);
const std::string kLayerNorm16 = Decomposed(16, kLayerNormAttributeAxes);
const std::string kLayerNorm18 = Decomposed(18, kLayerNormInputAxes);
const std::string kLayerNorm23 = Decomposed(23, kLayerNormInputAxes);
const std::string kGelu20 = Decomposed(20, kGeluErf);
const std::string kGeluTanh20 = Decomposed(20, kGeluTanh);
const std::string kGeluFunctionBody20 = Decomposed(20, kGeluFunctionBody);
const std::string kGelu19 = Decomposed(19, kGeluErf);
const std::string kRmsNorm23 = Decomposed(23, kRmsNorm);
const std::string kRmsNorm22 = Decomposed(22, kRmsNorm);

const MatchCase kDeployAddedCases[] = {
    {"pad_into_conv", kPadConv.c_str(), {"Conv", "Relu"}, "pad_conv_no_bias: 1", "deploy"},
    {"pad_zero_into_average_pool", kPadZeroAveragePool.c_str(), {"AveragePool", "Relu"},
     "pad_zero_average_pool: 1", "deploy"},
    // The pool's average leaves its own pads out, the Pad's zeros in.
    {"pad_average_pool_excluding_pad", kPadAveragePoolExcludingPad.c_str(),
     {"Pad", "AveragePool", "Relu"}, "", "deploy"},
    // Negative values would take the Pad's 0 as their max.
    {"pad_max_pool", kPadMaxPool.c_str(), {"Pad", "MaxPool", "Relu"}, "", "deploy"},
    {"relu_pad_max_pool", kReluPadMaxPool.c_str(), {"Relu", "MaxPool"}, "relu_pad_max_pool: 1",
     "deploy"},
    {"relu_pad_max_pool_window_of_pads", kReluPadWideMaxPool.c_str(), {"Relu", "Pad", "MaxPool"},
     "", "deploy"},
    {"pad_value_not_zero", kPadOneConv.c_str(), {"Pad", "Conv", "Relu"}, "", "deploy"},
    {"pad_on_channel_axis", kPadChannelConv.c_str(), {"Pad", "Conv", "Relu"}, "", "deploy"},
    {"pad_axes_into_conv", kPadAxesConv.c_str(), {"Conv", "Relu"}, "pad_axes_conv_no_bias: 1",
     "deploy"},
    {"pad_zero_axes_into_average_pool", kPadZeroAxesAveragePool.c_str(), {"AveragePool", "Relu"},
     "pad_zero_axes_average_pool: 1", "deploy"},
    {"pad_axes_on_channel_axis", kPadAxesChannelConv.c_str(), {"Pad", "Conv", "Relu"}, "",
     "deploy"},
    {"pad_reflect", kPadReflectConv.c_str(), {"Pad", "Conv", "Relu"}, "", "deploy"},
    {"pad_conv_auto_pad", kPadConvAutoPad.c_str(), {"Pad", "Conv", "Relu"}, "", "deploy"},
    {"pad_conv_exact_profile", kPadConv.c_str(), {"Pad", "Conv", "Relu"}, "", "exact"},
    {"gemm_trans_b_batch_norm",
     kGemmTransBBn.c_str(),
     {"Gemm", "Relu"}, "gemm_trans_b_batch_norm: 1", "deploy"},
    {"gemm_no_c_batch_norm", kGemmNoCBn.c_str(),
     {"Gemm", "Relu"}, "gemm_no_c_batch_norm: 1", "deploy"},
    {"matmul_batch_norm", kMatMulBn.c_str(), {"Gemm", "Relu"},
     "matmul_batch_norm: 1", "deploy"},
    // [5,3,4] x [4,3]: BatchNormalization's channels are the product's
    // axis 1, not W's columns.
    {"matmul_3d_batch_norm", kMatMul3dBn.c_str(),
     {"MatMul", "BatchNormalization", "Relu"}, "", "deploy"},
    {"layer_norm_opset_17", kLayerNorm17.c_str(), {"LayerNormalization", "Relu"},
     "layer_norm_pow_axes_attribute: 1", "deploy"},
    {"layer_norm_opset_18_converter_form", kLayerNorm18.c_str(), {"LayerNormalization", "Relu"},
     "layer_norm_square: 1", "deploy"},
    // D / sqrt(mean(D^2) + eps) * s is also the RMSNormalization of D: the
    // LayerNormalization rules come first.
    {"layer_norm_opset_23", kLayerNorm23.c_str(), {"LayerNormalization", "Relu"},
     "layer_norm_bias: 1", "deploy"},
    {"layer_norm_function_body", kLayerNormFunctionBody.c_str(), {"LayerNormalization", "Relu"},
     "layer_norm_function_body: 1", "deploy"},
    // Its Mean output is used: the pattern's mean is not an intermediate.
    {"layer_norm_function_body_mean_used", kLayerNormFunctionBodyMeanUsed.c_str(),
     {"Flatten", "ReduceMean", "Mul", "ReduceMean", "Mul", "Sub", "Add", "Sqrt", "Sub", "Div",
      "Mul", "Add", "Reshape", "Relu", "Reshape"},
     "", "deploy"},
    {"layer_norm_opset_16", kLayerNorm16.c_str(),
     {"ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add", "Relu"}, "",
     "deploy"},
    {"layer_norm_exact_profile", kLayerNorm17.c_str(),
     {"ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add", "Relu"}, "",
     "exact"},
    {"gelu_opset_20", kGelu20.c_str(), {"Gelu", "Relu"}, "gelu_erf_div: 1", "deploy"},
    {"gelu_tanh_opset_20", kGeluTanh20.c_str(), {"Gelu", "Relu"}, "gelu_tanh: 1", "deploy"},
    {"gelu_function_body", kGeluFunctionBody20.c_str(), {"Gelu", "Relu"},
     "gelu_erf_function_body: 1", "deploy"},
    {"gelu_opset_19", kGelu19.c_str(), {"Div", "Erf", "Add", "Mul", "Mul", "Relu"}, "", "deploy"},
    {"rms_norm_opset_23", kRmsNorm23.c_str(), {"RMSNormalization", "Relu"},
     "rms_norm_pow_reciprocal: 1", "deploy"},
    {"rms_norm_opset_22", kRmsNorm22.c_str(),
     {"Pow", "ReduceMean", "Add", "Sqrt", "Reciprocal", "Mul", "Mul", "Relu"}, "", "deploy"},
};

class MatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(MatchTest, RulesPassRewrites) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(GetParam().model);
  ASSERT_TRUE(model.ok()) << model.status();
  RewriteOptions options;
  if (GetParam().profile != nullptr) {
    options.profile = GetParam().profile;
  } else {
    options.passes = {"rules"};
  }
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
INSTANTIATE_TEST_SUITE_P(Deploy, MatchTest, ::testing::ValuesIn(kDeployCases),
                         [](const auto& info) { return std::string(info.param.name); });
INSTANTIATE_TEST_SUITE_P(DeployAdded, MatchTest, ::testing::ValuesIn(kDeployAddedCases),
                         [](const auto& info) { return std::string(info.param.name); });

// `model` optimized in place with the deploy profile; its report.
absl::StatusOr<RewriteReport> OptimizeDeploy(onnx::ModelProto& model) {
  RewriteOptions options;
  options.profile = "deploy";
  return Optimize(model, options);
}

// The int and float attributes of `node` as text, by name.
std::map<std::string, std::string> AttributeTexts(const onnx::NodeProto& node) {
  std::map<std::string, std::string> texts;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    texts[attribute.name()] = attribute.type() == onnx::AttributeProto::INT
                                  ? absl::StrCat(attribute.i())
                                  : absl::StrCat(attribute.f());
  }
  return texts;
}

// A named replacement node keeps the attributes the pattern leaves unnamed
// (transB, alpha) and sets its own (transA).
TEST(RulesTest, NamedReplacementNodeKeepsUnnamedAttributes) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[3,2] A, float[4,3] B, float[4] c) => (float[2,4] Y) {
  T = Transpose<perm = [1, 0]>(A)
  Y = Gemm<transB = 1, alpha = 2.0>(T, B, c)
})");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(OptimizeDeploy(*model).ok());
  ASSERT_EQ(model->graph().node_size(), 1);
  EXPECT_EQ(AttributeTexts(model->graph().node(0)),
            (std::map<std::string, std::string>{{"alpha", "2"}, {"transA", "1"}, {"transB", "1"}}));
}

// The folded Conv: W and B are initializers computed from the BatchNorm's
// constants, and nothing of the constant arithmetic is left.
TEST(RulesTest, ConvBatchNormFoldsIntoInitializers) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(kConvBn);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<RewriteReport> report = OptimizeDeploy(*model);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(model->graph().node_size(), 2) << report->ToText();
  const onnx::NodeProto& conv = model->graph().node(0);
  ASSERT_EQ(conv.input_size(), 3);
  ASSERT_EQ(model->graph().initializer_size(), 2);
  for (const onnx::TensorProto& initializer : model->graph().initializer()) {
    EXPECT_TRUE(initializer.name() == conv.input(1) || initializer.name() == conv.input(2))
        << initializer.name();
  }
  EXPECT_TRUE(report->converged);
}

// The fused Conv pads by the sum of its pads ([1, 0, 1, 0]) and the Pad's
// spatial ones (1 on each side of H and W).
TEST(RulesTest, PadIntoConvSumsThePads) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(kPadConv);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(OptimizeDeploy(*model).ok());
  ASSERT_EQ(model->graph().node_size(), 2);
  std::vector<int64_t> pads;
  for (const onnx::AttributeProto& attribute : model->graph().node(0).attribute()) {
    if (attribute.name() == "pads") pads.assign(attribute.ints().begin(), attribute.ints().end());
  }
  EXPECT_EQ(pads, (std::vector<int64_t>{2, 1, 2, 1}));
  EXPECT_EQ(model->graph().node(0).input(0), "X");
}

// A recognized LayerNormalization takes its epsilon from the constant the
// pattern adds (bound by `value(e) == @eps`).
TEST(RulesTest, LayerNormalizationTakesTheEpsilon) {
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(kLayerNorm17);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(OptimizeDeploy(*model).ok());
  ASSERT_EQ(model->graph().node_size(), 2);
  EXPECT_EQ(AttributeTexts(model->graph().node(0)),
            (std::map<std::string, std::string>{{"axis", "-1"}, {"epsilon", "1e-05"}}));
}

}  // namespace
}  // namespace onnxconvert::rewrites
