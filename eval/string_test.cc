// The RE2-syntax matcher (regex.h). The cases of the string kernels
// (kernels_string.cc) are in eval/cases/string.cases.

#include <string>

#include "eval/regex.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

// A pattern that backtracking matchers take exponential time on runs in
// linear time here.
TEST(RegexTest, NestedRepetitionIsLinear) {
  absl::StatusOr<Regex> regex = Regex::Compile("(a|aa)*(a*)*b");
  ASSERT_TRUE(regex.ok()) << regex.status();
  std::string text(100000, 'a');
  EXPECT_FALSE(regex->FullMatch(text));
  EXPECT_TRUE(regex->FullMatch(text + "b"));
}

TEST(RegexTest, ExpansionIsBounded) {
  EXPECT_FALSE(Regex::Compile("((a{1000}){1000}){1000}").ok());
  EXPECT_FALSE(Regex::Compile(std::string(Regex::kMaxPatternBytes + 1, 'a')).ok());
}

TEST(RegexTest, NestingIsBounded) {
  EXPECT_TRUE(Regex::Compile(std::string(100, '(') + "a" + std::string(100, ')')).ok());
  EXPECT_FALSE(Regex::Compile(std::string(101, '(') + "a" + std::string(101, ')')).ok());
}

TEST(RegexTest, EmptyPatternMatchesOnlyEmpty) {
  absl::StatusOr<Regex> regex = Regex::Compile("");
  ASSERT_TRUE(regex.ok());
  EXPECT_TRUE(regex->FullMatch(""));
  EXPECT_FALSE(regex->FullMatch("a"));
}

}  // namespace
}  // namespace onnxconvert::eval
