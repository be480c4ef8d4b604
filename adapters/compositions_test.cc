// Compositions: downgrades written as several older ops where the target
// cannot take what the node uses directly, through the converter. Each case
// checks the converted nodes and the constants the composition added (the
// axis sizes, reversed indices, infinities it computes with).

#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "adapters/adapter_helpers.h"
#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

// A case and the constants of the converted graph, "name = {values}" (a
// scalar without braces) joined by "; ".
struct CompositionCase {
  ConversionCase conversion;
  std::string constants;
};

std::string ConstantsText(const onnx::GraphProto& graph) {
  std::string text;
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    std::string values;
    if (std::optional<std::vector<int64_t>> ints = IntValues(tensor)) {
      values = absl::StrJoin(*ints, ", ");
    } else if (std::optional<std::vector<double>> floats = FloatValues(tensor)) {
      values = absl::StrJoin(*floats, ", ");
    } else {
      // float16 as its bits.
      std::vector<std::string> bits;
      for (int32_t v : tensor.int32_data()) bits.push_back(absl::StrFormat("0x%04x", v));
      values = absl::StrCat("float16 ", absl::StrJoin(bits, ", "));
    }
    absl::StrAppend(&text, text.empty() ? "" : "; ", tensor.name(), " = ",
                    tensor.dims_size() == 0 ? values : absl::StrCat("{", values, "}"));
  }
  return text;
}

void ExpectComposition(const CompositionCase& test) {
  ConversionCase c = test.conversion;
  c.all_nodes = true;
  ExpectConversion(c);
  if (!c.error.empty()) return;
  absl::StatusOr<converter::ConversionResult> result = ConvertTo(CaseModel(c), c.to);
  ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
  EXPECT_EQ(ConstantsText(result->model.graph()), test.constants) << c.name;
}

// Prints a case by its name (in the failures of parameterized tests).
void PrintTo(const CompositionCase& c, std::ostream* os) { *os << c.conversion.name; }

// Each case of the tables below is a test named after it.
class CompositionCaseTest : public ::testing::TestWithParam<CompositionCase> {};

TEST_P(CompositionCaseTest, Converts) { ExpectComposition(GetParam()); }

// The test name of a case: its conversion's name (CaseName).
std::string CompositionName(const ::testing::TestParamInfo<CompositionCase>& info) {
  return CaseName(::testing::TestParamInfo<ConversionCase>(info.param.conversion, info.index));
}

std::vector<CompositionCase> ClipBoundsKnownAtRunTime() {
  return {
      {{"both_bounds_become_max_and_min", 11, 10,
        "g (float[4] X, float lo, float hi) => (float[4] Y) { [c] Y = Clip(X, lo, hi) }",
        "[c] Y__0 = Max(X, lo); [c__0] Y = Min(Y__0, hi)", ""},
       ""},
      {{"min_only_becomes_max", 13, 10,
        "g (float[4] X, float lo) => (float[4] Y) { [c] Y = Clip(X, lo) }", "[c] Y = Max(X, lo)",
        ""},
       ""},
      {{"max_only_becomes_min", 11, 10,
        "g (float[4] X, float hi) => (float[4] Y) { [c] Y = Clip(X, \"\", hi) }",
        "[c] Y = Min(X, hi)", ""},
       ""},
      {{"dynamic_min_constant_max", 11, 10,
        "g (float[4] X, float lo) => (float[4] Y) <float hi = {6.0}> { [c] Y = Clip(X, lo, hi) }",
        "[c__0] c_Max__0 = Max(X, lo); [c] Y = Clip <max = 6.0> (c_Max__0)", ""},
       "hi = 6"},
      {{"constant_min_dynamic_max", 11, 10,
        "g (float[4] X, float hi) => (float[4] Y) <float lo = {0.0}> { [c] Y = Clip(X, lo, hi) }",
        "[c] Y__0 = Clip <min = 0.0> (X); [c__0] Y = Min(Y__0, hi)", ""},
       "lo = 0"},
      {{"scalar_bounds_below_8_refused", 11, 7,
        "g (float[4] X, float lo) => (float[4] Y) { [c] Y = Clip(X, lo) }", "",
        "Max-6 does not broadcast"},
       ""},
  };
}

INSTANTIATE_TEST_SUITE_P(ClipBoundsKnownAtRunTime, CompositionCaseTest,
                         ::testing::ValuesIn(ClipBoundsKnownAtRunTime()), CompositionName);

// ReduceMean's nodes after the ReduceSum into Y__0: the sum over the count
// of the elements reduced (X's size over Y__0's; 1 for an empty Y__0).
constexpr char kMeanOfTheSum[] =
    "[r__1] r_Size__0 = Size(X); "
    "[r__2] r_Size__1 = Size(Y__0); [r__3] r_Equal__0 = Equal(r_Size__1, r__0); "
    "[r__4] r_Cast__0 = Cast <to = 7> (r_Equal__0); "
    "[r__5] r_Add__0 = Add(r_Size__1, r_Cast__0); "
    "[r__6] r_Div__0 = Div(r_Size__0, r_Add__0); "
    "[r__7] r_Cast__1 = Cast <to = 1> (r_Div__0); [r__8] Y = Div(Y__0, r_Cast__1)";

