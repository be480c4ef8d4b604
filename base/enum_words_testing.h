#ifndef ONNX_CONVERT_BASE_ENUM_WORDS_TESTING_H_
#define ONNX_CONVERT_BASE_ENUM_WORDS_TESTING_H_

// Test checks shared by the enumerations reports name by words (see
// enum_words.h): every value has its own word that reads back, and the
// words are the ones the reports print.

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"

namespace onnxconvert::testing {

// A value of an enumeration and the word reports print for it.
template <typename Enum>
using EnumWordCase = std::pair<Enum, absl::string_view>;

// Every value from the first to `last` has a non-empty word of its own
// (`name`) that `parse` reads back as the value.
template <typename Enum>
void ExpectEveryValueHasItsOwnWord(absl::string_view (*name)(Enum),
                                   std::optional<Enum> (*parse)(absl::string_view), Enum last) {
  std::set<std::string> words;
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    auto value = static_cast<Enum>(i);
    std::string word(name(value));
    EXPECT_FALSE(word.empty()) << i;
    EXPECT_TRUE(words.insert(word).second) << word << " names two values";
    EXPECT_EQ(parse(word), value) << word;
  }
}

// Each value of `cases` has the word its case gives, and that word reads
// back as the value.
template <typename Enum>
void ExpectWords(absl::string_view (*name)(Enum), std::optional<Enum> (*parse)(absl::string_view),
                 absl::Span<const EnumWordCase<Enum>> cases) {
  for (const EnumWordCase<Enum>& c : cases) {
    EXPECT_EQ(name(c.first), c.second);
    EXPECT_EQ(parse(c.second), c.first) << c.second;
  }
}

}  // namespace onnxconvert::testing

#endif  // ONNX_CONVERT_BASE_ENUM_WORDS_TESTING_H_
