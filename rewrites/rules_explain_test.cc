// --explain: a rule explained at every node of its root op of ONNX-text
// models, one case per kind of reason.

#include "rewrites/rules_explain.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "rewrites/pass_manager.h"

namespace onnxconvert::rewrites {
namespace {

// A rule file of the cases' rules.
constexpr char kRules[] = R"(rule double_neg
  pattern (X) => (Y) { T = Neg(X)
                       Y = Neg(T) }
  replace (X) => (X)
rule relu_of_matrix
  pattern (A) => (Y) { Y = Relu(A) }
  replace (A) => (Y) { Y = Abs(A) }
  where rank(A) == 2
rule dropout_gone
  pattern (X) => (Y) { Y = Dropout(X) }
  replace (X) => (X)
rule clip_unbounded
  pattern (X) => (Y) { Y = Clip(X) }
  replace (X) => (X)
rule softmax_axis_1
  pattern (X) => (Y) { Y = Softmax<axis: int = 1>(X) }
  replace (X) => (X)
)";

// The models' header: IR 8, the default domain at opset 13.
constexpr char kOpset13[] = "<ir_version: 8, opset_import: [\"\" : 13]>\n";

// What one node's explanation must say.
struct Expected {
  std::string node;
  bool matched;
  std::vector<std::string> reason_has;  // substrings of the reason
};

struct ExplainCase {
  const char* name;
  const char* rule;
  const char* graph;  // the main graph in ONNX text, at opset 13
  std::vector<Expected> expected;  // by node, in graph order
};

const ExplainCase kCases[] = {
    {"matches_and_an_input_not_computed",
     "double_neg",
     R"(g (float[2] X) => (float[2] Y) {
  [a] A = Neg(X)
  [b] B = Neg(A)
  [r] Y = Relu(B)
})",
     {{"a",
       false,
       {"input 0 of node 'a' (#0, Neg), 'X', is not computed by a node here (a graph input)",
        "pattern node `T = Neg(X)`"}},
      {"b", true, {"takes node 'a' (#0, Neg), node 'b' (#1, Neg)"}}}},
    {"intermediate_with_two_users",
     "double_neg",
     R"(g (float[2] X) => (float[2] Y, float[2] Z) {
  [a] A = Neg(X)
  [b] B = Neg(A)
  [r] Y = Relu(B)
  [s] Z = Relu(A)
})",
     {{"a", false, {"is not computed by a node here"}},
      {"b", false, {"intermediate T ('A') has another user: node 's' (#3, Relu)"}}}},
    {"intermediate_is_a_graph_output",
     "double_neg",
     R"(g (float[2] X) => (float[2] Y, float[2] A) {
  [a] A = Neg(X)
  [b] Y = Neg(A)
})",
     {{"a", false, {}}, {"b", false, {"intermediate T ('A') is a graph output"}}}},
    {"where_fails_on_a_fact",
     "relu_of_matrix",
     R"(g (float[2,3,4] X) => (float[2,3,4] Y) {
  [r] Y = Relu(X)
})",
     {{"r",
       false,
       {"where `rank(A) == 2` (t.rules:8:9) fails: rank(A) is 3, wanted == 2",
        "A ('X'): float[2,3,4]"}}}},
    {"where_fact_unknown",
     "relu_of_matrix",
     R"(g (float X) => (float Y) {
  [r] Y = Relu(X)
})",
     {{"r", false, {"rank(A) is unknown", "no static shape"}}}},
    {"where_holds",
     "relu_of_matrix",
     R"(g (float[2,3] X) => (float[2,3] Y) {
  Y = Relu(X)
})",
     {{"", true, {"takes node #0 (Relu)"}}}},
    {"attribute_literal_differs",
     "softmax_axis_1",
     R"(g (float[2,3] X) => (float[2,3] Y) {
  [s] T = Softmax<axis = 0>(X)
  [t] Y = Softmax(T)
})",
     {{"s", false, {"attribute axis of node 's' (#0, Softmax) is 0; pattern node", "wants 1"}},
      {"t", false, {"attribute axis of node 't' (#1, Softmax) is -1 (unset: the default)"}}}},
    {"op_differs_below_the_root",
     "double_neg",
     R"(g (float[2] X) => (float[2] Y) {
  [a] A = Abs(X)
  [b] Y = Neg(A)
})",
     {{"b", false, {"pattern node `T = Neg(X)` wants op Neg; node 'a' (#0, Abs) is Abs"}}}},
    {"extra_output_used", "dropout_gone",
     R"(g (float[2] X) => (float[2] Y, bool[2] M) {
  [d] D, M = Dropout(X)
  [r] Y = Relu(D)
})",
     {{"d", false,
       {"output 1 'M' of node 'd' (#0, Dropout) is used; pattern node `Y = Dropout(X)` leaves "
        "it out"}}}},
    {"input_count_differs", "clip_unbounded",
     R"(g (float[2] X) => (float[2] Y) <float lo = {0.0}> {
  [c] C = Clip(X, lo)
  [r] Y = Relu(C)
})",
     {{"c", false, {"node 'c' (#0, Clip) has 2 inputs; pattern node `Y = Clip(X)` has 1"}}}},
    // Commutative: of the two operand orders, the one failing on a fact it
    // knows (k's value) is explained, not the one lacking X's value.
    {"commutative_operands_swapped", "mul_by_one",
     R"(g (float[2] X) => (float[2] Y) <float[1] k = {2.0}> {
  [m] M = Mul(k, X)
  [r] Y = Relu(M)
})",
     {{"m", false,
       {"fails: value(k) is [2], wanted == 1", "(with commutative operands swapped)"}}}},
    // `fused_pads(p, Y) == @pads` binds @pads (rules.h), which the next
    // predicate reads: pads of 2 in all, a window of 2 of pads alone.
    {"predicate_after_a_binding", "relu_pad_max_pool",
     R"(g (float[1,2,4,4] X) => (Y) <int64[8] p = {0, 0, 1, 1, 0, 0, 1, 1}> {
  [r] R = Relu(X)
  [q] P = Pad(R, p)
  [m] Y = MaxPool<kernel_shape = [2, 2], pads = [1, 1, 1, 1]>(P)
})",
     {{"m", false, {"fails: pads_below_kernel(@pads, Y) is false"}}}},
};

