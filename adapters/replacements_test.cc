// Ops replaced by others of the same meaning, through the converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> ReplacesOpsAcrossTheirDeprecation() {
  return {
      {"scatter_up_becomes_scatter_elements", 9, 11,
       "g (float[3,3] D, int64[1,3] I, float[1,3] U) => (float[3,3] Y) "
       "{ [s] Y = Scatter <axis = 0> (D, I, U) }",
       "[s] Y = ScatterElements <axis = 0> (D, I, U)", ""},
      {"scatter_elements_down_becomes_scatter", 11, 9,
       "g (float[3,3] D, int64[1,3] I, float[1,3] U) => (float[3,3] Y) "
       "{ [s] Y = ScatterElements <axis = 1> (D, I, U) }",
       "[s] Y = Scatter <axis = 1> (D, I, U)", ""},
      {"upsample_up_becomes_resize", 9, 10,
       "g (float[1,1,2,2] X) => (float[1,1,4,4] Y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> "
       "{ [u] Y = Upsample <mode = \"nearest\"> (X, s) }",
       "[u] Y = Resize <mode = \"nearest\"> (X, s)", ""},
      {"resize_down_becomes_upsample", 10, 9,
       "g (float[1,1,2,2] X) => (float[1,1,4,4] Y) <float[4] s = {1.0, 1.0, 2.0, 2.0}> "
       "{ [r] Y = Resize <mode = \"linear\"> (X, s) }",
       "[r] Y = Upsample <mode = \"linear\"> (X, s)", ""},
      {"cast_like_down_becomes_cast", 15, 13,
       "g (float[2] X, int32[1] L) => (int32[2] Y) { [c] Y = CastLike(X, L) }",
       "[c] Y = Cast <to = 6> (X)", ""},
  };
}

INSTANTIATE_TEST_SUITE_P(ReplacesOpsAcrossTheirDeprecation, ConversionCaseTest,
                         ::testing::ValuesIn(ReplacesOpsAcrossTheirDeprecation()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
