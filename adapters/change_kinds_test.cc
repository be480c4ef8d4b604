// The words the report prints for change kinds.

#include "adapters/adapter.h"
#include "base/enum_words_testing.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

TEST(ChangeKindsTest, EveryKindHasItsOwnWordAndReadsBack) {
  testing::ExpectEveryValueHasItsOwnWord(ChangeKindName, ParseChangeKind, kLastChangeKind);
}

TEST(ChangeKindsTest, WordsAreTheReportsOwn) {
  testing::ExpectWords<ChangeKind>(ChangeKindName, ParseChangeKind,
                                   {{ChangeKind::kVersionBump, "version-bump"},
                                    {ChangeKind::kAttributeToInput, "attribute-to-input"},
                                    {ChangeKind::kNodeReplaced, "node-replaced"},
                                    {ChangeKind::kRoundingChanged, "rounding-changed"},
                                    {ChangeKind::kNanChanged, "nan-changed"}});
}

TEST(ChangeKindsTest, UnknownWordsAreNotKinds) {
  for (const char* word : {"", "Version-Bump", "version_bump", "brand-new-kind"}) {
    EXPECT_FALSE(ParseChangeKind(word).has_value()) << word;
  }
}

}  // namespace
}  // namespace onnxconvert::adapters
