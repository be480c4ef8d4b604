// The early opsets' changes: Constant-1's float-only values (others become
// initializers), through the converter. The cases: adapters/testdata/legacy.cases.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

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
