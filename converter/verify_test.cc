// Verification by evaluation (ConvertOptions::verify): passes on correct
// conversions, is skipped with a reason where the evaluator cannot run the
// model, and blames exactly the step and node of an injected fault.

#include <cstdlib>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "converter/converter.h"
#include "converter/verify_testing.h"
#include "eval/data_sets.h"
#include "gtest/gtest.h"
#include "tests/model_text.h"

namespace onnxconvert::converter {
namespace {

ConvertOptions Verify(int64_t opset, int sets) {
  ConvertOptions options;
  options.target_opset = opset;
  options.verify = sets;
  return options;
}

// A conversion and what its verification must say.
struct Case {
  const char* name;
  const char* model;
  int64_t target;
  // A piece of the report's verification text (or of the error).
  const char* expect;
  bool converts = true;
  // A piece of the text of a step with its verification line ("*" stands
  // for the rest of a line), or "".
  const char* step_expect = "";
};

// Whether `text` contains `pattern`, whose "*" matches the rest of a line.
bool ContainsLinePattern(absl::string_view text, absl::string_view pattern) {
  std::vector<absl::string_view> pieces = absl::StrSplit(pattern, '*');
  for (size_t at = text.find(pieces[0]); at != absl::string_view::npos;
       at = text.find(pieces[0], at + 1)) {
    size_t next = at + pieces[0].size();
    bool all = true;
    for (size_t i = 1; all && i < pieces.size(); ++i) {
      size_t line_end = text.find('\n', next);
      if (line_end == absl::string_view::npos) line_end = text.size();
      all = text.substr(line_end, pieces[i].size()) == pieces[i];
      next = line_end + pieces[i].size();
    }
    if (all) return true;
  }
  return false;
}

constexpr Case kCases[] = {
    {"relu_up", R"(<ir_version: 7, opset_import: ["" : 11]>
g (float[N,4] X) => (float[N,4] Y) {
  [relu] R = Relu(X)
  [neg] Y = Neg(R)
})",
     14, "verified per step: 3 input sets, 1 outputs each (end to end over 0 changed nodes)",
     true,
     "step 12 -> 13: 2 nodes*\n  verified: no node to evaluate (2 rebound nodes compute as in "
     "the original: same kernel, version-blind)"},
    // Relu and Clip both rebound at 13: Relu's kernel is the same at 6 and
    // 13 and never asks for the version, so it computes what the original
    // computed; Clip's asks (its bounds were attributes before 11), so it
    // is evaluated.
    {"rebound_version_blind", R"(<ir_version: 7, opset_import: ["" : 12]>
g (float[N,4] X) => (float[N,4] Y) <float lo = {-0.5}, float hi = {0.5}> {
  [relu] R = Relu(X)
  [clip] Y = Clip(R, lo, hi)
})",
     13, "(1 rebound nodes compute as in the original: same kernel, version-blind)", true,
     "step 12 -> 13: 2 nodes*\n  verified 1 nodes on 3 input sets, 1 values compared"},
    {"sub_broadcast_down", R"(<ir_version: 7, opset_import: ["" : 8]>
g (float[N,4] X, float[4] B) => (float[N,4] Y) {
  [relu] R = Relu(X)
  [sub] S = Sub(R, B)
  [neg] Y = Neg(S)
})",
     6, "verified per step: 3 input sets",
     true, "step 7 -> 6: 1 nodes*\n  verified 1 nodes on 3 input sets, 1 values compared"},
    {"split_down", R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[N,4] X) => (float[N,1] A, float[N,3] B) <int64[2] parts = {1, 3}> {
  [split] A, B = Split<axis: int = 1>(X, parts)
})",
     11, "verified per step: 3 input sets, 2 outputs each",
     true, "step 13 -> 12: 1 nodes*\n  verified 1 nodes on 3 input sets, 2 values compared"},
    {"squeeze_down", R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[N,1,4] X) => (float[N,4] Y) <int64[1] axes = {1}> {
  [squeeze] Y = Squeeze(X, axes)
})",
     12, "verified per step: 3 input sets",
     true, "step 13 -> 12: 1 nodes*\n  verified 1 nodes on 3 input sets, 1 values compared"},
    {"unsqueeze_down", R"(<ir_version: 7, opset_import: ["" : 13]>
g (float[N,4] X) => (float[1,N,4] Y) <int64[1] axes = {0}> {
  [unsq] Y = Unsqueeze(X, axes)
})",
     11, "verified per step: 3 input sets",
     true, "step 13 -> 12: 1 nodes*\n  verified 1 nodes on 3 input sets, 1 values compared"},
    // Gelu-20 expanded for 19 into 8 nodes that round differently: the
    // step's nodes are evaluated; the value G differs from the original's
    // by a few ulps, so the end-to-end comparison evaluates its producer
    // and the Neg after it, and nothing else.
    {"gelu_down", R"(<ir_version: 9, opset_import: ["" : 20]>
g (float[N,4] X) => (float[N,4] Y) {
  [relu] R = Relu(X)
  [gelu] G = Gelu(R)
  [neg] Y = Neg(G)
})",
     19, "(end to end over 2 changed nodes)", true,
     "step 20 -> 19: 1 nodes*\n  verified 8 nodes on 3 input sets, 1 values compared"},
    // The same few ulps, multiplied by 10000 inside a Sin: beyond the
    // tolerance end to end, but no more than the original moves when G
    // moves by the difference the step showed — the model amplifies
    // rounding, and the report says so.
    {"gelu_amplified", R"(<ir_version: 9, opset_import: ["" : 20]>
g (float[N,4] X) => (float[N,4] Y) <float k = {10000.0}> {
  [gelu] G = Gelu(X)
  [scale] S = Mul(G, k)
  [sin] Y = Sin(S)
})",
     19, "within twice the", true,
     "step 20 -> 19: 1 nodes*\n  verified 8 nodes on 3 input sets, 1 values compared"},
    // Clip rebound inside an If branch at 11: the If node is the one
    // evaluated (found by the report's graph path), on the recorded
    // condition and R; Relu, rebound at no step, is not.
    {"if_branch_down", R"(<ir_version: 7, opset_import: ["" : 12]>
g (bool c, float[N,4] X) => (float[N,4] Y) <float lo = {-0.5}, float hi = {0.5}> {
  [relu] R = Relu(X)
  [if] Y = If(c) <then_branch = t () => (float[N,4] a) { [clip] a = Clip(R, lo, hi) },
                  else_branch = e () => (float[N,4] b) { [neg] b = Neg(R) }>
})",
     10, "verified per step: 3 input sets", true,
     "step 12 -> 11: 1 nodes*\n  verified 1 nodes on 3 input sets, 1 values compared"},
    {"vendor_op_not_evaluable", R"(<ir_version: 7, opset_import: ["" : 13, "com.vendor" : 1]>
g (float[N,4] X) => (float[N,4] Y) {
  [fancy] F = com.vendor.Fancy(X)
  [relu] Y = Relu(F)
})",
     14, "not verified: the original cannot be evaluated"},
};

