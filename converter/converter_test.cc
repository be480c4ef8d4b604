#include "converter/converter.h"

#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/enum_words_testing.h"
#include "converter/side_by_side.h"
#include "gtest/gtest.h"
#include "ir/text_printer.h"
#include "tests/model_text.h"

namespace onnxconvert::converter {
namespace {

onnx::ModelProto Model(absl::string_view text) { return testing::ModelFromText(text); }

ConvertOptions To(int64_t opset) {
  ConvertOptions options;
  options.target_opset = opset;
  return options;
}

TEST(ConverterTest, StepValidationsHaveTheirWords) {
  testing::ExpectEveryValueHasItsOwnWord(StepValidationName, ParseStepValidation,
                                         kLastStepValidation);
  const testing::EnumWordCase<StepValidation> words[] = {
      {StepValidation::kSkipped, "skipped"},
      {StepValidation::kOk, "ok"},
      {StepValidation::kIncremental, "incremental"},
      {StepValidation::kUnchanged, "unchanged"},
  };
  ASSERT_EQ(std::size(words), static_cast<size_t>(kLastStepValidation) + 1);
  testing::ExpectWords<StepValidation>(StepValidationName, ParseStepValidation, words);
  EXPECT_FALSE(ParseStepValidation("failed").has_value());
  EXPECT_EQ(StepReport().validation, StepValidation::kSkipped);
}

TEST(ConverterTest, UpgradeBumpsVersionsOpsetAndIrVersion) {
  onnx::ModelProto model = Model(R"(<ir_version: 6, opset_import: ["" : 11, "com.vendor" : 1]>
g (float[N,4] X) => (float[N,4] Y) {
  [relu] R = Relu(X)
  [fancy] F = com.vendor.Fancy(R)
  [neg] Y = Neg(R)
})");
  std::string before = model.SerializeAsString();
  absl::StatusOr<ConversionResult> result = ConvertModel(model, To(14));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(model.SerializeAsString(), before);  // the input is not modified
  EXPECT_EQ(result->model.opset_import(0).version(), 14);
  EXPECT_EQ(result->model.opset_import(1).version(), 1);  // other domains kept
  EXPECT_EQ(result->model.ir_version(), 7);
  const ConversionReport& report = result->report;
  ASSERT_EQ(report.steps.size(), 3u);
  // Relu changed at 13 and 14, Neg at 13.
  EXPECT_EQ(report.nodes_converted, 3);
  // Rebound only: counted by op, not listed node by node.
  EXPECT_TRUE(report.steps[1].nodes.empty());
  ASSERT_EQ(report.steps[1].bumps.size(), 2u);
  EXPECT_EQ(report.steps[1].NodeCount(), 2);
  ASSERT_EQ(report.steps[2].bumps.size(), 1u);
  EXPECT_EQ(report.steps[2].bumps[0].op, "Relu");
  EXPECT_EQ(report.steps[2].bumps[0].from_version, 13);
  EXPECT_EQ(report.steps[2].bumps[0].to_version, 14);
  ASSERT_EQ(report.untouched_ops.size(), 1u);
  EXPECT_EQ(report.untouched_ops[0].first, "com.vendor.Fancy");
  EXPECT_TRUE(absl::StrContains(report.ToJson(), "\"op\": \"Neg\",\n          \"from_version\": 6"));
  EXPECT_TRUE(absl::StrContains(report.ToText(), "step 12 -> 13: 2 nodes, validation "));
  EXPECT_TRUE(absl::StrContains(report.ToText(), "main \xE2\x80\xBA 1 Relu: version 6 -> 13"));
  EXPECT_EQ(report.steps[0].validation, StepValidation::kUnchanged)
      << "no node changes from 11 to 12 here";
}

// A node may name the default domain "ai.onnx" rather than "": it is
// indexed, bumped and reported like the others.
TEST(ConverterTest, NodesNamingAiOnnxConvertLikeTheOthers) {
  onnx::ModelProto model = Model(R"(<ir_version: 6, opset_import: ["" : 11]>
g (float[N,4] X) => (float[N,4] Y) {
  [relu] R = ai.onnx.Relu(X)
  [neg] Y = Neg(R)
})");
  absl::StatusOr<ConversionResult> result = ConvertModel(model, To(14));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.nodes_converted, 3);  // Relu at 13 and 14, Neg at 13
  ASSERT_EQ(result->report.steps.size(), 3u);
  ASSERT_EQ(result->report.steps[2].bumps.size(), 1u);
  EXPECT_EQ(result->report.steps[2].bumps[0].op, "Relu");
}

// The test name of a case: its name.
template <typename Case>
std::string NameOf(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

struct RestructureCase {
  const char* name;
  const char* model;
  int64_t target;
  const char* node;  // the node whose change carries the texts
  std::vector<std::string> before_has;
  std::vector<std::string> after_has;
};

// Prints a case by its name (in the failures of parameterized tests).
void PrintTo(const RestructureCase& c, std::ostream* os) { *os << c.name; }

// An adapter that restructures a node (a function body expanded in its
// place, an attribute moved to an input) reports the node before and the
// nodes after in ONNX text, in the text, JSON and proto-able report.
std::vector<RestructureCase> RestructuringAdapters() {
  return {
      {"function_body_expanded", R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2,3] X) => (float[2,3] Y) {
  [hs] Y = HardSwish(X)
})",
       13, "hs", {"[hs] Y = HardSwish(X)"}, {"= HardSigmoid <alpha", "Y = Mul(X, "}},
      {"attribute_to_input", R"(<ir_version: 7, opset_import: ["" : 12]>
g (float[3] X) => (float[1,3] Y) {
  [unsq] Y = Unsqueeze<axes = [0]>(X)
})",
       13, "unsq", {"[unsq] Y = Unsqueeze <axes = [0]> (X)"}, {"[unsq] Y = Unsqueeze(X, unsq__"}},
  };
}

