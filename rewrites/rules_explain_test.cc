// --explain: a rule explained at every node of its root op of ONNX-text
// models, one case per kind of reason.

#include "rewrites/rules_explain.h"

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ir/text_parser.h"
#include "rewrites/pass_manager.h"
#include "tests/case_file.h"
#include "tests/test_files.h"

namespace onnxconvert::rewrites {
namespace {

// The case file and the rule file of the cases' rules (the case file's
// format: its opening comment).
constexpr char kCaseFile[] = "rewrites/testdata/explain.cases";
constexpr char kRuleFile[] = "rewrites/testdata/explain.rules";

// The models' header: IR 8, the default domain at opset 13.
constexpr char kOpset13[] = "<ir_version: 8, opset_import: [\"\" : 13]>\n";

// What one node's explanation must say.
struct Expected {
  std::string node;
  bool matched;
  std::vector<std::string> reason_has;  // substrings of the reason
};

struct ExplainCase {
  std::string name;
  std::string rule;
  std::string graph;  // the main graph in ONNX text, at opset 13
  std::vector<Expected> expected;  // by node, in graph order
  std::string error;  // why the case file did not read, naming the line; "" when it did
};

// Prints the case's name (for gtest's messages).
void PrintTo(const ExplainCase& c, std::ostream* os) { *os << c.name; }

// The case of `c`, a case of kCaseFile, or its error.
absl::StatusOr<ExplainCase> ExplainCaseOf(const onnxconvert::testing::FileCase& c) {
  auto error = [](int line, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(kCaseFile, ":", line, ": ", what));
  };
  std::vector<std::string> head = absl::StrSplit(c.head, absl::MaxSplits(": ", 1));
  if (head.size() != 2) return error(c.line, "expected 'case NAME: RULE'");
  ExplainCase read;
  read.name = head[0];
  read.rule = head[1];
  for (const onnxconvert::testing::CasePart& part : c.parts) {
    if (part.key == "model") {
      read.graph = part.Text();
    } else if (absl::StartsWith(part.key, "node '") && absl::EndsWith(part.key, "'") &&
               (part.value == "matched" || part.value == "no")) {
      read.expected.push_back(
          {part.key.substr(6, part.key.size() - 7), part.value == "matched", part.lines});
    } else {
      return error(part.line, "expected 'model:' or 'node 'NAME': matched|no'");
    }
  }
  return read;
}

// The cases of kCaseFile. A file that does not read gives one case, named
// case_file, holding the error.
std::vector<ExplainCase> ReadCases() {
  auto failed = [](const absl::Status& status) {
    return std::vector<ExplainCase>{{"case_file", "", "", {}, std::string(status.message())}};
  };
  absl::StatusOr<std::vector<onnxconvert::testing::FileCase>> file =
      onnxconvert::testing::ReadCaseFile(kCaseFile);
  if (!file.ok()) return failed(file.status());
  std::vector<ExplainCase> cases;
  for (const onnxconvert::testing::FileCase& c : *file) {
    absl::StatusOr<ExplainCase> read = ExplainCaseOf(c);
    if (!read.ok()) return failed(read.status());
    cases.push_back(*std::move(read));
  }
  return cases;
}

class ExplainTest : public ::testing::TestWithParam<ExplainCase> {};

TEST_P(ExplainTest, SaysWhyAtEachRootNode) {
  const ExplainCase& c = GetParam();
  ASSERT_EQ(c.error, "");
  absl::StatusOr<onnx::ModelProto> model = ParseModelText(absl::StrCat(kOpset13, c.graph));
  ASSERT_TRUE(model.ok()) << model.status();
  RewriteOptions options;
  options.passes = {"dead-code"};
  options.rule_files = {{kRuleFile, onnxconvert::testing::ReadTestFile(kRuleFile)}};
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

INSTANTIATE_TEST_SUITE_P(Cases, ExplainTest, ::testing::ValuesIn(ReadCases()),
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