// The model of the case named `name`.
const char* ModelOf(absl::string_view name) {
  for (const Case& c : kCases) {
    if (c.name == name) return c.model;
  }
  return "";
}

class VerifyTest : public ::testing::TestWithParam<Case> {};

TEST_P(VerifyTest, ReportsWhatWasVerified) {
  const Case& c = GetParam();
  absl::StatusOr<ConversionResult> result =
      ConvertModel(testing::ModelFromText(c.model), Verify(c.target, 3));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->report.verification.has_value());
  std::string text = result->report.ToText();
  EXPECT_TRUE(absl::StrContains(text, c.expect)) << text;
  EXPECT_TRUE(ContainsLinePattern(text, c.step_expect)) << text;
  EXPECT_TRUE(absl::StrContains(result->report.ToJson(), "\"verification\"")) << text;
}

INSTANTIATE_TEST_SUITE_P(Cases, VerifyTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(VerifyTest, OffByDefault) {
  ConvertOptions options;
  options.target_opset = 14;
  absl::StatusOr<ConversionResult> result =
      ConvertModel(testing::ModelFromText(ModelOf("relu_up")), options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->report.verification.has_value());
  EXPECT_FALSE(absl::StrContains(result->report.ToJson(), "verification"));
}

// The reason names the op the evaluator lacks.
TEST(VerifyTest, SkipNamesTheMissingKernel) {
  absl::StatusOr<ConversionResult> result =
      ConvertModel(testing::ModelFromText(ModelOf("vendor_op_not_evaluable")), Verify(14, 2));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(absl::StrContains(result->report.verification->skipped, "com.vendor.Fancy"))
      << result->report.verification->skipped;
}

// --verify-inputs: the sets of a folder in the backend test layout.
TEST(VerifyTest, UsesTheGivenInputSets) {
  onnx::ModelProto model = testing::ModelFromText(ModelOf("sub_broadcast_down"));
  std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/verify_inputs");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::vector<eval::NamedValue>> inputs =
        eval::RandomInputs(model.graph(), {}, rng);
    ASSERT_TRUE(inputs.ok()) << inputs.status();
    ASSERT_TRUE(
        eval::WriteValues(absl::StrCat(dir, "/test_data_set_", i), "input", *inputs).ok());
  }
  ConvertOptions options = Verify(6, 0);
  options.verify_inputs = dir;
  absl::StatusOr<ConversionResult> result = ConvertModel(model, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.verification->sets, 2) << result->report.ToText();

  options.verify_inputs = absl::StrCat(dir, "/absent");
  EXPECT_EQ(ConvertModel(model, options).status().code(), absl::StatusCode::kInvalidArgument);
}

