// Softmax / LogSoftmax / Hardmax between opsets 11 and 13, through the
// converter.

#include "adapters/adapter_test_util.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

ConversionCase Case(std::string name, int64_t from, int64_t to, std::string node,
                    std::string expected, std::string error) {
  return {std::move(name), from, to,
          absl::StrCat("g (float[2,3,4] X) => (float[2,3,4] Y) { ", node, " }"),
          std::move(expected), std::move(error), 7};
}

TEST(SoftmaxAdapterTest, AxisSemantics) {
  const ConversionCase cases[] = {
      Case("last_axis_up", 11, 13, "Y = Softmax <axis = 2> (X)", "Y = Softmax <axis = 2> (X)", ""),
      Case("negative_last_axis_up", 12, 13, "Y = LogSoftmax <axis = -1> (X)",
           "Y = LogSoftmax <axis = -1> (X)", ""),
      Case("last_axis_down", 13, 11, "Y = Hardmax <axis = -1> (X)", "Y = Hardmax <axis = -1> (X)",
           ""),
      Case("default_axis_down", 13, 12, "Y = Softmax(X)", "Y = Softmax <axis = -1> (X)", ""),
      Case("middle_axis_up", 11, 13, "Y = Softmax <axis = 1> (X)", "",
           "axis 1 of a rank-3 input is not the last axis"),
      Case("default_axis_up", 12, 13, "Y = Softmax(X)", "",
           "axis 1 of a rank-3 input is not the last axis"),
  };
  for (const ConversionCase& c : cases) ExpectConversion(c);
}

}  // namespace
}  // namespace onnxconvert::adapters
