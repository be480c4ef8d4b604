// The early opsets' changes: Constant-1's float-only values (others become
// initializers), through the converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> ConstantsOfOtherTypesBecomeInitializers() {
  return {
      {"float_constant_kept", 9, 8,
       "g () => (float[2] Y) { [k] Y = Constant <value = float[2] {1, 2}> () }",
       "[k] Y = Constant <value = float[2] {1.0, 2.0}> ()", ""},
      WithModel({"int64_constant_to_initializer", 13, 7,
       "g () => (int64[2] Y) { [k] Y = Constant <value = int64[2] {1, 2}> () }",
       "[k] Y = Identity(k__0)", ""},
                "<\n"
                "  ir_version: 8,\n"
                "  opset_import: [\"\" : 7]\n"
                ">\n"
                "g () => (int64[2] Y)\n"
                "  <int64[2] k__0 = {1, 2}> {\n"
                "  [k] Y = Identity(k__0)\n"
                "}\n"),
      {"int32_constant_to_initializer", 9, 8,
       "g () => (int32[1] Y) { [k] Y = Constant <value = int32[1] {7}> () }",
       "[k] Y = Identity(k__0)", ""},
      // The initializer is still a constant to a later step's adapter.
      WithModel({"int64_shape_constant_read_below_5", 9, 4,
       "g (float[2,3] X) => (float[6] Y) {\n"
       "  [s] S = Constant <value = int64[1] {6}> ()\n  [y] Y = Reshape(X, S)\n}",
       "[s] S = Identity(s__0); [y] Y = Reshape <shape = [6]> (X)", "", 8, /*all_nodes=*/true},
                "<\n"
                "  ir_version: 8,\n"
                "  opset_import: [\"\" : 4]\n"
                ">\n"
                "g (float[2,3] X) => (float[6] Y)\n"
                "  <int64[1] s__0 = {6}> {\n"
                "  [s] S = Identity(s__0)\n"
                "  [y] Y = Reshape <shape = [6]> (X)\n"
                "}\n"),
      {"bool_constant_to_initializer", 9, 1,
       "g () => (bool[1] Y) { [k] Y = Constant <value = bool[1] {1}> () }",
       "[k] Y = Identity(k__0)", "", 3},
  };
}

INSTANTIATE_TEST_SUITE_P(ConstantsOfOtherTypesBecomeInitializers, ConversionCaseTest,
                         ::testing::ValuesIn(ConstantsOfOtherTypesBecomeInitializers()), CaseName);

// Below IR version 4 an initializer is an input's default: the value is
// listed among the graph's inputs too.
TEST(LegacyAdapterTest, InitializersAreInputsBelowIrVersion4) {
  for (int64_t ir : {3, 4}) {
    onnx::ModelProto model = testing::ModelFromText(absl::StrCat(
        "<ir_version: ", ir, ", opset_import: [\"\" : 9]>\n"
        "g () => (int64[2] Y) { [k] Y = Constant <value = int64[2] {1, 2}> () }"));
    absl::StatusOr<converter::ConversionResult> result = ConvertTo(model, 8);
    ASSERT_TRUE(result.ok()) << result.status();
    const onnx::GraphProto& graph = result->model.graph();
    ASSERT_EQ(graph.initializer_size(), 1);
    EXPECT_EQ(graph.initializer(0).data_type(), onnx::TensorProto::INT64);
    if (ir < 4) {
      ASSERT_EQ(graph.input_size(), 1);
      EXPECT_EQ(graph.input(0).name(), graph.initializer(0).name());
      EXPECT_EQ(graph.input(0).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
      EXPECT_EQ(graph.input(0).type().tensor_type().shape().dim(0).dim_value(), 2);
    } else {
      EXPECT_EQ(graph.input_size(), 0);
    }
  }
}

}  // namespace
}  // namespace onnxconvert::adapters