class RestructureTest : public ::testing::TestWithParam<RestructureCase> {};

TEST_P(RestructureTest, ReportBeforeAndAfterText) {
  const RestructureCase& c = GetParam();
  absl::StatusOr<ConversionResult> result = ConvertModel(Model(c.model), To(c.target));
  ASSERT_TRUE(result.ok()) << result.status();
  const NodeChange* found = nullptr;
  for (const StepReport& step : result->report.steps) {
    for (const NodeChange& change : step.nodes) {
      if (change.node == c.node) found = &change;
    }
  }
  ASSERT_NE(found, nullptr) << result->report.ToText();
  for (const std::string& part : c.before_has) {
    EXPECT_TRUE(absl::StrContains(found->before_text, part)) << found->before_text;
    EXPECT_TRUE(absl::StrContains(result->report.ToText(), absl::StrCat("    - ", part)))
        << result->report.ToText();
  }
  for (const std::string& part : c.after_has) {
    EXPECT_TRUE(absl::StrContains(found->after_text, part)) << found->after_text;
  }
  EXPECT_TRUE(absl::StrContains(result->report.ToText(), "    + ")) << result->report.ToText();
  EXPECT_TRUE(absl::StrContains(result->report.ToJson(), "\"before\": "))
      << result->report.ToJson();
}

INSTANTIATE_TEST_SUITE_P(RestructuringAdapters, RestructureTest,
                         ::testing::ValuesIn(RestructuringAdapters()), NameOf<RestructureCase>);

// Nodes only rebound, or whose attributes alone change, carry no text.
TEST(ConverterTest, RebindingAdaptersReportNoText) {
  onnx::ModelProto model = Model(R"(<ir_version: 6, opset_import: ["" : 11]>
g (float[N,4] X) => (float[N,4] Y) {
  [relu] R = Relu(X)
  [neg] Y = Neg(R)
})");
  absl::StatusOr<ConversionResult> result = ConvertModel(model, To(14));
  ASSERT_TRUE(result.ok()) << result.status();
  for (const StepReport& step : result->report.steps) {
    for (const NodeChange& change : step.nodes) {
      EXPECT_EQ(change.before_text, "") << change.node;
      EXPECT_EQ(change.after_text, "") << change.node;
    }
  }
  EXPECT_FALSE(absl::StrContains(result->report.ToJson(), "\"before\""));
}

