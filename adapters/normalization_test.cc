// BatchNormalization and GroupNormalization across their semantic changes,
// through the converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> RewritesScaleAndBiasAndTrainingForms() {
  return {
      {"group_norm_up_spreads_groups_to_channels", 20, 21,
       "g (float[2,4,3] X) => (float[2,4,3] Y) <float[2] S = {1.0, 2.0}, float[2] B = {0.0, 0.5}> "
       "{ [gn] Y = GroupNormalization <num_groups = 2> (X, S, B) }",
       "[gn] Y = GroupNormalization <num_groups = 2> (X, gn__0, gn__1)", ""},
      {"group_norm_down_gathers_equal_channels", 21, 20,
       "g (float[2,4,3] X) => (float[2,4,3] Y) <float[4] S = {1.0, 1.0, 2.0, 2.0}, "
       "float[4] B = {0.0, 0.0, 0.5, 0.5}> "
       "{ [gn] Y = GroupNormalization <num_groups = 2> (X, S, B) }",
       "[gn] Y = GroupNormalization <num_groups = 2> (X, gn__0, gn__1)", ""},
      // Per-channel values that differ within a group: the per-channel
      // affine step after a per-group identity.
      {"group_norm_down_uneven_channels_after", 21, 20,
       "g (float[2,4,3] X) => (float[2,4,3] Y) <float[4] S = {1.0, 3.0, 2.0, 2.0}, "
       "float[4] B = {0.0, 0.0, 0.5, 0.5}> "
       "{ [gn] Y = GroupNormalization <num_groups = 2> (X, S, B) }",
       "[gn__1] gn_Unsqueeze__0 = Unsqueeze(S, gn__0); [gn__2] gn_Unsqueeze__1 = Unsqueeze(B, gn__0); "
       "[gn] Y__0 = GroupNormalization <num_groups = 2> (X, gn__3, gn__4); "
       "[gn__5] gn_Mul__0 = Mul(Y__0, gn_Unsqueeze__0); [gn__6] Y = Add(gn_Mul__0, gn_Unsqueeze__1)",
       "", 8, /*all_nodes=*/true},
      {"batch_norm_down_inference", 14, 9,
       "g (float[1,2,3] X, float[2] s, float[2] b, float[2] m, float[2] v) => (float[1,2,3] Y) "
       "{ [bn] Y = BatchNormalization <training_mode = 0> (X, s, b, m, v) }",
       "[bn] Y = BatchNormalization(X, s, b, m, v)", ""},
      {"batch_norm_down_training_refused", 14, 9,
       "g (float[1,2,3] X, float[2] s, float[2] b, float[2] m, float[2] v) => (float[1,2,3] Y) "
       "{ [bn] Y = BatchNormalization <training_mode = 1> (X, s, b, m, v) }", "",
       "training_mode is set"},
  };
}

INSTANTIATE_TEST_SUITE_P(RewritesScaleAndBiasAndTrainingForms, ConversionCaseTest,
                         ::testing::ValuesIn(RewritesScaleAndBiasAndTrainingForms()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
