// Softmax / LogSoftmax / Hardmax between opsets 11 and 13, through the
// converter.

#include "tests/adapter_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

ConversionCase Case(std::string name, int64_t from, int64_t to, std::string node,
                    std::string expected, std::string error) {
  return {std::move(name), from, to,
          absl::StrCat("g (float[2,3,4] X) => (float[2,3,4] Y) { ", node, " }"),
          std::move(expected), std::move(error), 7};
}

std::vector<ConversionCase> AxisSemantics() {
  return {
      Case("last_axis_up", 11, 13, "Y = Softmax <axis = 2> (X)", "Y = Softmax <axis = 2> (X)", ""),
      Case("negative_last_axis_up", 12, 13, "Y = LogSoftmax <axis = -1> (X)",
           "Y = LogSoftmax <axis = -1> (X)", ""),
      Case("last_axis_down", 13, 11, "Y = Hardmax <axis = -1> (X)", "Y = Hardmax <axis = -1> (X)",
           ""),
      Case("default_axis_down", 13, 12, "Y = Softmax(X)", "Y = Softmax <axis = -1> (X)", ""),
  };
}

INSTANTIATE_TEST_SUITE_P(AxisSemantics, ConversionCaseTest,
                         ::testing::ValuesIn(AxisSemantics()), CaseName);

std::vector<ConversionCase> OtherAxesAreRewritten() {
  return AllNodes({
      Case("middle_axis_up_flattens", 11, 13, "Y = Softmax <axis = 1> (X)",
           "[softmax_Shape__0] X_dims__0 = Shape(X); "
           "[softmax_Flatten__0] X_flat__0 = Flatten <axis = 1> (X); "
           "Y__0 = Softmax <axis = 1> (X_flat__0); [softmax_Reshape__0] Y = Reshape(Y__0, X_dims__0)",
           ""),
      Case("first_axis_down_transposes", 13, 11, "Y = Softmax <axis = 0> (X)",
           "[softmax_Transpose__0] X_moved__0 = Transpose <perm = [2, 1, 0]> (X); "
           "Y__0 = Softmax <axis = 2> (X_moved__0); "
           "[softmax_Transpose__1] Y = Transpose <perm = [2, 1, 0]> (Y__0)",
           ""),
  });
}

INSTANTIATE_TEST_SUITE_P(OtherAxesAreRewritten, ConversionCaseTest,
                         ::testing::ValuesIn(OtherAxesAreRewritten()), CaseName);

}  // namespace
}  // namespace onnxconvert::adapters