TEST(ConverterTest, DowngradeThatKeepsMeaningSucceeds) {
  onnx::ModelProto model = Model(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] A, float[2] B) => (float[2] Y) { [add] Y = Add(A, B) })");
  absl::StatusOr<ConversionResult> result = ConvertModel(model, To(7));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->model.opset_import(0).version(), 7);
  EXPECT_EQ(result->model.ir_version(), 8);  // never lowered
}

struct RefusalCase {
  std::string name;
  std::string model;
  int64_t target;
  absl::StatusCode code;
  std::string message;
};

// Prints a case by its name (in the failures of parameterized tests).
void PrintTo(const RefusalCase& c, std::ostream* os) { *os << c.name; }

std::vector<RefusalCase> Refusals() {
  return {
      {"type_not_in_older_version_without_exact_cast",
       "<ir_version: 8, opset_import: [\"\" : 14]>\n"
       "g (int64[2] X) => (int64[2] Y) { [relu] Y = Relu(X) }",
       13, absl::StatusCode::kFailedPrecondition,
       "step 14 -> 13: main \xE2\x80\xBA node 'relu' (Relu-14): the inputs bound to T are "
       "tensor(int64), and no type Relu-13 allows for T holds their values exactly: a cast to "
       "tensor(double) would hold integers only up to \xC2\xB1" "2^53"},
      {"semantic_change_needs_constants",
       "<ir_version: 9, opset_import: [\"\" : 20]>\n"
       "g (float[2,4,3] X, float[2] S, float[2] B) => (float[2,4,3] Y) {\n"
       "  [gn] Y = GroupNormalization <num_groups = 2> (X, S, B)\n}",
       21, absl::StatusCode::kFailedPrecondition,
       "step 20 -> 21: main \xE2\x80\xBA node 'gn' (GroupNormalization-18): input 'S' is not a "
       "float constant, so it cannot be rewritten per channel"},
      {"softmax_axis_of_unknown_rank",
       "<ir_version: 7, opset_import: [\"\" : 13]>\n"
       "g (float X) => (float Y) { [sm] Y = Softmax <axis = 1> (X) }",
       12, absl::StatusCode::kFailedPrecondition,
       "step 13 -> 12: main \xE2\x80\xBA node 'sm' (Softmax-13): the rank of input 'X' is unknown"},
      {"before_introduction",
       "<ir_version: 8, opset_import: [\"\" : 14]>\n"
       "g (float[2,2] X) => (float[2,2] Y) { [trilu] Y = Trilu(X) }",
       13, absl::StatusCode::kFailedPrecondition,
       "step 14 -> 13: main \xE2\x80\xBA node 'trilu' (Trilu-14): Trilu does not exist before opset 14"},
      {"float8_cast_below_19",
       "<ir_version: 9, opset_import: [\"\" : 19]>\n"
       "g (float[2] X) => (float8e4m3fn[2] Y) { [cast] Y = Cast <to = 17, saturate = 0> (X) }",
       18, absl::StatusCode::kFailedPrecondition,
       "'Y' is tensor(float8e4m3fn), which Cast-13 does not allow for T2"},
      {"target_out_of_range",
       "<ir_version: 8, opset_import: [\"\" : 14]>\ng (float X) => (float Y) { Y = Relu(X) }", 28,
       absl::StatusCode::kInvalidArgument, "target opset 28 does not exist (1 to 27)"},
      {"invalid_input",
       "<ir_version: 8, opset_import: [\"\" : 14]>\ng (float X) => (float Y) { Y = Relu(Q) }", 15,
       absl::StatusCode::kInvalidArgument, "the input model is invalid"},
  };
}

