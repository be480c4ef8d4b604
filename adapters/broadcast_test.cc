// Legacy (opset 6) and numpy (opset 7) broadcasting, both ways, through the
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
  std::string expected_node;  // "" when refused
  std::string error;
};

TEST(BroadcastAdapterTest, LegacyAndNumpy) {
  const Case cases[] = {
      {"suffix_up", 6, 7,
       "g (float[2,3,4] A, float[4] B) => (float[2,3,4] Y) { [add] Y = Add <broadcast = 1> (A, B) }",
       "[add] Y = Add(A, B)", ""},
      {"axis_matching_suffix_up", 6, 7,
       "g (float[2,3,4] A, float[3,4] B) => (float[2,3,4] Y) "
       "{ [mul] Y = Mul <axis = 1, broadcast = 1> (A, B) }",
       "[mul] Y = Mul(A, B)", ""},
      {"inner_axis_up", 6, 7,
       "g (float[2,3,4] A, float[3] B) => (float[2,3,4] Y) "
       "{ [sub] Y = Sub <axis = 1, broadcast = 1> (A, B) }",
       "", "B is broadcast from axis 1 of A"},
      {"suffix_down", 7, 6,
       "g (float[2,3,4] A, float[4] B) => (float[2,3,4] Y) { [add] Y = Add(A, B) }",
       "[add] Y = Add <broadcast = 1> (A, B)", ""},
      {"same_shape_down", 7, 6,
       "g (float[2,3] A, float[2,3] B) => (float[2,3] Y) { [div] Y = Div(A, B) }",
       "[div] Y = Div(A, B)", ""},
      {"two_way_down", 7, 6,
       "g (float[2,1] A, float[1,3] B) => (float[2,3] Y) { [add] Y = Add(A, B) }", "",
       "B's shape is not a suffix of A's"},
      {"gemm_up", 6, 7,
       "g (float[2,3] A, float[3,4] B, float[4] C) => (float[2,4] Y) "
       "{ [gemm] Y = Gemm <broadcast = 1> (A, B, C) }",
       "[gemm] Y = Gemm(A, B, C)", ""},
  };
  for (const Case& c : cases) {
    onnx::ModelProto model = testing::ModelFromText(
        absl::StrCat("<ir_version: 3, opset_import: [\"\" : ", c.from, "]>\n", c.graph));
    converter::ConvertOptions options;
    options.target_opset = c.to;
    absl::StatusOr<converter::ConversionResult> result = converter::ConvertModel(model, options);
    if (c.error.empty()) {
      ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
      EXPECT_EQ(PrintNodeText(result->model.graph().node(0)), c.expected_node) << c.name;
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
