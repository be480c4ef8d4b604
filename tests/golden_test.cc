// The golden tables' line diff.

#include "tests/golden.h"

#include <string>

#include "gtest/gtest.h"

namespace onnxconvert::testing {
namespace {

struct DiffCase {
  std::string name;
  std::string expected;
  std::string actual;
  std::string diff;  // what LineDiff gives
};

class LineDiffTest : public ::testing::TestWithParam<DiffCase> {};

TEST_P(LineDiffTest, ListsOnlyTheLinesThatDiffer) {
  EXPECT_EQ(LineDiff(GetParam().expected, GetParam().actual), GetParam().diff);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LineDiffTest,
    ::testing::Values(DiffCase{"equal", "a 1\nb 2\n", "a 1\nb 2\n", ""},
                      DiffCase{"changed", "a 1\nb 2\nc 3\n", "a 1\nb 5\nc 3\n", "- b 2\n+ b 5\n"},
                      DiffCase{"added", "a 1\nc 3\n", "a 1\nb 2\nc 3\n", "+ b 2\n"},
                      DiffCase{"removed", "a 1\nb 2\nc 3\n", "a 1\nc 3\n", "- b 2\n"},
                      DiffCase{"from_empty", "", "a 1\n", "+ a 1\n"}),
    [](const ::testing::TestParamInfo<DiffCase>& info) { return info.param.name; });

}  // namespace
}  // namespace onnxconvert::testing