class RefusalTest : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(RefusalTest, NamesTheStepNodeAndReason) {
  const RefusalCase& c = GetParam();
  absl::StatusOr<ConversionResult> result = ConvertModel(Model(c.model), To(c.target));
  ASSERT_FALSE(result.ok()) << c.name;
  EXPECT_EQ(result.status().code(), c.code) << c.name << ": " << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), c.message))
      << c.name << ":\n  got      " << result.status().message() << "\n  expected " << c.message;
}

INSTANTIATE_TEST_SUITE_P(Refusals, RefusalTest, ::testing::ValuesIn(Refusals()),
                         NameOf<RefusalCase>);

TEST(ConverterTest, DryRunListsEveryNodeThatCannotBeConverted) {
  onnx::ModelProto model = Model(
      "<ir_version: 8, opset_import: [\"\" : 14]>\n"
      "g (float[3,3] X) => (float[3,3] Y) {\n"
      "  [a] A = Trilu(X)\n  [r] R = Relu(A)\n  [b] Y = Trilu(R)\n}");
  ConvertOptions options;
  options.target_opset = 13;
  options.dry_run = true;
  absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.nodes_refused, 2);
  EXPECT_EQ(result->report.nodes_converted, 1);  // Relu 14 -> 13
  std::string text = result->report.ToText();
  EXPECT_TRUE(absl::StrContains(text, "a: CANNOT CONVERT: step 14 -> 13: main \xE2\x80\xBA node 'a'"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "2 nodes cannot be converted")) << text;
  // Without a dry run the first refusal stops the conversion.
  options.dry_run = false;
  EXPECT_EQ(ConvertModel(model, options).status().code(), absl::StatusCode::kFailedPrecondition);
}

// A plan agrees with the conversion on casts: exact ones are planned, a
// lossy one (or any, with no_casts) is listed as refused.
TEST(ConverterTest, DryRunPlansTheCastsConvertWouldInsert) {
  const struct {
    const char* name;
    const char* graph;
    bool no_casts;
    int refused;
  } cases[] = {
      {"exact", "g (int8[2] A, int8[2] B) => (int8[2] C) { [a] C = Add(A, B) }", false, 0},
      {"exact_with_no_casts", "g (int8[2] A, int8[2] B) => (int8[2] C) { [a] C = Add(A, B) }",
       true, 1},
      {"lossy", "g (int64[2] X) => (int64[2] Y) { [r] Y = Relu(X) }", false, 1},
  };
  for (const auto& c : cases) {
    onnx::ModelProto model =
        Model(absl::StrCat("<ir_version: 8, opset_import: [\"\" : 14]>\n", c.graph));
    ConvertOptions options;
    options.target_opset = 13;
    options.no_casts = c.no_casts;
    options.dry_run = true;
    absl::StatusOr<ConversionResult> plan = ConvertModel(model, options);
    ASSERT_TRUE(plan.ok()) << c.name << ": " << plan.status();
    EXPECT_EQ(plan->report.nodes_refused, c.refused) << c.name;
    options.dry_run = false;
    EXPECT_EQ(ConvertModel(model, options).ok(), c.refused == 0) << c.name;
  }
}

TEST(ConverterTest, StopsWhenAsked) {
  onnx::ModelProto model = Model(
      "<ir_version: 8, opset_import: [\"\" : 12]>\n"
      "g (float[3] X) => (float[3] Y) { [r] Y = Relu(X) }");
  ConvertOptions options;
  options.target_opset = 17;
  int polls = 0;
  options.should_stop = [&polls] { return ++polls > 2; };
  absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "step 14 -> 15")) << result.status();
  options.should_stop = [] { return false; };
  EXPECT_TRUE(ConvertModel(model, options).ok());
}