std::vector<CompositionCase> ReductionAxesKnownAtRunTime() {
  return {
      {{"mean_is_sum_over_count", 18, 17,
        "g (float[2,3,4] X, int64[1] A) => (float[2,1,4] Y) { [r] Y = ReduceMean(X, A) }",
        absl::StrCat("[r] Y__0 = ReduceSum(X, A); ", kMeanOfTheSum),
        ""},
       "r__0 = 0"},
      {{"mean_noop_with_empty_axes", 18, 17,
        "g (float[2,3] X, int64[N] A) => (float[M,K] Y) "
        "{ [r] Y = ReduceMean <noop_with_empty_axes = 1> (X, A) }",
        absl::StrCat("[r] Y__0 = ReduceSum <noop_with_empty_axes = 1> (X, A); ", kMeanOfTheSum),
        ""},
       "r__0 = 0"},
      {{"sum_square", 18, 13,
        "g (float[2,3] X, int64[1] A) => (float[2] Y) "
        "{ [r] Y = ReduceSumSquare <keepdims = 0> (X, A) }",
        "[r__0] r_Mul__0 = Mul(X, X); [r] Y = ReduceSum <keepdims = 0> (r_Mul__0, A)", ""},
       ""},
      {{"l1_on_int64", 18, 17,
        "g (int64[2,3] X, int64[1] A) => (int64[2,1] Y) { [r] Y = ReduceL1(X, A) }",
        "[r__0] r_Abs__0 = Abs(X); [r] Y = ReduceSum(r_Abs__0, A)", ""},
       ""},
      {{"l2", 18, 17, "g (double[2,3] X, int64[1] A) => (double[2,1] Y) { [r] Y = ReduceL2(X, A) }",
        "[r__0] r_Mul__0 = Mul(X, X); [r] Y__0 = ReduceSum(r_Mul__0, A); [r__1] Y = Sqrt(Y__0)",
        ""},
       ""},
      {{"log_sum", 18, 17,
        "g (float[2,3] X, int64[1] A) => (float[2,1] Y) { [r] Y = ReduceLogSum(X, A) }",
        "[r] Y__0 = ReduceSum(X, A); [r__0] Y = Log(Y__0)", ""},
       ""},
      {{"log_sum_exp", 18, 17,
        "g (float[2,3] X, int64[1] A) => (float[2,1] Y) { [r] Y = ReduceLogSumExp(X, A) }",
        "[r__0] r_Exp__0 = Exp(X); [r] Y__0 = ReduceSum(r_Exp__0, A); [r__1] Y = Log(Y__0)", ""},
       ""},
      {{"l2_noop_refused", 18, 17,
        "g (float[2,3] X, int64[N] A) => (float[M,K] Y) "
        "{ [r] Y = ReduceL2 <noop_with_empty_axes = 1> (X, A) }",
        "", "ReduceL2 then returns X unchanged for empty axes"},
       ""},
      {{"log_sum_on_int_refused", 18, 17,
        "g (int32[2,3] X, int64[1] A) => (int32[2,1] Y) { [r] Y = ReduceLogSum(X, A) }", "",
        "ReduceLogSum through ReduceSum-13 needs a float type; 'X' is not float"},
       ""},
      {{"max_axis_by_axis", 18, 17,
        "g (float[2,3] X, int64[1] A) => (float[2,1] Y) { [r] Y = ReduceMax(X, A) }",
        "[r__4] r_Unsqueeze__0 = Unsqueeze(A, r__3); "
        "[r__5] r_Equal__0 = Equal(r_Unsqueeze__0, r__1); "
        "[r__6] r_Equal__1 = Equal(r_Unsqueeze__0, r__2); "
        "[r__7] r_Or__0 = Or(r_Equal__0, r_Equal__1); "
        "[r__8] r_Cast__0 = Cast <to = 7> (r_Or__0); "
        "[r__10] r_ReduceSum__0 = ReduceSum <keepdims = 0> (r_Cast__0, r__9); "
        "[r__11] r_Cast__1 = Cast <to = 9> (r_ReduceSum__0); [r__12] r_Size__0 = Size(A); "
        "[r__13] r_Equal__2 = Equal(r_Size__0, r__0); "
        "[r__14] r_Or__1 = Or(r_Cast__1, r_Equal__2); "
        "[r__15] r_ReduceMax__0 = ReduceMax <axes = [0]> (X); "
        "[r__16] r_Concat__0 = Concat <axis = 0> (r_ReduceMax__0, X); "
        "[r__17] r_Gather__0 = Gather(r_Or__1, r__9); "
        "[r__18] r_Cast__2 = Cast <to = 7> (r_Gather__0); "
        "[r__19] r_Sub__0 = Sub(r__3, r_Cast__2); [r__20] r_Shape__0 = Shape(X); "
        "[r__21] r_Gather__1 = Gather(r_Shape__0, r__9); "
        "[r__22] r_Mul__0 = Mul(r_Gather__1, r_Sub__0); "
        "[r__23] r_Add__0 = Add(r__3, r_Mul__0); "
        "[r__24] r_Slice__0 = Slice(r_Concat__0, r_Sub__0, r_Add__0, r__9); "
        "[r__25] r_ReduceMax__1 = ReduceMax <axes = [1]> (r_Slice__0); "
        "[r__26] r_Concat__1 = Concat <axis = 1> (r_ReduceMax__1, r_Slice__0); "
        "[r__27] r_Gather__2 = Gather(r_Or__1, r__3); "
        "[r__28] r_Cast__3 = Cast <to = 7> (r_Gather__2); "
        "[r__29] r_Sub__1 = Sub(r__3, r_Cast__3); [r__30] r_Shape__1 = Shape(r_Slice__0); "
        "[r__31] r_Gather__3 = Gather(r_Shape__1, r__3); "
        "[r__32] r_Mul__1 = Mul(r_Gather__3, r_Sub__1); "
        "[r__33] r_Add__1 = Add(r__3, r_Mul__1); "
        "[r__34] r_Slice__1 = Slice(r_Concat__1, r_Sub__1, r_Add__1, r__3); "
        "[r] Y = Identity(r_Slice__1)",
        ""},
       "r__0 = 0; r__1 = {0, 1}; r__2 = {-2, -1}; r__3 = {1}; r__9 = {0}"},
      {{"prod_without_keepdims_drops_axes", 18, 13,
        "g (int32[2,3] X, int64[1] A) => (int32[2] Y) "
        "{ [r] Y = ReduceProd <keepdims = 0, noop_with_empty_axes = 1> (X, A) }",
        "[r__4] r_Unsqueeze__0 = Unsqueeze(A, r__3); "
        "[r__5] r_Equal__0 = Equal(r_Unsqueeze__0, r__1); "
        "[r__6] r_Equal__1 = Equal(r_Unsqueeze__0, r__2); "
        "[r__7] r_Or__0 = Or(r_Equal__0, r_Equal__1); "
        "[r__8] r_Cast__0 = Cast <to = 7> (r_Or__0); "
        "[r__10] r_ReduceSum__0 = ReduceSum <keepdims = 0> (r_Cast__0, r__9); "
        "[r__11] r_Cast__1 = Cast <to = 9> (r_ReduceSum__0); "
        "[r__12] r_ReduceProd__0 = ReduceProd <axes = [0]> (X); "
        "[r__13] r_Concat__0 = Concat <axis = 0> (r_ReduceProd__0, X); "
        "[r__14] r_Gather__0 = Gather(r_Cast__1, r__9); "
        "[r__15] r_Cast__2 = Cast <to = 7> (r_Gather__0); "
        "[r__16] r_Sub__0 = Sub(r__3, r_Cast__2); [r__17] r_Shape__0 = Shape(X); "
        "[r__18] r_Gather__1 = Gather(r_Shape__0, r__9); "
        "[r__19] r_Mul__0 = Mul(r_Gather__1, r_Sub__0); "
        "[r__20] r_Add__0 = Add(r__3, r_Mul__0); "
        "[r__21] r_Slice__0 = Slice(r_Concat__0, r_Sub__0, r_Add__0, r__9); "
        "[r__22] r_ReduceProd__1 = ReduceProd <axes = [1]> (r_Slice__0); "
        "[r__23] r_Concat__1 = Concat <axis = 1> (r_ReduceProd__1, r_Slice__0); "
        "[r__24] r_Gather__2 = Gather(r_Cast__1, r__3); "
        "[r__25] r_Cast__3 = Cast <to = 7> (r_Gather__2); "
        "[r__26] r_Sub__1 = Sub(r__3, r_Cast__3); [r__27] r_Shape__1 = Shape(r_Slice__0); "
        "[r__28] r_Gather__3 = Gather(r_Shape__1, r__3); "
        "[r__29] r_Mul__1 = Mul(r_Gather__3, r_Sub__1); "
        "[r__30] r_Add__1 = Add(r__3, r_Mul__1); "
        "[r__31] r_Slice__1 = Slice(r_Concat__1, r_Sub__1, r_Add__1, r__3); "
        "[r__32] r_Shape__2 = Shape(r_Slice__1); [r__33] r_Not__0 = Not(r_Cast__1); "
        "[r__34] r_Compress__0 = Compress <axis = 0> (r_Shape__2, r_Not__0); "
        "[r] Y = Reshape(r_Slice__1, r_Compress__0)",
        ""},
       "r__0 = 0; r__1 = {0, 1}; r__2 = {-2, -1}; r__3 = {1}; r__9 = {0}"},
      {{"min_down_to_10", 18, 10,
        "g (float[2,3] X, int64[1] A) => (float[2,1] Y) { [r] Y = ReduceMin(X, A) }",
        "[r__4] r_Unsqueeze__0 = Unsqueeze <axes = [1]> (A); "
        "[r__5] r_Equal__0 = Equal(r_Unsqueeze__0, r__1); "
        "[r__6] r_Equal__1 = Equal(r_Unsqueeze__0, r__2); "
        "[r__7] r_Or__0 = Or(r_Equal__0, r_Equal__1); "
        "[r__8] r_Cast__0 = Cast <to = 7> (r_Or__0); "
        "[r__10] r_ReduceSum__0 = ReduceSum <keepdims = 0, axes = [0]> (r_Cast__0); "
        "[r__11] r_Cast__1 = Cast <to = 9> (r_ReduceSum__0); [r__12] r_Size__0 = Size(A); "
        "[r__13] r_Equal__2 = Equal(r_Size__0, r__0); "
        "[r__14] r_Or__1 = Or(r_Cast__1, r_Equal__2); "
        "[r__15] r_ReduceMin__0 = ReduceMin <axes = [0]> (X); "
        "[r__16] r_Concat__0 = Concat <axis = 0> (r_ReduceMin__0, X); "
        "[r__17] r_Gather__0 = Gather(r_Or__1, r__9); "
        "[r__18] r_Cast__2 = Cast <to = 7> (r_Gather__0); "
        "[r__19] r_Sub__0 = Sub(r__3, r_Cast__2); [r__20] r_Shape__0 = Shape(X); "
        "[r__21] r_Gather__1 = Gather(r_Shape__0, r__9); "
        "[r__22] r_Mul__0 = Mul(r_Gather__1, r_Sub__0); "
        "[r__23] r_Add__0 = Add(r__3, r_Mul__0); "
        "[r__24] r_Slice__0 = Slice(r_Concat__0, r_Sub__0, r_Add__0, r__9); "
        "[r__25] r_ReduceMin__1 = ReduceMin <axes = [1]> (r_Slice__0); "
        "[r__26] r_Concat__1 = Concat <axis = 1> (r_ReduceMin__1, r_Slice__0); "
        "[r__27] r_Gather__2 = Gather(r_Or__1, r__3); "
        "[r__28] r_Cast__3 = Cast <to = 7> (r_Gather__2); "
        "[r__29] r_Sub__1 = Sub(r__3, r_Cast__3); [r__30] r_Shape__1 = Shape(r_Slice__0); "
        "[r__31] r_Gather__3 = Gather(r_Shape__1, r__3); "
        "[r__32] r_Mul__1 = Mul(r_Gather__3, r_Sub__1); "
        "[r__33] r_Add__1 = Add(r__3, r_Mul__1); "
        "[r__34] r_Slice__1 = Slice(r_Concat__1, r_Sub__1, r_Add__1, r__3); "
        "[r] Y = Identity(r_Slice__1)",
        ""},
       "r__0 = 0; r__1 = {0, 1}; r__2 = {-2, -1}; r__3 = {1}; r__9 = {0}"},
      {{"min_below_10_refused", 18, 9,
        "g (float[2,3] X, int64[1] A) => (float[2,1] Y) { [r] Y = ReduceMin(X, A) }", "",
        "(starts) is not a constant, and Slice-1 needs it as an attribute"},
       ""},
      {{"min_of_unknown_rank_refused", 18, 17,
        "g (float X, int64[1] A) => (float Y) { [r] Y = ReduceMin(X, A) }", "",
        "input 'A' (axes) is not a constant, and ReduceMin-13 needs it as an attribute (the rank "
        "of 'X', which reducing axis by axis needs, is unknown)"},
       ""},
      {{"sum_below_13_axis_by_axis", 13, 12,
        "g (float[2,3] X, int64[N] A) => (float[K] Y) "
        "{ [r] Y = ReduceSum <keepdims = 0> (X, A) }",
        "[r__3] r_Unsqueeze__0 = Unsqueeze <axes = [1]> (A); "
        "[r__4] r_Equal__0 = Equal(r_Unsqueeze__0, r__1); "
        "[r__5] r_Equal__1 = Equal(r_Unsqueeze__0, r__2); "
        "[r__6] r_Or__0 = Or(r_Equal__0, r_Equal__1); "
        "[r__7] r_Cast__0 = Cast <to = 7> (r_Or__0); "
        "[r__8] r_ReduceSum__0 = ReduceSum <keepdims = 0, axes = [0]> (r_Cast__0); "
        "[r__9] r_Cast__1 = Cast <to = 9> (r_ReduceSum__0); [r__10] r_Size__0 = Size(A); "
        "[r__11] r_Equal__2 = Equal(r_Size__0, r__0); "
        "[r__12] r_Or__1 = Or(r_Cast__1, r_Equal__2); "
        "[r__15] r_ReduceSum__1 = ReduceSum <axes = [0]> (X); "
        "[r__16] r_Concat__0 = Concat <axis = 0> (r_ReduceSum__1, X); "
        "[r__17] r_Gather__0 = Gather(r_Or__1, r__14); "
        "[r__18] r_Cast__2 = Cast <to = 7> (r_Gather__0); "
        "[r__19] r_Sub__0 = Sub(r__13, r_Cast__2); [r__20] r_Shape__0 = Shape(X); "
        "[r__21] r_Gather__1 = Gather(r_Shape__0, r__14); "
        "[r__22] r_Mul__0 = Mul(r_Gather__1, r_Sub__0); "
        "[r__23] r_Add__0 = Add(r__13, r_Mul__0); "
        "[r__24] r_Slice__0 = Slice(r_Concat__0, r_Sub__0, r_Add__0, r__14); "
        "[r__25] r_ReduceSum__2 = ReduceSum <axes = [1]> (r_Slice__0); "
        "[r__26] r_Concat__1 = Concat <axis = 1> (r_ReduceSum__2, r_Slice__0); "
        "[r__27] r_Gather__2 = Gather(r_Or__1, r__13); "
        "[r__28] r_Cast__3 = Cast <to = 7> (r_Gather__2); "
        "[r__29] r_Sub__1 = Sub(r__13, r_Cast__3); [r__30] r_Shape__1 = Shape(r_Slice__0); "
        "[r__31] r_Gather__3 = Gather(r_Shape__1, r__13); "
        "[r__32] r_Mul__1 = Mul(r_Gather__3, r_Sub__1); "
        "[r__33] r_Add__1 = Add(r__13, r_Mul__1); "
        "[r__34] r_Slice__1 = Slice(r_Concat__1, r_Sub__1, r_Add__1, r__13); "
        "[r__35] r_Shape__2 = Shape(r_Slice__1); [r__36] r_Not__0 = Not(r_Or__1); "
        "[r__37] r_Compress__0 = Compress <axis = 0> (r_Shape__2, r_Not__0); "
        "[r] Y = Reshape(r_Slice__1, r_Compress__0)",
        ""},
       "r__0 = 0; r__1 = {0, 1}; r__2 = {-2, -1}; r__13 = {1}; r__14 = {0}"},
      {{"mean_down_to_10", 18, 10,
        "g (float[2,3] X, int64[1] A) => (float[2,1] Y) { [r] Y = ReduceMean(X, A) }",
        "[r__11] r_Unsqueeze__0 = Unsqueeze <axes = [1]> (A); "
        "[r__12] r_Equal__1 = Equal(r_Unsqueeze__0, r__9); "
        "[r__13] r_Equal__2 = Equal(r_Unsqueeze__0, r__10); "
        "[r__14] r_Or__0 = Or(r_Equal__1, r_Equal__2); "
        "[r__15] r_Cast__2 = Cast <to = 7> (r_Or__0); "
        "[r__16] r_ReduceSum__0 = ReduceSum <keepdims = 0, axes = [0]> (r_Cast__2); "
        "[r__17] r_Cast__3 = Cast <to = 9> (r_ReduceSum__0); [r__18] r_Size__2 = Size(A); "
        "[r__19] r_Equal__3 = Equal(r_Size__2, r__0); "
        "[r__20] r_Or__1 = Or(r_Cast__3, r_Equal__3); "
        "[r__23] r_ReduceSum__1 = ReduceSum <axes = [0]> (X); "
        "[r__24] r_Concat__0 = Concat <axis = 0> (r_ReduceSum__1, X); "
        "[r__25] r_Gather__0 = Gather(r_Or__1, r__22); "
        "[r__26] r_Cast__4 = Cast <to = 7> (r_Gather__0); "
        "[r__27] r_Sub__0 = Sub(r__21, r_Cast__4); [r__28] r_Shape__0 = Shape(X); "
        "[r__29] r_Gather__1 = Gather(r_Shape__0, r__22); "
        "[r__30] r_Mul__0 = Mul(r_Gather__1, r_Sub__0); "
        "[r__31] r_Add__1 = Add(r__21, r_Mul__0); "
        "[r__32] r_Slice__0 = Slice(r_Concat__0, r_Sub__0, r_Add__1, r__22); "
        "[r__33] r_ReduceSum__2 = ReduceSum <axes = [1]> (r_Slice__0); "
        "[r__34] r_Concat__1 = Concat <axis = 1> (r_ReduceSum__2, r_Slice__0); "
        "[r__35] r_Gather__2 = Gather(r_Or__1, r__21); "
        "[r__36] r_Cast__5 = Cast <to = 7> (r_Gather__2); "
        "[r__37] r_Sub__1 = Sub(r__21, r_Cast__5); [r__38] r_Shape__1 = Shape(r_Slice__0); "
        "[r__39] r_Gather__3 = Gather(r_Shape__1, r__21); "
        "[r__40] r_Mul__1 = Mul(r_Gather__3, r_Sub__1); "
        "[r__41] r_Add__2 = Add(r__21, r_Mul__1); "
        "[r__42] r_Slice__1 = Slice(r_Concat__1, r_Sub__1, r_Add__2, r__21); "
        "[r] Y__0 = Identity(r_Slice__1); [r__1] r_Size__0 = Size(X); "
        "[r__2] r_Size__1 = Size(Y__0); [r__3] r_Equal__0 = Equal(r_Size__1, r__0); "
        "[r__4] r_Cast__0 = Cast <to = 7> (r_Equal__0); "
        "[r__5] r_Add__0 = Add(r_Size__1, r_Cast__0); "
        "[r__6] r_Div__0 = Div(r_Size__0, r_Add__0); "
        "[r__7] r_Cast__1 = Cast <to = 1> (r_Div__0); [r__8] Y = Div(Y__0, r_Cast__1)",
        ""},
       "r__0 = 0; r__9 = {0, 1}; r__10 = {-2, -1}; r__21 = {1}; r__22 = {0}"},
      {{"below_10_refused", 18, 9,
        "g (float[2,3] X, int64[1] A) => (float[2,1] Y) { [r] Y = ReduceMean(X, A) }", "",
        "(starts) is not a constant, and Slice-1 needs it as an attribute"},
       ""},
  };
}

