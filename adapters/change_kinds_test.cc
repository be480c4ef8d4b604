// The words the report prints for change kinds.

#include <set>
#include <string>

#include "adapters/adapter.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

TEST(ChangeKindsTest, EveryKindHasItsOwnWordAndReadsBack) {
  std::set<std::string> words;
  for (int i = 0; i <= static_cast<int>(kLastChangeKind); ++i) {
    auto kind = static_cast<ChangeKind>(i);
    std::string word(ChangeKindName(kind));
    EXPECT_FALSE(word.empty()) << i;
    EXPECT_TRUE(words.insert(word).second) << word << " names two kinds";
    EXPECT_EQ(ParseChangeKind(word), kind) << word;
  }
}

TEST(ChangeKindsTest, WordsAreTheReportsOwn) {
  struct Case {
    ChangeKind kind;
    const char* word;
  };
  const Case cases[] = {
      {ChangeKind::kVersionBump, "version-bump"},
      {ChangeKind::kAttributeToInput, "attribute-to-input"},
      {ChangeKind::kNodeReplaced, "node-replaced"},
      {ChangeKind::kRoundingChanged, "rounding-changed"},
      {ChangeKind::kNanChanged, "nan-changed"},
  };
  for (const Case& c : cases) EXPECT_EQ(ChangeKindName(c.kind), c.word);
}

TEST(ChangeKindsTest, UnknownWordsAreNotKinds) {
  for (const char* word : {"", "Version-Bump", "version_bump", "brand-new-kind"}) {
    EXPECT_FALSE(ParseChangeKind(word).has_value()) << word;
  }
}

}  // namespace
}  // namespace onnxconvert::adapters
