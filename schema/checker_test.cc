#include "schema/checker.h"

#include <map>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/model_text.h"
#include "ir/model_io.h"
#include "ir/text_parser.h"
#include "tests/corpus.h"

namespace onnxconvert::schema {
namespace {

onnx::ModelProto Model(absl::string_view text) { return testing::ModelFromText(text); }

TEST(CheckerTest, ValidModelHasNoIssues) {
  CheckReport report = CheckModel(Model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[N,4] X, bool C) => (float[N,4] Y) <float[4] W = {1.0, 2.0, 3.0, 4.0}> {
  [add] T = Add(X, W)
  [if] Y = If <then_branch = t () => (float[N,4] A) { A = Relu(T) },
               else_branch = e () => (float[N,4] B) { B = Neg(T) }> (C)
})"));
  EXPECT_TRUE(report.issues.empty()) << report.issues[0].ToString();
  EXPECT_EQ(report.nodes_checked, 4);
  EXPECT_EQ(report.graphs_checked, 3);
}

struct BrokenCase {
  std::string name;
  std::string text;
  CheckCode code;
  std::string expected;  // the whole first issue, as ToString() prints it
};

constexpr absl::string_view kHeader = "<ir_version: 8, opset_import: [\"\" : 13]>\n";

TEST(CheckerTest, BrokenModelsAreRejectedWithTheNodeNamed) {
  const BrokenCase cases[] = {
      {"dangling_input", "g (float X) => (float Y) { [relu] Y = Relu(Q) }",
       CheckCode::kUndefinedInput,
       "main \xE2\x80\xBA node 'relu' (Relu-13): undefined-input: input 'Q' is not defined"},
      {"wrong_attribute_type", "g (float X) => (float Y) { [sm] Y = Softmax <axis = 1.5> (X) }",
       CheckCode::kAttributeType,
       "main \xE2\x80\xBA node 'sm' (Softmax-13): attribute-type: attribute 'axis' is FLOAT; "
       "Softmax-13 wants INT"},
      {"op_before_it_existed",
       "g (float X) => (float Y) { [gn] Y = GroupNormalization <num_groups = 1> (X, X, X) }",
       CheckCode::kUnknownOperator,
       "main \xE2\x80\xBA node 'gn' (GroupNormalization): unknown-operator: 'GroupNormalization' "
       "does not exist at opset 13 (it was introduced at opset 18)"},
      {"cycle", "g (float X) => (float Y) { [a] A = Add(X, B) \n [b] B = Relu(A) \n Y = Identity(B) }",
       CheckCode::kNotTopological,
       "main \xE2\x80\xBA node 'a' (Add-13): not-topological: input 'B' is defined only by a "
       "later node (#1): the nodes are not in topological order"},
      {"unknown_attribute", "g (float X) => (float Y) { [r] Y = Relu <alpha = 1.0> (X) }",
       CheckCode::kUnknownAttribute,
       "main \xE2\x80\xBA node 'r' (Relu-13): unknown-attribute: Relu-13 has no attribute 'alpha'"},
      {"missing_attribute", "g (float X) => (float Y) { [c] Y = Cast(X) }",
       CheckCode::kMissingAttribute,
       "main \xE2\x80\xBA node 'c' (Cast-13): missing-attribute: required attribute 'to' is missing"},
      {"arity", "g (float X) => (float Y) { [a] Y = Add(X) }", CheckCode::kArity,
       "main \xE2\x80\xBA node 'a' (Add-13): arity: has 1 inputs; Add-13 takes 2"},
      {"type_constraint", "g (int8[2] X) => (int8[2] Y) { [r] Y = Relu(X) }",
       CheckCode::kTypeConstraint,
       "main \xE2\x80\xBA node 'r' (Relu-13): type-constraint: input 'X' (X) is tensor(int8), "
       "not allowed for T by Relu-13"},
      {"mixed_types", "g (float[2] X, double[2] Z) => (float[2] Y) { [a] Y = Add(X, Z) }",
       CheckCode::kTypeConstraint,
       "main \xE2\x80\xBA node 'a' (Add-13): type-constraint: input 'Z' (B) is tensor(double), "
       "but T is already bound to tensor(float)"},
      {"duplicate", "g (float X) => (float Y) { [a] Y = Relu(X) \n [b] Y = Neg(X) }",
       CheckCode::kDuplicateValue,
       "main \xE2\x80\xBA node 'b' (Neg-13): duplicate-value: value 'Y' is defined more than once"},
      {"in_subgraph",
       "g (bool C, float X) => (float Y) { [if] Y = If <then_branch = t () => (float A) "
       "{ [inner] A = Relu(Nope) }, else_branch = e () => (float B) { B = Neg(X) }> (C) }",
       CheckCode::kUndefinedInput,
       "main/then_branch of 'if' (If) \xE2\x80\xBA node 'inner' (Relu-13): undefined-input: "
       "input 'Nope' is not defined"},
  };
  for (const BrokenCase& c : cases) {
    CheckReport report = CheckModel(Model(absl::StrCat(kHeader, c.text)));
    ASSERT_FALSE(report.issues.empty()) << c.name;
    EXPECT_EQ(report.issues[0].code, c.code) << c.name << ": " << report.issues[0].ToString();
    EXPECT_TRUE(absl::StartsWith(report.issues[0].ToString(), c.expected))
        << c.name << ":\n  got      " << report.issues[0].ToString() << "\n  expected "
        << c.expected;
    EXPECT_FALSE(report.status().ok());
  }
}

TEST(CheckerTest, ModelLevelRules) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const Case cases[] = {
      {"<ir_version: 8, opset_import: [\"\" : 28]> g () => () {}", "opset 28 of domain 'ai.onnx' does not exist"},
      {"<ir_version: 14, opset_import: [\"\" : 13]> g () => () {}", "ir_version 14 is newer"},
      {"<ir_version: 8, opset_import: [\"\" : 13, \"\" : 14]> g () => () {}", "imported twice"},
      {"<ir_version: 8, opset_import: [\"\" : 13]> g (float X) => (float Y) { Y = com.x.Op(X) }",
       "domain 'com.x' is used but not imported"},
      {"<ir_version: 8, opset_import: [\"\" : 13]> g (float8e4m3fn X) => (float8e4m3fn Y) "
       "{ Y = Identity(X) }", "needs IR version 9"},
  };
  for (const Case& c : cases) {
    CheckReport report = CheckModel(Model(c.text));
    ASSERT_FALSE(report.status().ok()) << c.text;
    EXPECT_TRUE(absl::StrContains(report.status().message(), c.expected))
        << c.text << " -> " << report.status();
  }
}