TEST(ConverterTest, SubgraphsAndFunctionsConvertWithTheirParent) {
  onnx::ModelProto model = Model(R"(<ir_version: 8, opset_import: ["" : 13, "local" : 1]>
g (bool C, float[2] X) => (float[2] Y) {
  [if] Y = If <then_branch = t () => (float[2] A) { [inner] A = Relu(X) },
               else_branch = e () => (float[2] B) { B = local.Twice(X) }> (C)
}
<domain: "local", opset_import: ["" : 13]>
Twice (I) => (O) {
  [f_relu] O = Relu(I)
})");
  absl::StatusOr<ConversionResult> result = ConvertModel(model, To(14));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->model.functions(0).opset_import(0).version(), 14);
  std::vector<std::string> graphs;
  for (const VersionBump& bump : result->report.steps[0].bumps) graphs.push_back(bump.graph);
  EXPECT_EQ(graphs, (std::vector<std::string>{"main/then_branch of 'if' (If)",
                                              "function 'local.Twice'"}));
  EXPECT_EQ(result->model.functions_size(), 1);  // kept, not inlined
}

// An adapter inside a function body that needs a constant input gets a
// Constant node before its node (a function holds no initializers), and
// one that needs a constant reads it from a Constant node of the body.
struct FunctionBodyCase {
  std::string name;
  int64_t from;
  int64_t to;
  std::string body;      // the function's nodes
  std::string expected;  // the converted function, as printed
};

class FunctionBodyTest : public ::testing::TestWithParam<FunctionBodyCase> {};

TEST_P(FunctionBodyTest, ConstantsLiveInTheBody) {
  const FunctionBodyCase& c = GetParam();
  onnx::ModelProto model = Model(absl::StrCat(
      "<ir_version: 8, opset_import: [\"\" : ", c.from, ", \"local\" : 1]>\n",
      "g (float[2,3] X) => (float[2,3] Y) { Y = local.F(X) }\n",
      "<domain: \"local\", opset_import: [\"\" : ", c.from, "]>\n", "F (I) => (O) {\n",
      c.body, "}\n"));
  absl::StatusOr<ConversionResult> result = ConvertModel(model, To(c.to));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(PrintFunctionText(result->model.functions(0)), c.expected);
  EXPECT_EQ(result->report.steps[0].validation, StepValidation::kIncremental);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FunctionBodyTest,
    ::testing::Values(
        FunctionBodyCase{"AxesUp", 12, 13,
                         "  U = Unsqueeze <axes = [0]> (I)\n  O = Squeeze <axes = [0]> (U)\n",
                         "<\n  domain: \"local\",\n  opset_import: [\"\" : 13]\n>\n"
                         "F (I) => (O) {\n"
                         "  Unsqueeze__0 = Constant <value = int64[1] {0}> ()\n"
                         "  U = Unsqueeze(I, Unsqueeze__0)\n"
                         "  Squeeze__0 = Constant <value = int64[1] {0}> ()\n"
                         "  O = Squeeze(U, Squeeze__0)\n}\n"},
        FunctionBodyCase{"AxesDown", 13, 12,
                         "  Z = Constant <value = int64[1] {0}> ()\n"
                         "  U = Unsqueeze(I, Z)\n  O = Squeeze(U, Z)\n",
                         "<\n  domain: \"local\",\n  opset_import: [\"\" : 12]\n>\n"
                         "F (I) => (O) {\n"
                         "  Z = Constant <value = int64[1] {0}> ()\n"
                         "  U = Unsqueeze <axes = [0]> (I)\n"
                         "  O = Squeeze <axes = [0]> (U)\n}\n"}),
    [](const ::testing::TestParamInfo<FunctionBodyCase>& info) { return info.param.name; });

TEST(ConverterTest, MinIrVersionForOpset) {
  const std::pair<int64_t, int64_t> cases[] = {{1, 3}, {8, 3}, {9, 4}, {11, 6}, {13, 7},
                                               {15, 8}, {18, 8}, {20, 9}, {21, 10}, {27, 13}};
  for (auto [opset, ir] : cases) EXPECT_EQ(MinIrVersionForOpset(opset), ir) << opset;
}

}  // namespace
}  // namespace onnxconvert::converter

