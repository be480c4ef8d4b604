// Attributes that became inputs (axes, split), both ways, through the
// converter.

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "ir/text_printer.h"
#include "tests/model_text.h"

namespace onnxconvert::adapters {
namespace {

struct Case {
  std::string name;
  int64_t from;
  int64_t to;
  std::string graph;
  std::string expected_node;  // the converted node in ONNX text ("" if refused)
  std::string error;
};

TEST(AttributeInputAdapterTest, MovesAttributesAndInputs) {
  const Case cases[] = {
      {"reduce_mean_up", 17, 18,
       "g (float[2,3,4] X) => (float[2,4] Y) { [rm] Y = ReduceMean <axes = [1], keepdims = 0> (X) }",
       "[rm] Y = ReduceMean <keepdims = 0> (X, rm__0)", ""},
      {"unsqueeze_up", 12, 13,
       "g (float[3] X) => (float[1,3] Y) { [u] Y = Unsqueeze <axes = [0]> (X) }",
       "[u] Y = Unsqueeze(X, u__0)", ""},
      {"reduce_sum_without_axes_up", 12, 13,
       "g (float[2,3] X) => (float[1,1] Y) { [rs] Y = ReduceSum(X) }", "[rs] Y = ReduceSum(X)", ""},
      {"squeeze_down_constant", 13, 12,
       "g (float[1,3] X) => (float[3] Y) <int64[1] axes = {0}> { [s] Y = Squeeze(X, axes) }",
       "[s] Y = Squeeze <axes = [0]> (X)", ""},
      {"squeeze_down_not_constant", 13, 12,
       "g (float[1,3] X, int64[1] A) => (float[3] Y) { [s] Y = Squeeze(X, A) }", "",
       "step 13 -> 12: main \xE2\x80\xBA node 's' (Squeeze-13): input 'A' (axes) is not a constant, "
       "and Squeeze-11 needs it as an attribute"},
  };
  for (const Case& c : cases) {
    onnx::ModelProto model = testing::ModelFromText(
        absl::StrCat("<ir_version: 8, opset_import: [\"\" : ", c.from, "]>\n", c.graph));
    converter::ConvertOptions options;
    options.target_opset = c.to;
    absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(model, options);
    if (c.error.empty()) {
      ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
      EXPECT_EQ(PrintNodeText(result->model.graph().node(0)), c.expected_node) << c.name;
      EXPECT_EQ(result->report.steps[0].validation, "ok") << c.name;
    } else {
      ASSERT_FALSE(result.ok()) << c.name;
      EXPECT_TRUE(absl::StrContains(result.status().message(), c.error))
          << c.name << ": " << result.status();
    }
  }
}

}  // namespace
}  // namespace onnxconvert::adapters
