#include "tests/adapter_cases.h"

#include "gtest/gtest.h"

namespace onnxconvert::adapters {

TEST_P(ConversionCaseTest, Converts) { ExpectConversion(GetParam()); }

// A test file with cases of its own (compositions_test.cc) instantiates none.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConversionCaseTest);

}  // namespace onnxconvert::adapters
