// Softmax / LogSoftmax / Hardmax between opsets 11 and 13, through the
// converter.

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "tests/model_text.h"

namespace onnxconvert::adapters {
namespace {

struct Case {
  std::string name;
  int64_t from;
  int64_t to;
  std::string node;   // the node, on a float[2,3,4] input X
  std::string error;  // "" when the conversion must succeed
};

TEST(SoftmaxAdapterTest, AxisSemantics) {
  const Case cases[] = {
      {"last_axis_up", 11, 13, "Y = Softmax <axis = 2> (X)", ""},
      {"negative_last_axis_up", 12, 13, "Y = LogSoftmax <axis = -1> (X)", ""},
      {"last_axis_down", 13, 11, "Y = Hardmax <axis = -1> (X)", ""},
      {"default_axis_down", 13, 12, "Y = Softmax(X)", ""},
      {"middle_axis_up", 11, 13, "Y = Softmax <axis = 1> (X)",
       "axis 1 of a rank-3 input is not the last axis"},
      {"default_axis_up", 12, 13, "Y = Softmax(X)",
       "axis 1 of a rank-3 input is not the last axis"},
  };
  for (const Case& c : cases) {
    onnx::ModelProto model = testing::ModelFromText(absl::StrCat(
        "<ir_version: 7, opset_import: [\"\" : ", c.from, "]>\n",
        "g (float[2,3,4] X) => (float[2,3,4] Y) { ", c.node, " }"));
    converter::ConvertOptions options;
    options.target_opset = c.to;
    absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(model, options);
    if (c.error.empty()) {
      ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
      bool has_axis = false;
      for (const auto& a : result->model.graph().node(0).attribute()) has_axis |= a.name() == "axis";
      EXPECT_TRUE(has_axis) << c.name << ": the axis is spelled out";
    } else {
      ASSERT_FALSE(result.ok()) << c.name;
      EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << c.name;
      EXPECT_TRUE(absl::StrContains(result.status().message(), c.error))
          << c.name << ": " << result.status();
    }
  }
}

}  // namespace
}  // namespace onnxconvert::adapters