INSTANTIATE_TEST_SUITE_P(ReductionAxesKnownAtRunTime, CompositionCaseTest,
                         ::testing::ValuesIn(ReductionAxesKnownAtRunTime()), CompositionName);

// The report marks compositions whose float results may round otherwise
// than the node's own kernel, and only those.
TEST(CompositionTest, ReportMarksRoundingChanges) {
  const struct {
    const char* graph;
    int64_t from, to;
    bool marked;
  } cases[] = {
      {"g (float[2,3] X, int64[1] A) => (float[2,1] Y) { [r] Y = ReduceMean(X, A) }", 18, 17, true},
      {"g (int64[2,3] X, int64[1] A) => (int64[2,1] Y) { [r] Y = ReduceL1(X, A) }", 18, 17, false},
      {"g (float[4] X) => (float[4] Y) { [s] Y = Shrink <bias = 1.0> (X) }", 9, 8, true},
      {"g (float[4] X) => (float[4] Y) { [s] Y = Shrink <bias = 0.5, lambd = 0.5> (X) }", 9, 8,
       false},
      {"g (float[4] X, float lo) => (float[4] Y) { [c] Y = Clip(X, lo) }", 11, 10, false},
  };
  for (const auto& c : cases) {
    onnx::ModelProto model = testing::ModelFromText(
        absl::StrCat("<ir_version: 8, opset_import: [\"\" : ", c.from, "]>\n", c.graph));
    absl::StatusOr<converter::ConversionResult> result = ConvertTo(model, c.to);
    ASSERT_TRUE(result.ok()) << c.graph << ": " << result.status();
    bool marked = false;
    for (const converter::StepReport& step : result->report.steps) {
      for (const converter::NodeChange& node : step.nodes) {
        for (const Change& change : node.changes) {
          marked |= change.kind == ChangeKind::kRoundingChanged;
        }
      }
    }
    EXPECT_EQ(marked, c.marked) << c.graph;
  }
}

