// Negative axes resolved when downgrading below opset 11, through the
// converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> ResolvedWithTheRankTheyIndex() {
  return {
      {"squeeze_counts_in_the_input", 11, 10,
       "g (float[3,1] X) => (float[3] Y) { [s] Y = Squeeze <axes = [-1]> (X) }",
       "[s] Y = Squeeze <axes = [1]> (X)", ""},
      {"unsqueeze_counts_in_the_output", 11, 10,
       "g (float[3] X) => (float[3,1] Y) { [u] Y = Unsqueeze <axes = [-1]> (X) }",
       "[u] Y = Unsqueeze <axes = [1]> (X)", ""},
      {"concat_axis", 11, 10,
       "g (float[2,3] A, float[2,4] B) => (float[2,7] Y) { [c] Y = Concat <axis = -1> (A, B) }",
       "[c] Y = Concat <axis = 1> (A, B)", ""},
      {"unknown_rank_refused", 11, 10,
       "g (float X, int64[2] I) => (float Y) { [g] Y = Gather <axis = -1> (X, I) }", "",
       "axis is negative and the rank it counts in is unknown"},
      {"positive_axes_untouched", 11, 10,
       "g (float[3,1] X) => (float[3] Y) { [s] Y = Squeeze <axes = [1]> (X) }",
       "[s] Y = Squeeze <axes = [1]> (X)", ""},
  };
}

INSTANTIATE_TEST_SUITE_P(ResolvedWithTheRankTheyIndex, ConversionCaseTest,
                         ::testing::ValuesIn(ResolvedWithTheRankTheyIndex()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
