// EnumWord and ParseEnumWord over a table of words in enum order.

#include "base/enum_words.h"

#include "gtest/gtest.h"

namespace onnxconvert {
namespace {

enum class Colour { kRed, kGreen, kBlue };

constexpr absl::string_view kColourWords[] = {"red", "green", "blue"};

TEST(EnumWordsTest, WordsAndValuesMatchByPlace) {
  EXPECT_EQ(EnumWord(kColourWords, Colour::kRed), "red");
  EXPECT_EQ(EnumWord(kColourWords, Colour::kBlue), "blue");
  EXPECT_EQ(ParseEnumWord<Colour>(kColourWords, "green"), Colour::kGreen);
  EXPECT_EQ(ParseEnumWord<Colour>(kColourWords, "blue"), Colour::kBlue);
}

TEST(EnumWordsTest, UnknownWordsHaveNoValue) {
  for (absl::string_view word : {"", "Red", "purple", "red "}) {
    EXPECT_FALSE(ParseEnumWord<Colour>(kColourWords, word).has_value()) << word;
  }
}

}  // namespace
}  // namespace onnxconvert