namespace onnxconvert::converter {
namespace {

// A chain of `blocks` Relu -> Unsqueeze -> Squeeze blocks in ONNX text, at
// opset 12 (axes are attributes), with a Clip (min and max attributes
// until 11) every 100 blocks for downgrades.
std::string ChainText(int blocks) {
  std::string text =
      R"(<ir_version: 7, opset_import: ["" : 12]> g (float[N,8] x0) => (float[N,8] y) {)";
  for (int b = 0; b < blocks; ++b) {
    absl::StrAppend(&text, "\n  [r", b, "] a", b, " = Relu(x", b, ")");
    absl::StrAppend(&text, "\n  [u", b, "] u", b, " = Unsqueeze <axes = [0]> (a", b, ")");
    absl::StrAppend(&text, "\n  [s", b, "] x", b + 1, " = Squeeze <axes = [0]> (u", b, ")");
  }
  absl::StrAppend(&text, "\n  y = Identity(x", blocks, ")\n}");
  return text;
}

// A large model's steps, validated node by node (on one thread, and from
// kSideBySideNodes on two), must give the result and every type that the
// whole model's validation gives.
class LargeModelTest : public ::testing::TestWithParam<int> {};

TEST_P(LargeModelTest, ValidatesNodeByNodeAlikeTheWholeModel) {
  const int blocks = GetParam();
  onnx::ModelProto model = Model(ChainText(blocks));
  for (int64_t target : {13, 21, 10}) {
    ConvertOptions options = To(target);
    options.cross_check = true;
    absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
    ASSERT_TRUE(result.ok()) << target << ": " << result.status();
    int incremental = 0;
    for (const StepReport& step : result->report.steps) {
      incremental += step.validation == StepValidation::kIncremental;
      EXPECT_NE(step.validation, StepValidation::kOk) << target << ": step " << step.from_opset;
    }
    EXPECT_GT(incremental, 0) << target;
    if (target == 13) {
      // The step validates the nodes it rewrote (axes to inputs), not the
      // whole graph: the Relu and Identity nodes are only rebound.
      EXPECT_EQ(result->report.steps[0].nodes_validated, 2 * blocks);
      ASSERT_EQ(result->report.steps[0].bumps.size(), 2u);
      EXPECT_EQ(result->report.steps[0].bumps[0].nodes + result->report.steps[0].bumps[1].nodes,
                blocks + 1);
      // Nodes changed alike are one entry each: Unsqueeze, Squeeze.
      ASSERT_EQ(result->report.steps[0].nodes.size(), 2u);
      EXPECT_EQ(result->report.steps[0].nodes[0].NodeCount(), blocks);
    }
    ConvertOptions full = To(target);
    full.full_validation = true;
    absl::StatusOr<ConversionResult> whole = ConvertModel(model, full);
    ASSERT_TRUE(whole.ok()) << whole.status();
    EXPECT_EQ(result->model.SerializeAsString(), whole->model.SerializeAsString()) << target;
  }
}

// 3,000 blocks validate on one thread; kSideBySideNodes / 2 blocks rewrite
// kSideBySideNodes nodes, validated on two.
INSTANTIATE_TEST_SUITE_P(OneAndTwoThreads, LargeModelTest,
                         ::testing::Values(3000, static_cast<int>(kSideBySideNodes / 2)));

}  // namespace
}  // namespace onnxconvert::converter

namespace onnxconvert::converter {
namespace {

// A node changed inside a subgraph is validated there, with the enclosing
// graph's values in scope, not by validating the whole model again.
TEST(ConverterTest, NodesChangedInSubgraphsAreValidatedIncrementally) {
  onnx::ModelProto model = Model(R"(<ir_version: 8, opset_import: ["" : 14]>
g (bool C, float[2] X) => (float[2] Y) {
  [if] Y = If <then_branch = t () => (float[2] A) { [inner] A = Relu(X) },
               else_branch = e () => (float[2] B) { [other] B = Neg(X) }> (C)
})");
  ConvertOptions options = To(13);
  options.cross_check = true;
  absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->report.steps.size(), 1u);
  const StepReport& step = result->report.steps[0];
  EXPECT_EQ(step.validation, StepValidation::kIncremental)
      << StepValidationName(step.validation);
  EXPECT_EQ(step.nodes_validated, 1);  // Relu-14 -> 13 in then_branch
}

}  // namespace
}  // namespace onnxconvert::converter