// A fault in one adapter's output is blamed on exactly its step and node.
struct FaultCase {
  const char* name;
  const char* model;
  int64_t target;
  const char* adapter;
  const char* blamed;  // pieces of the error, in order
  const char* node;
  const char* detail;  // how it shows
};

constexpr FaultCase kFaults[] = {
    {"sub_operands", R"(<ir_version: 7, opset_import: ["" : 8]>
g (float[2,4] X, float[2,4] B) => (float[2,4] Y) {
  [relu] R = Relu(X)
  [sub] S = Sub(R, B)
  [neg] Y = Neg(S)
})",
     6, "Sub 7->6", "step 7 -> 6",
     "graph 'main', node 'sub' (Sub; Sub 7 -> 6 by adapter 'Sub 7->6: numpy to legacy "
     "broadcasting'): output 'S' differs",
     "max abs error"},
    // Swapped, the operands no longer broadcast: the step's model fails.
    {"sub_broadcast_operands", kCases[2].model, 6, "Sub 7->6", "step 7 -> 6",
     "node 'sub' (Sub-6)", "where the original runs"},
};

class FaultTest : public ::testing::TestWithParam<FaultCase> {};

TEST_P(FaultTest, BlamesTheStepAndNode) {
  const FaultCase& c = GetParam();
  ScopedFaultInjection fault(c.adapter);
  absl::StatusOr<ConversionResult> result =
      ConvertModel(testing::ModelFromText(c.model), Verify(c.target, 2));
  ASSERT_FALSE(result.ok()) << result->report.ToText();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  std::string message(result.status().message());
  EXPECT_TRUE(absl::StrContains(message, absl::StrCat("verification failed at ", c.blamed, ":")))
      << message;
  EXPECT_TRUE(absl::StrContains(message, c.node)) << message;
  EXPECT_TRUE(absl::StrContains(message, "input set 'random set 0")) << message;
  EXPECT_TRUE(absl::StrContains(message, c.detail)) << message;
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultTest, ::testing::ValuesIn(kFaults),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace onnxconvert::converter
