#include "base/indent.h"

#include "gtest/gtest.h"

namespace onnxconvert {
namespace {

TEST(IndentedTest, IndentsEachLineAndSkipsEmptyOnes) {
  struct Case {
    const char* text;
    const char* want;
  };
  const Case kCases[] = {
      {"", ""},
      {"a", "  - a\n"},
      {"a\nb\n", "  - a\n  - b\n"},
      {"a\n\nb", "  - a\n  - b\n"},
  };
  for (const Case& c : kCases) EXPECT_EQ(Indented(c.text, "  - "), c.want) << c.text;
}

}  // namespace
}  // namespace onnxconvert