std::vector<CompositionCase> ArgSelectLastIndex() {
  return {
      {{"known_size_gathers_reversed", 12, 11,
        "g (float[2,3] X) => (int64[2,1] Y) "
        "{ [a] Y = ArgMax <axis = 1, select_last_index = 1> (X) }",
        "[a__1] a_Gather__0 = Gather <axis = 1> (X, a__0); "
        "[a] Y__0 = ArgMax <axis = 1> (a_Gather__0); [a__3] Y = Sub(a__2, Y__0)",
        ""},
       "a__0 = {2, 1, 0}; a__2 = 2"},
      {{"known_size_to_7", 13, 7,
        "g (float[2,3] X) => (int64[3] Y) "
        "{ [a] Y = ArgMin <axis = -2, keepdims = 0, select_last_index = 1> (X) }",
        "[a__1] a_Gather__0 = Gather <axis = 0> (X, a__0); "
        "[a] Y__0 = ArgMin <axis = 0, keepdims = 0> (a_Gather__0); [a__3] Y = Sub(a__2, Y__0)",
        ""},
       "a__0 = {1, 0}; a__2 = 1"},
      {{"unknown_size_slices_backwards", 13, 11,
        "g (float[2,N] X) => (int64[2,1] Y) "
        "{ [a] Y = ArgMax <axis = 1, select_last_index = 1> (X) }",
        "[a__3] a_Slice__0 = Slice(X, a__0, a__1, a__2, a__0); [a__5] a_Shape__0 = Shape(X); "
        "[a__6] a_Gather__0 = Gather(a_Shape__0, a__4); [a__7] a_Sub__0 = Sub(a_Gather__0, a__4); "
        "[a] Y__0 = ArgMax <axis = 1> (a_Slice__0); [a__8] Y = Sub(a_Sub__0, Y__0)",
        ""},
       "a__0 = {-1}; a__1 = {-9223372036854775808}; a__2 = {1}; a__4 = 1"},
      {{"unknown_size_below_10_refused", 13, 9,
        "g (float[2,N] X) => (int64[2,1] Y) "
        "{ [a] Y = ArgMax <axis = 1, select_last_index = 1> (X) }",
        "", "(Slice-10): steps 'a__0' are not all 1, and Slice-1 has no steps; writing the slice "
        "as a Gather needs the size of axis 1, which is unknown"},
       ""},
      {{"first_index_drops_the_attribute", 12, 11,
        "g (float[2,3] X) => (int64[2,1] Y) "
        "{ [a] Y = ArgMax <axis = 1, select_last_index = 0> (X) }",
        "[a] Y = ArgMax <axis = 1> (X)", ""},
       ""},
  };
}

