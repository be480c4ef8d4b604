// Shape's start/end, Split's num_outputs and Flatten's negative axis,
// through the converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> RewritesChangedAttributes() {
  return {
      {"shape_range_down_becomes_slice", 15, 13,
       "g (float[2,3,4] X) => (int64[2] Y) { [s] Y = Shape <start = 1> (X) }",
       "[s] Y__0 = Shape(X); [s__0] Y = Slice(Y__0, s__1, s__2, s__3)", "", 8, true},
      {"shape_whole_down_is_a_bump", 15, 13,
       "g (float[2,3] X) => (int64[2] Y) { [s] Y = Shape <start = 0> (X) }",
       "[s] Y = Shape(X)", ""},
      {"split_up_makes_num_outputs_explicit", 13, 18,
       "g (float[6] X) => (float[3] A, float[3] B) { [p] A, B = Split <axis = 0> (X) }",
       "[p] A, B = Split <axis = 0, num_outputs = 2> (X)", ""},
      {"split_down_even", 18, 13,
       "g (float[6] X) => (float[3] A, float[3] B) { [p] A, B = Split <num_outputs = 2> (X) }",
       "[p] A, B = Split(X)", ""},
      {"split_down_uneven_gets_sizes", 18, 13,
       "g (float[7] X) => (float[4] A, float[3] B) { [p] A, B = Split <num_outputs = 2> (X) }",
       "[p] A, B = Split(X, p__0)", ""},
      // An axis of unknown size: compositions_test.
      {"flatten_negative_axis_down", 11, 9,
       "g (float[2,3,4] X) => (float[6,4] Y) { [f] Y = Flatten <axis = -1> (X) }",
       "[f] Y = Flatten <axis = 2> (X)", ""},
      {"pad_axes_down_spread_to_rank", 18, 13,
       "g (float[2,3] X) => (float[2,5] Y) <int64[2] p = {1, 1}, int64[1] a = {1}> "
       "{ [p] Y = Pad(X, p, \"\", a) }",
       "[p] Y = Pad(X, p__0, \"\")", ""},
      {"pad_wrap_down_refused", 19, 18,
       "g (float[2,3] X) => (float[2,5] Y) <int64[4] p = {0, 1, 0, 1}> "
       "{ [p] Y = Pad <mode = \"wrap\"> (X, p) }", "",
       "mode 'wrap' is new in Pad-19; Pad-18 cannot express it"},
  };
}

INSTANTIATE_TEST_SUITE_P(RewritesChangedAttributes, ConversionCaseTest,
                         ::testing::ValuesIn(RewritesChangedAttributes()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