class ExplainTest : public ::testing::TestWithParam<ExplainCase> {};

TEST_P(ExplainTest, SaysWhyAtEachRootNode) {
  const ExplainCase& c = GetParam();
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(absl::StrCat(kOpset13, c.graph));
  ASSERT_TRUE(model.ok()) << model.status();
  RewriteOptions options;
  options.passes = {"dead-code"};
  options.rule_files = {{"t.rules", kRules}};
  options.explain = {c.rule};
  absl::StatusOr<RewriteReport> report = Optimize(*model, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->explain.size(), c.expected.size()) << report->ToText();
  for (size_t i = 0; i < c.expected.size(); ++i) {
    const RuleExplanation& got = report->explain[i];
    const Expected& want = c.expected[i];
    EXPECT_EQ(got.rule, c.rule);
    EXPECT_EQ(got.graph, "main");
    EXPECT_EQ(got.node, want.node);
    EXPECT_EQ(got.matched, want.matched) << got.reason;
    for (const std::string& part : want.reason_has) {
      EXPECT_NE(got.reason.find(part), std::string::npos) << got.reason << "\nlacks: " << part;
    }
    // The text and JSON reports carry it.
    EXPECT_NE(report->ToText().find(ExplanationText(got)), std::string::npos);
  }
  EXPECT_NE(report->ToJson().find("\"explain\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Cases, ExplainTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ExplainTest, UnknownRuleIsAnError) {
  RewriteOptions options;
  options.explain = {"no_such_rule"};
  absl::StatusOr<std::vector<Rule>> rules = RulesToExplain(options);
  ASSERT_FALSE(rules.ok());
  EXPECT_NE(rules.status().message().find("no rule 'no_such_rule'"), std::string::npos);
}

TEST(ExplainTest, BuiltinRuleWithoutItsRootOpSaysSo) {
  absl::StatusOr<onnx::ModelProto> model =
      ParseModelText(absl::StrCat(kOpset13, R"(g (float[2] X) => (float[2] Y) {
  Y = Relu(X)
})"));
  ASSERT_TRUE(model.ok()) << model.status();
  RewriteOptions options;
  options.passes = {"dead-code"};
  options.explain = {"mul_by_one"};
  absl::StatusOr<RewriteReport> report = Optimize(*model, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->explain.size(), 1u);
  EXPECT_EQ(report->explain[0].index, -1);
  EXPECT_EQ(report->explain[0].reason, "the model has no Mul node, where the rule's pattern ends");
}

}  // namespace
}  // namespace onnxconvert::rewrites