INSTANTIATE_TEST_SUITE_P(ArgSelectLastIndex, CompositionCaseTest,
                         ::testing::ValuesIn(ArgSelectLastIndex()), CompositionName);

std::vector<CompositionCase> SplitSizesKnownAtRunTime() {
  return {
      {{"unknown_size_sizes_from_shape", 18, 13,
        "g (float[N] X) => (float[M] A, float[K] B, float[L] C) "
        "{ [p] A, B, C = Split <num_outputs = 3> (X) }",
        "[p__5] p_Shape__0 = Shape(X); [p__6] p_Gather__0 = Gather(p_Shape__0, p__0); "
        "[p__7] p_Add__0 = Add(p_Gather__0, p__1); [p__8] p_Div__0 = Div(p_Add__0, p__2); "
        "[p__9] p_Mul__0 = Mul(p_Div__0, p__3); "
        "[p__10] p_Sub__0 = Sub(p_Gather__0, p_Mul__0); "
        "[p__11] p_Min__0 = Min(p_Sub__0, p_Div__0); [p__12] p_Max__0 = Max(p_Min__0, p__4); "
        "[p] A, B, C = Split(X, p_Max__0)",
        ""},
       "p__0 = {0}; p__1 = {2}; p__2 = {3}; p__3 = {0, 1, 2}; p__4 = 0"},
      {{"negative_axis_of_unknown_rank", 18, 13,
        "g (X) => (A, B) { [p] A, B = Split <axis = -1, num_outputs = 2> (X) }",
        "[p__5] p_Shape__0 = Shape(X); [p__6] p_Gather__0 = Gather(p_Shape__0, p__0); "
        "[p__7] p_Add__0 = Add(p_Gather__0, p__1); [p__8] p_Div__0 = Div(p_Add__0, p__2); "
        "[p__9] p_Mul__0 = Mul(p_Div__0, p__3); "
        "[p__10] p_Sub__0 = Sub(p_Gather__0, p_Mul__0); "
        "[p__11] p_Min__0 = Min(p_Sub__0, p_Div__0); [p__12] p_Max__0 = Max(p_Min__0, p__4); "
        "[p] A, B = Split <axis = -1> (X, p_Max__0)",
        ""},
       "p__0 = {-1}; p__1 = {1}; p__2 = {2}; p__3 = {0, 1}; p__4 = 0"},
  };
}

