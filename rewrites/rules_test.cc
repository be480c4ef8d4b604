// The rule engine: rule-file errors name file, line and column; the
// built-in rules match (or not) in ONNX-text models, one case per
// behaviour (the cases: rewrites/testdata/match.cases, deploy.cases and
// deploy_added.cases).

#include "rewrites/rules.h"

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "rewrites/pass_manager.h"
#include "tests/case_file.h"

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

// A case of the rules pass, read from a case file of rewrites/testdata
// (the format: each file's opening comment).
struct MatchCase {
  std::string name;
  std::string model;             // ONNX text
  std::vector<std::string> ops;  // the main graph's ops after
  std::string report;            // a part of the report's text
  // Set: the whole profile runs (rules, then folding, ...); empty: the
  // rules pass alone in the exact profile.
  std::string profile;
  std::string error;  // why the case file did not read, naming the line; "" when it did
};

// Prints the case's name (for gtest's messages).
void PrintTo(const MatchCase& c, std::ostream* os) { *os << c.name; }

// The cases of rewrites/testdata/<file>.cases. A file that does not read
// gives one case, named case_file, holding the error.
std::vector<MatchCase> MatchCases(const std::string& file) {
  const std::string path = absl::StrCat("rewrites/testdata/", file, ".cases");
  absl::StatusOr<std::vector<onnxconvert::testing::FileCase>> cases =
      onnxconvert::testing::ReadCaseFile(path);
  if (!cases.ok()) return {{"case_file", "", {}, "", "", std::string(cases.status().message())}};
  std::vector<MatchCase> read;
  for (const onnxconvert::testing::FileCase& c : *cases) {
    MatchCase& match = read.emplace_back();
    match.name = c.head;
    for (const onnxconvert::testing::CasePart& part : c.parts) {
      if (part.key == "model") {
        match.model = part.Text();
      } else if (part.key == "ops") {
        match.ops = absl::StrSplit(part.value, ", ", absl::SkipEmpty());
      } else if (part.key == "report") {
        match.report = part.value;
      } else if (part.key == "profile") {
        match.profile = part.value;
      } else {
        match.error = absl::StrCat(path, ":", part.line, ": no part '", part.key, "' in a case");
      }
    }
  }
  return read;
}

// The model of the case `name` of rewrites/testdata/<file>.cases, parsed.
absl::StatusOr<onnx::ModelProto> CaseModel(const std::string& file, const std::string& name) {
  for (const MatchCase& c : MatchCases(file)) {
    if (c.name == name) return ParseModelText(c.model);
  }
  return absl::NotFoundError(absl::StrCat("no case ", name, " in ", file, ".cases"));
}

class MatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(MatchTest, RulesPassRewrites) {
  ASSERT_EQ(GetParam().error, "");
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(GetParam().model);
  ASSERT_TRUE(model.ok()) << model.status();
  RewriteOptions options;
  if (!GetParam().profile.empty()) {
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

// Named after the case.
std::string CaseName(const ::testing::TestParamInfo<MatchCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Cases, MatchTest, ::testing::ValuesIn(MatchCases("match")), CaseName);
INSTANTIATE_TEST_SUITE_P(Deploy, MatchTest, ::testing::ValuesIn(MatchCases("deploy")), CaseName);
INSTANTIATE_TEST_SUITE_P(DeployAdded, MatchTest, ::testing::ValuesIn(MatchCases("deploy_added")),
                         CaseName);

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
  absl::StatusOr<onnx::ModelProto> model = CaseModel("deploy", "conv_batch_norm");
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
  absl::StatusOr<onnx::ModelProto> model = CaseModel("deploy_added", "pad_into_conv");
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
  absl::StatusOr<onnx::ModelProto> model = CaseModel("deploy_added", "layer_norm_opset_17");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(OptimizeDeploy(*model).ok());
  ASSERT_EQ(model->graph().node_size(), 2);
  EXPECT_EQ(AttributeTexts(model->graph().node(0)),
            (std::map<std::string, std::string>{{"axis", "-1"}, {"epsilon", "1e-05"}}));
}

}  // namespace
}  // namespace onnxconvert::rewrites
