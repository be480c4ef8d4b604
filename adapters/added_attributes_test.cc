// Attributes later versions added, dropped when neutral, and GridSample's
// renamed modes, through the converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> DropsNeutralAttributesAndRenamesModes() {
  return {
      {"cast_saturate_dropped", 19, 13,
       "g (float[2] X) => (int32[2] Y) { [c] Y = Cast <to = 6, saturate = 1> (X) }",
       "[c] Y = Cast <to = 6> (X)", ""},
      {"average_pool_unit_dilations_dropped", 19, 11,
       "g (float[1,1,4,4] X) => (float[1,1,3,3] Y) "
       "{ [p] Y = AveragePool <kernel_shape = [2, 2], dilations = [1, 1]> (X) }",
       "[p] Y = AveragePool <kernel_shape = [2, 2]> (X)", ""},
      {"average_pool_dilated_refused", 19, 11,
       "g (float[1,1,5,5] X) => (float[1,1,3,3] Y) "
       "{ [p] Y = AveragePool <kernel_shape = [2, 2], dilations = [2, 2]> (X) }", "",
       "attribute 'dilations' is set to a value AveragePool-11 cannot express"},
      {"grid_sample_mode_down", 20, 16,
       "g (float[1,1,4,4] X, float[1,2,2,2] G) => (float[1,1,2,2] Y) "
       "{ [g] Y = GridSample <mode = \"linear\"> (X, G) }",
       "[g] Y = GridSample <mode = \"bilinear\"> (X, G)", ""},
      {"grid_sample_volumetric_refused", 20, 16,
       "g (float[1,1,4,4,4] X, float[1,2,2,2,3] G) => (float[1,1,2,2,2] Y) "
       "{ [g] Y = GridSample(X, G) }", "",
       "GridSample-16 samples 4-D inputs only"},
      {"grid_sample_mode_up", 16, 20,
       "g (float[1,1,4,4] X, float[1,2,2,2] G) => (float[1,1,2,2] Y) "
       "{ [g] Y = GridSample <mode = \"bicubic\"> (X, G) }",
       "[g] Y = GridSample <mode = \"cubic\"> (X, G)", ""},
      {"constant_value_int_down", 12, 11,
       "g () => (int64 Y) { [k] Y = Constant <value_int = 7> () }",
       "[k] Y = Constant <value = int64[] {7}> ()", ""},
  };
}

INSTANTIATE_TEST_SUITE_P(DropsNeutralAttributesAndRenamesModes, ConversionCaseTest,
                         ::testing::ValuesIn(DropsNeutralAttributesAndRenamesModes()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
