// Attributes written with their default value (as the PyTorch 2.x exporter
// writes them all) mean what their absence does: a step to a version that
// lacks them drops them, in one place for every op (DropDefaultedAttributes),
// through the converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> DefaultsTheTargetLacksAreDropped() {
  return {
      {"reduce_mean_noop_with_empty_axes_0", 18, 13,
       "g (float[2,3] X) => (float[2] Y) <int64[1] axes = {1}> "
       "{ [m] Y = ReduceMean <keepdims = 0, noop_with_empty_axes = 0> (X, axes) }",
       "[m] Y = ReduceMean <keepdims = 0, axes = [1]> (X)", ""},
      {"reduce_sum_noop_with_empty_axes_0", 13, 11,
       "g (float[2,3] X) => (float[2] Y) <int64[1] axes = {1}> "
       "{ [s] Y = ReduceSum <keepdims = 0, noop_with_empty_axes = 0> (X, axes) }",
       "[s] Y = ReduceSum <keepdims = 0, axes = [1]> (X)", ""},
      {"lstm_layout_0", 14, 13,
       "g (float[5,2,3] X, float[1,16,3] W, float[1,16,4] R) => (float[5,1,2,4] Y) "
       "{ [l] Y = LSTM <hidden_size = 4, layout = 0> (X, W, R) }",
       "[l] Y = LSTM <hidden_size = 4> (X, W, R)", ""},
      {"gru_layout_0_to_7", 14, 7,
       "g (float[5,2,3] X, float[1,12,3] W, float[1,12,4] R) => (float[5,1,2,4] Y) "
       "{ [r] Y = GRU <hidden_size = 4, layout = 0> (X, W, R) }",
       "[r] Y = GRU <hidden_size = 4> (X, W, R)", ""},
      {"reshape_allowzero_0", 14, 13,
       "g (float[2,3] X) => (float[6] Y) <int64[1] s = {6}> "
       "{ [r] Y = Reshape <allowzero = 0> (X, s) }",
       "[r] Y = Reshape(X, s)", ""},
      {"gather_nd_batch_dims_0", 12, 11,
       "g (float[2,2] X, int64[2,2] I) => (float[2] Y) "
       "{ [g] Y = GatherND <batch_dims = 0> (X, I) }",
       "[g] Y = GatherND(X, I)", ""},
      {"shape_start_0", 15, 13,
       "g (float[2,3] X) => (int64[2] Y) { [s] Y = Shape <start = 0> (X) }",
       "[s] Y = Shape(X)", ""},
      {"batch_normalization_training_mode_0", 14, 9,
       "g (float[1,2,3] X, float[2] S, float[2] B, float[2] M, float[2] V) => (float[1,2,3] Y) "
       "{ [b] Y = BatchNormalization <training_mode = 0> (X, S, B, M, V) }",
       "[b] Y = BatchNormalization(X, S, B, M, V)", ""},
      {"max_pool_storage_order_0", 8, 7,
       "g (float[1,1,4,4] X) => (float[1,1,2,2] Y) "
       "{ [p] Y = MaxPool <kernel_shape = [2, 2], strides = [2, 2], storage_order = 0> (X) }",
       "[p] Y = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (X)", ""},
      {"arg_max_select_last_index_0", 12, 11,
       "g (float[2,3] X) => (int64[2,1] Y) { [a] Y = ArgMax <axis = 1, select_last_index = 0> (X) }",
       "[a] Y = ArgMax <axis = 1> (X)", ""},
      {"top_k_largest_and_sorted_1", 11, 10,
       "g (float[2,3] X) => (float[2,2] V, int64[2,2] I) <int64[1] k = {2}> "
       "{ [t] V, I = TopK <largest = 1, sorted = 1> (X, k) }",
       "[t] V, I = TopK(X, k)", ""},
      {"scatter_elements_reduction_none", 16, 13,
       "g (float[3] X, int64[1] I, float[1] U) => (float[3] Y) "
       "{ [s] Y = ScatterElements <reduction = \"none\"> (X, I, U) }",
       "[s] Y = ScatterElements(X, I, U)", ""},
      {"depth_to_space_mode_dcr", 11, 10,
       "g (float[1,4,2,2] X) => (float[1,1,4,4] Y) "
       "{ [d] Y = DepthToSpace <blocksize = 2, mode = \"DCR\"> (X) }",
       "[d] Y = DepthToSpace <blocksize = 2> (X)", ""},
      {"average_pool_ceil_mode_0", 10, 9,
       "g (float[1,1,4,4] X) => (float[1,1,2,2] Y) "
       "{ [p] Y = AveragePool <kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 0> (X) }",
       "[p] Y = AveragePool <kernel_shape = [2, 2], strides = [2, 2]> (X)", ""},
      {"cast_round_mode_up", 24, 23,
       "g (float[2] X) => (float16[2] Y) { [c] Y = Cast <to = 10, round_mode = \"up\"> (X) }",
       "[c] Y = Cast <to = 10> (X)", ""},
      // Values the target lacks composed (attribute_compositions.cc).
      {"top_k_smallest_by_negation", 11, 10,
       "g (float[2,3] X) => (float[2,2] V, int64[2,2] I) <int64[1] k = {2}> "
       "{ [t] V, I = TopK <largest = 0> (X, k) }",
       "[t__0] t_Neg__0 = Neg(X); [t] V__0, I = TopK(t_Neg__0, k); [t__1] V = Neg(V__0)", "", 8,
       /*all_nodes=*/true},
      {"top_k_smallest_of_ints_refused", 11, 10,
       "g (int32[2,3] X) => (int32[2,2] V, int64[2,2] I) <int64[1] k = {2}> "
       "{ [t] V, I = TopK <largest = 0> (X, k) }",
       "", "negating a value that is not known to be float may overflow"},
      {"reduce_mean_noop_with_empty_axes_1_refused", 18, 13,
       "g (float[2,3] X) => (float[2] Y) <int64[1] axes = {1}> "
       "{ [m] Y = ReduceMean <keepdims = 0, noop_with_empty_axes = 1> (X, axes) }",
       "", "noop_with_empty_axes"},
      {"gather_nd_batch_dims_1_as_coordinates", 12, 11,
       "g (float[2,2] X, int64[2,1] I) => (float[2] Y) "
       "{ [g] Y = GatherND <batch_dims = 1> (X, I) }",
       "[g__1] g_Concat__0 = Concat <axis = 1> (g__0, I); [g] Y = GatherND(X, g_Concat__0)", "", 8,
       /*all_nodes=*/true},
      {"gather_nd_batch_dims_of_unknown_indices_refused", 12, 11,
       "g (float[2,2] X, int64[N,1] I) => (float[N] Y) "
       "{ [g] Y = GatherND <batch_dims = 1> (X, I) }",
       "", "batch_dims = 1, which GatherND-11 cannot express: the sizes of 'I' are not all known"},
      {"roi_align_half_pixel_default_refused", 16, 10,
       "g (float[1,1,4,4] X, float[1,4] R, int64[1] I) => (float[1,1,2,2] Y) "
       "{ [a] Y = RoiAlign <output_height = 2, output_width = 2> (X, R, I) }",
       "", "RoiAlign-10 does only what 'output_half_pixel' does"},
      {"roi_align_output_half_pixel_dropped", 16, 10,
       "g (float[1,1,4,4] X, float[1,4] R, int64[1] I) => (float[1,1,2,2] Y) "
       "{ [a] Y = RoiAlign <output_height = 2, output_width = 2, "
       "coordinate_transformation_mode = \"output_half_pixel\"> (X, R, I) }",
       "[a] Y = RoiAlign <output_height = 2, output_width = 2> (X, R, I)", ""},
      {"roi_align_up_writes_output_half_pixel", 10, 16,
       "g (float[1,1,4,4] X, float[1,4] R, int64[1] I) => (float[1,1,2,2] Y) "
       "{ [a] Y = RoiAlign <output_height = 2, output_width = 2> (X, R, I) }",
       "[a] Y = RoiAlign <output_height = 2, output_width = 2, "
       "coordinate_transformation_mode = \"output_half_pixel\"> (X, R, I)", ""},
      {"roi_align_half_pixel_written_refused", 16, 10,
       "g (float[1,1,4,4] X, float[1,4] R, int64[1] I) => (float[1,1,2,2] Y) "
       "{ [a] Y = RoiAlign <output_height = 2, output_width = 2, "
       "coordinate_transformation_mode = \"half_pixel\"> (X, R, I) }",
       "", "RoiAlign-10 does only what 'output_half_pixel' does"},
  };
}

INSTANTIATE_TEST_SUITE_P(DefaultsTheTargetLacksAreDropped, ConversionCaseTest,
                         ::testing::ValuesIn(DefaultsTheTargetLacksAreDropped()), CaseName);

// The step's report lists the attribute dropped.
TEST(DefaultedAttributesTest, TheReportListsTheDrop) {
  onnx::ModelProto model = testing::ModelFromText(
      "<ir_version: 8, opset_import: [\"\" : 14]>\n"
      "g (float[5,2,3] X, float[1,12,3] W, float[1,12,4] R) => (float[5,1,2,4] Y) "
      "{ [r] Y = GRU <hidden_size = 4, layout = 0> (X, W, R) }");
  absl::StatusOr<converter::ConversionResult> result = ConvertTo(model, 13);
  ASSERT_TRUE(result.ok()) << result.status();
  bool listed = false;
  for (const converter::StepReport& step : result->report.steps) {
    for (const converter::NodeChange& node : step.nodes) {
      for (const Change& change : node.changes) {
        listed |= change.kind == ChangeKind::kAttributeRemoved &&
                  change.detail == "layout (set to its default, which GRU-7 lacks) dropped";
      }
    }
  }
  EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace onnxconvert::adapters