TEST(CheckerTest, FunctionsAndVendorOpsAreChecked) {
  CheckReport report = CheckModel(Model(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1, "com.vendor" : 1]>
g (float X) => (float Y) {
  T = local.Twice(X)
  Y = com.vendor.Fancy(T)
}
<domain: "local", opset_import: ["" : 13]>
Twice (A) => (B) {
  [bad] B = Add(A, Missing)
})"));
  ASSERT_EQ(report.error_count(), 1) << report.issues[0].ToString();
  EXPECT_EQ(report.issues[0].ToString(),
            "function 'local.Twice' \xE2\x80\xBA node 'bad' (Add-13): undefined-input: input "
            "'Missing' is not defined");
  EXPECT_EQ(report.functions_checked, 1);
}

// Every model of the corpus passes the checker at its own opset.
TEST(CheckerTest, EveryCorpusModelPasses) {
  absl::StatusOr<std::vector<testing::CorpusCase>> cases = testing::ListCorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  std::map<std::string, int> by_code;
  int failures = 0;
  for (const testing::CorpusCase& c : *cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(c.model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    CheckReport report = CheckModel(loaded->model);
    for (const CheckIssue& issue : report.issues) {
      if (issue.is_warning) continue;
      ++by_code[CheckCodeName(issue.code)];
      if (++failures <= 30) ADD_FAILURE() << c.name << ": " << issue.ToString();
    }
  }
  for (const auto& [code, count] : by_code) std::cerr << code << ": " << count << "\n";
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace onnxconvert::schema
