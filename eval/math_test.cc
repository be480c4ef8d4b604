// The math kernels (kernels_math.cc), one table-driven case per behaviour.

#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

class MathTest : public testing::TestWithParam<Case> {};

TEST_P(MathTest, ComputesOutputs) { EXPECT_EQ(Evaluate(GetParam()), GetParam().expected); }

const Case kCases[] = {
    {"sin", 13, "g () => (float[2] y) <float[2] a = {0, 1.5707963}> { y = Sin(a) }",
     "float[2] {0, 1}"},
};

INSTANTIATE_TEST_SUITE_P(Kernels, MathTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace onnxconvert::eval
