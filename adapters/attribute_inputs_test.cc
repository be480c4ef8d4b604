// Attributes that became inputs (axes, split), both ways, through the
// converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

std::vector<ConversionCase> MovesAttributesAndInputs() {
  return {
      WithModel({"reduce_mean_up", 17, 18,
       "g (float[2,3,4] X) => (float[2,4] Y) { [rm] Y = ReduceMean <axes = [1], keepdims = 0> (X) }",
       "[rm] Y = ReduceMean <keepdims = 0> (X, rm__0)", ""},
                "<\n"
                "  ir_version: 8,\n"
                "  opset_import: [\"\" : 18]\n"
                ">\n"
                "g (float[2,3,4] X) => (float[2,4] Y)\n"
                "  <int64[1] rm__0 = {1}> {\n"
                "  [rm] Y = ReduceMean <keepdims = 0> (X, rm__0)\n"
                "}\n"),
      // DFT's absent axis attribute is 1, its absent axis input -2: each
      // step writes the one it converts from.
      {"dft_default_axis_up_written", 19, 20,
       "g (float[1,4,4,1] X) => (float[1,4,4,2] Y) { [f] Y = DFT(X) }",
       "[f] Y = DFT(X, \"\", f__0)", ""},
      {"dft_explicit_default_axis_up", 19, 20,
       "g (float[1,4,4,1] X) => (float[1,4,4,2] Y) { [f] Y = DFT <axis = 1> (X) }",
       "[f] Y = DFT(X, \"\", f__0)", ""},
      {"dft_default_axis_down_written", 20, 19,
       "g (float[1,4,4,1] X) => (float[1,4,4,2] Y) { [f] Y = DFT(X) }",
       "[f] Y = DFT <axis = 2> (X)", ""},
      {"dft_default_axis_of_unknown_rank_refused", 20, 19,
       "g (float X) => (float Y) { [f] Y = DFT(X) }", "",
       "input 'axis' is absent (axis -2), and the rank of 'X'"},
      {"unsqueeze_up", 12, 13,
       "g (float[3] X) => (float[1,3] Y) { [u] Y = Unsqueeze <axes = [0]> (X) }",
       "[u] Y = Unsqueeze(X, u__0)", ""},
      {"reduce_sum_without_axes_up", 12, 13,
       "g (float[2,3] X) => (float[1,1] Y) { [rs] Y = ReduceSum(X) }", "[rs] Y = ReduceSum(X)", ""},
      WithModel({"slice_up", 9, 10,
       "g (float[10,4] X) => (float[3,4] Y) { [s] Y = Slice <starts = [1], ends = [4], axes = [0]> (X) }",
       "[s] Y = Slice(X, s__0, s__1, s__2)", ""},
                "<\n"
                "  ir_version: 8,\n"
                "  opset_import: [\"\" : 10]\n"
                ">\n"
                "g (float[10,4] X) => (float[3,4] Y)\n"
                "  <int64[1] s__0 = {1},\n"
                "   int64[1] s__1 = {4},\n"
                "   int64[1] s__2 = {0}> {\n"
                "  [s] Y = Slice(X, s__0, s__1, s__2)\n"
                "}\n"),
      WithModel({"clip_up_float", 10, 11,
       "g (float[4] X) => (float[4] Y) { [c] Y = Clip <min = -1.0, max = 1.0> (X) }",
       "[c] Y = Clip(X, c__0, c__1)", ""},
                "<\n"
                "  ir_version: 8,\n"
                "  opset_import: [\"\" : 11]\n"
                ">\n"
                "g (float[4] X) => (float[4] Y)\n"
                "  <float[] c__0 = {-1.0},\n"
                "   float[] c__1 = {1.0}> {\n"
                "  [c] Y = Clip(X, c__0, c__1)\n"
                "}\n"),
      {"clip_down_absent_bounds", 11, 10, "g (float[4] X) => (float[4] Y) { [c] Y = Clip(X, \"\", \"\") }",
       "[c] Y = Clip(X)", ""},
      WithModel({"pad_up", 10, 11,
       "g (float[2,3] X) => (float[4,3] Y) { [p] Y = Pad <pads = [1, 0, 1, 0], value = 2.0> (X) }",
       "[p] Y = Pad(X, p__0, p__1)", ""},
                "<\n"
                "  ir_version: 8,\n"
                "  opset_import: [\"\" : 11]\n"
                ">\n"
                "g (float[2,3] X) => (float[4,3] Y)\n"
                "  <int64[4] p__0 = {1, 0, 1, 0},\n"
                "   float[] p__1 = {2.0}> {\n"
                "  [p] Y = Pad(X, p__0, p__1)\n"
                "}\n"),
      {"clip_up_float16_refused", 10, 11,
       "g (float16[4] X) => (float16[4] Y) { [c] Y = Clip <min = 0.0> (X) }", "",
       "step 10 -> 11: main \xE2\x80\xBA node 'c' (Clip-6): attribute 'min' must become an input of "
       "the element type of 'X', which is not float or double"},
      {"squeeze_down_constant", 13, 12,
       "g (float[1,3] X) => (float[3] Y) <int64[1] axes = {0}> { [s] Y = Squeeze(X, axes) }",
       "[s] Y = Squeeze <axes = [0]> (X)", ""},
      {"squeeze_down_not_constant", 13, 12,
       "g (float[1,3] X, int64[1] A) => (float[3] Y) { [s] Y = Squeeze(X, A) }", "",
       "step 13 -> 12: main \xE2\x80\xBA node 's' (Squeeze-13): input 'A' (axes) is not a constant, "
       "and Squeeze-11 needs it as an attribute"},
  };
}

INSTANTIATE_TEST_SUITE_P(MovesAttributesAndInputs, ConversionCaseTest,
                         ::testing::ValuesIn(MovesAttributesAndInputs()), CaseName);

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