INSTANTIATE_TEST_SUITE_P(SplitSizesKnownAtRunTime, CompositionCaseTest,
                         ::testing::ValuesIn(SplitSizesKnownAtRunTime()), CompositionName);

std::vector<CompositionCase> MaxMinOfTheSameShape() {
  std::vector<CompositionCase> cases = {
      {{"same_value", 8, 6, "g (float[N,M] X) => (float[N,M] Y) { [m] Y = Max(X, X) }",
        "[m] Y = Max(X, X)", ""},
       ""},
      {{"same_value_of_unknown_shape", 8, 6, "g (float X) => (float Y) { [m] Y = Min(X, X, X) }",
        "[m] Y = Min(X, X, X)", ""},
       ""},
      {{"same_symbolic_dims", 8, 6,
        "g (float[N,M] X, float[N,M] Z) => (float[N,M] Y) { [m] Y = Min(X, Z) }",
        "[m] Y = Min(X, Z)", ""},
       ""},
      {{"other_symbolic_dims_refused", 8, 6,
        "g (float[N,M] X, float[N,K] Z) => (float[N,M] Y) { [m] Y = Min(X, Z) }", "",
        "are not known to be equal"},
       ""},
  };
  for (CompositionCase& c : cases) c.conversion.ir_version = 3;
  return cases;
}

