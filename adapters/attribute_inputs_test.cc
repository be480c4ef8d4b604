// Attributes that became inputs (axes, split), both ways, through the
// converter. The cases: adapters/testdata/attribute_inputs.cases.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

TEST(AttributeInputAdapterTest, SubgraphsReadTheOuterScopesConstants) {
  onnx::ModelProto model = testing::ModelFromText(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (bool c, float[1,3] X) => (float[3] Y) <int64[1] axes = {0}> {\n"
      "  [if] Y = If (c) <then_branch = t () => (float[3] a) { [s] a = Squeeze(X, axes) },\n"
      "                   else_branch = e () => (float[3] b) { [s2] b = Squeeze(X, axes) }>\n"
      "}");
  absl::StatusOr<converter::ConversionResult> result = ConvertTo(model, 12);
  ASSERT_TRUE(result.ok()) << result.status();
  const onnx::NodeProto& if_node = result->model.graph().node(0);
  ASSERT_EQ(if_node.attribute_size(), 2);
  EXPECT_EQ(PrintNodeText(if_node.attribute(0).g().node(0)), "[s] a = Squeeze <axes = [0]> (X)");
  EXPECT_EQ(PrintNodeText(if_node.attribute(1).g().node(0)), "[s2] b = Squeeze <axes = [0]> (X)");
}

}  // namespace
}  // namespace onnxconvert::adapters