INSTANTIATE_TEST_SUITE_P(MaxMinOfTheSameShape, CompositionCaseTest,
                         ::testing::ValuesIn(MaxMinOfTheSameShape()), CompositionName);

std::vector<CompositionCase> OpsThatDidNotExistYet() {
  return {
      {{"constant_of_shape_constant_shape", 9, 8,
        "g () => (int64[2,3] Y) <int64[2] s = {2, 3}> "
        "{ [k] Y = ConstantOfShape <value = int64[1] {7}> (s) }",
        "[k] Y = Identity(k__0)", ""},
       "s = {2, 3}; k__0 = {7, 7, 7, 7, 7, 7}"},
      {{"constant_of_shape_default_value", 9, 8,
        "g () => (float[2] Y) <int64[1] s = {2}> { [k] Y = ConstantOfShape(s) }",
        "[k] Y = Identity(k__0)", ""},
       "s = {2}; k__0 = {0, 0}"},
      {{"constant_of_shape_run_time_shape_tiles", 9, 6,
        "g (int64[3] S) => (float[A,B,C] Y) "
        "{ [k] Y = ConstantOfShape <value = float[1] {1.5}> (S) }",
        "[k] Y = Tile(k__0, S)", ""},
       "k__0 = {1.5}"},
      // Tile-6, not Expand-8, so that the result also holds at opset 7.
      {{"constant_of_shape_unknown_length_tiles", 9, 7,
        "g (int64[N] S) => (Y) { [k] Y = ConstantOfShape(S) }",
        "[k__3] k_Mul__0 = Mul(S, k__1); [k__4] k_Add__0 = Add(k_Mul__0, k__2); "
        "[k__5] k_Reshape__0 = Reshape(k__0, k_Add__0); [k] Y = Tile(k_Reshape__0, S)",
        ""},
       "k__0 = {0}; k__1 = 0; k__2 = 1"},
      {{"equal_on_floats", 11, 10, "g (float[3] A, float B) => (bool[3] Y) { [e] Y = Equal(A, B) }",
        "[e__2] e_Less__0 = Less(A, B); [e__3] e_Greater__0 = Greater(A, B); "
        "[e__4] e_Or__0 = Or(e_Less__0, e_Greater__0); [e__5] e_Less__1 = Less(A, e__0); "
        "[e__6] e_Greater__1 = Greater(A, e__1); [e__7] e_Or__1 = Or(e_Less__1, e_Greater__1); "
        "[e__8] e_Less__2 = Less(B, e__0); [e__9] e_Greater__2 = Greater(B, e__1); "
        "[e__10] e_Or__2 = Or(e_Less__2, e_Greater__2); [e__11] e_And__0 = And(e_Or__1, e_Or__2); "
        "[e__12] e_Not__0 = Not(e_Or__0); [e] Y = And(e_Not__0, e_And__0)",
        ""},
       "e__0 = inf; e__1 = -inf"},
      {{"equal_on_float16_to_7", 13, 7,
        "g (float16[3] A, float16[3] B) => (bool[3] Y) { [e] Y = Equal(A, B) }",
        "[e__2] e_Less__0 = Less(A, B); [e__3] e_Greater__0 = Greater(A, B); "
        "[e__4] e_Or__0 = Or(e_Less__0, e_Greater__0); [e__5] e_Less__1 = Less(A, e__0); "
        "[e__6] e_Greater__1 = Greater(A, e__1); [e__7] e_Or__1 = Or(e_Less__1, e_Greater__1); "
        "[e__8] e_Less__2 = Less(B, e__0); [e__9] e_Greater__2 = Greater(B, e__1); "
        "[e__10] e_Or__2 = Or(e_Less__2, e_Greater__2); [e__11] e_And__0 = And(e_Or__1, e_Or__2); "
        "[e__12] e_Not__0 = Not(e_Or__0); [e] Y = And(e_Not__0, e_And__0)",
        ""},
       "e__0 = float16 0x7c00; e__1 = float16 0xfc00"},
      {{"shrink_soft", 9, 8,
        "g (float[4] X) => (float[4] Y) { [s] Y = Shrink <bias = 1.5, lambd = 1.5> (X) }",
        "[s__0] s_Clip__0 = Clip <max = inf, min = 1.5> (X); [s__1] s_Clip__1 = Clip <max = -1.5, "
        "min = -inf> (X); "
        "[s] Y = Add(s_Clip__0, s_Clip__1)",
        ""},
       ""},
      {{"shrink_hard", 9, 8, "g (double[4] X) => (double[4] Y) { [s] Y = Shrink(X) }",
        "[s__0] s_Clip__0 = Clip <max = inf, min = 0.5> (X); [s__1] s_Clip__1 = Clip <max = -0.5, "
        "min = -inf> (X); "
        "[s__4] s_Greater__0 = Greater(X, s__3); [s__5] s_Cast__0 = Cast <to = 11> (s_Greater__0); "
        "[s__6] s_Less__0 = Less(X, s__2); [s__7] s_Cast__1 = Cast <to = 11> (s_Less__0); "
        "[s__8] s_Sub__0 = Sub(s_Cast__0, s_Cast__1); [s__9] s_Add__0 = Add(s_Clip__0, s_Clip__1); "
        "[s__10] s_Mul__0 = Mul(s_Sub__0, s__3); [s] Y = Add(s_Add__0, s_Mul__0)",
        ""},
       "s__2 = -0.5; s__3 = 0.5"},
      {{"shrink_to_6", 9, 6,
        "g (float[4] X) => (float[4] Y) { [s] Y = Shrink <bias = 0.5, lambd = 2.0> (X) }",
        "[s__0] s_Clip__0 = Clip <max = inf, min = 2.0> (X); [s__1] s_Clip__1 = Clip <max = -2.0, "
        "min = -inf> (X); "
        "[s__5] s_Greater__0 = Greater <broadcast = 1> (X, s__3); "
        "[s__6] s_Cast__0 = Cast <to = 1> (s_Greater__0); "
        "[s__7] s_Less__0 = Less <broadcast = 1> (X, s__2); "
        "[s__8] s_Cast__1 = Cast <to = 1> (s_Less__0); [s__9] s_Sub__0 = Sub(s_Cast__0, "
        "s_Cast__1); "
        "[s__10] s_Add__0 = Add(s_Clip__0, s_Clip__1); "
        "[s__11] s_Mul__0 = Mul <broadcast = 1> (s_Sub__0, s__4); [s] Y = Add(s_Add__0, s_Mul__0)",
        ""},
       "s__2 = -2; s__3 = 2; s__4 = 1.5"},
      {{"shrink_on_int_refused", 9, 8, "g (int32[4] X) => (int32[4] Y) { [s] Y = Shrink(X) }", "",
        "needs 'X' to be float or double"},
       ""},
      {{"equal_on_ints_unchanged", 11, 10,
        "g (int32[3] A, int32[3] B) => (bool[3] Y) { [e] Y = Equal(A, B) }", "[e] Y = Equal(A, B)",
        ""},
       ""},
  };
}

INSTANTIATE_TEST_SUITE_P(OpsThatDidNotExistYet, CompositionCaseTest,
                         ::testing::ValuesIn(OpsThatDidNotExistYet()), CompositionName);

}  // namespace
}  // namespace onnxconvert::adapters
