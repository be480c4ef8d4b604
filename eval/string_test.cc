// The string kernels (kernels_string.cc) and the RE2-syntax matcher
// (regex.h), one table-driven case per behaviour.

#include <string>

#include "eval/regex.h"
#include "eval/test_cases.h"
#include "gtest/gtest.h"

namespace onnxconvert::eval {
namespace {

const Case kCases[] = {
    // StringNormalizer: whole elements are stopwords; case by ASCII.
    {"normalizer_stopwords_insensitive_upper", 10,
     "g () => (string[1,2] y) <string[1,3] x = {\"Monday\", \"tuesday\", \"x\"}> "
     "{ y = StringNormalizer<case_change_action = \"UPPER\", stopwords = [\"monday\"]>(x) }",
     "string[1,2] {\"TUESDAY\", \"X\"}"},
    {"normalizer_case_sensitive_keeps_other_case", 10,
     "g () => (string[2] y) <string[2] x = {\"Monday\", \"monday\"}> "
     "{ y = StringNormalizer<is_case_sensitive = 1, stopwords = [\"monday\"]>(x) }",
     "string[1] {\"Monday\"}"},
    {"normalizer_all_dropped", 10,
     "g () => (string[1] y) <string[2] x = {\"a\", \"A\"}> "
     "{ y = StringNormalizer<stopwords = [\"a\"]>(x) }",
     "string[1] {\"\"}"},
    {"normalizer_refuses_non_ascii_case_change", 10,
     "g () => (string[1] y) <string[1] x = {\"\xc3\x89t\xc3\xa9\"}> "
     "{ y = StringNormalizer<case_change_action = \"LOWER\">(x) }",
     "node '' (StringNormalizer-10): case mapping of strings other than ASCII is not supported"},
    {"normalizer_refuses_rank_3", 10,
     "g () => (string[1,1,1] y) <string[1,1,1] x = {\"a\"}> { y = StringNormalizer(x) }",
     "node '' (StringNormalizer-10): X is neither [C] nor [1, C]"},
    // StringConcat broadcasts.
    {"concat_broadcast_and_utf8", 20,
     "g () => (string[2] y) <string[2] x = {\"a\", \"\xc3\xa9\"}, string s = {\"!\"}> "
     "{ y = StringConcat(x, s) }",
     "string[2] {\"a!\", \"\xc3\xa9!\"}"},
    // StringSplit: Python's str.split.
    {"split_on_whitespace_runs", 20,
     "g () => (string[2,2] y, int64[2] n) <string[2] x = {\"  a \\t b  \", \"\"}> "
     "{ y, n = StringSplit(x) }",
     "string[2,2] {\"a\", \"b\", \"\", \"\"}; int64[2] {2, 0}"},
    {"split_delimiter_keeps_empty_pieces", 20,
     "g () => (string[1,3] y, int64[1] n) <string[1] x = {\"a,,b\"}> "
     "{ y, n = StringSplit<delimiter = \",\">(x) }",
     "string[1,3] {\"a\", \"\", \"b\"}; int64[1] {3}"},
    {"split_maxsplit_keeps_rest", 20,
     "g () => (string[1,2] y, int64[1] n) <string[1] x = {\" a  b c \"}> "
     "{ y, n = StringSplit<maxsplit = 1>(x) }",
     "string[1,2] {\"a\", \"b c \"}; int64[1] {2}"},
    {"split_multichar_delimiter", 20,
     "g () => (string[1,2] y, int64[1] n) <string[1] x = {\"a<>b\"}> "
     "{ y, n = StringSplit<delimiter = \"<>\">(x) }",
     "string[1,2] {\"a\", \"b\"}; int64[1] {2}"},
    {"split_empty_tensor", 20,
     "g () => (string[0,0] y, int64[0] n) <string[0] x = {}> { y, n = StringSplit(x) }",
     "string[0,0] {}; int64[0] {}"},
    // TfIdfVectorizer: pool n-grams counted per row, skips, weights.
    {"tfidf_unigrams_and_bigrams_tf", 9,
     "g () => (float[2,3] y) <string[2,3] x = {\"a\", \"b\", \"a\", \"b\", \"c\", \"b\"}> "
     "{ y = TfIdfVectorizer<mode = \"TF\", min_gram_length = 1, max_gram_length = 2, "
     "max_skip_count = 0, ngram_counts = [0, 2], ngram_indexes = [0, 1, 2], "
     "pool_strings = [\"a\", \"b\", \"a\", \"b\"]>(x) }",
     "float[2,3] {2, 1, 1, 0, 2, 0}"},
    {"tfidf_bigrams_with_skips_idf_weights", 9,
     "g () => (float[2] y) <int64[3] x = {1, 9, 2}> "
     "{ y = TfIdfVectorizer<mode = \"IDF\", min_gram_length = 2, max_gram_length = 2, "
     "max_skip_count = 1, ngram_counts = [0, 0], ngram_indexes = [1], pool_int64s = [1, 2], "
     "weights = [0.5, 0.25]>(x) }",
     "float[2] {0, 0.25}"},
    {"tfidf_unknown_mode", 9,
     "g () => (float[1] y) <int64[1] x = {1}> { y = TfIdfVectorizer<mode = \"BM25\", "
     "min_gram_length = 1, max_gram_length = 1, max_skip_count = 0, ngram_counts = [0], "
     "ngram_indexes = [0], pool_int64s = [1]>(x) }",
     "node '' (TfIdfVectorizer-9): mode \"BM25\" is unknown"},
    // RegexFullMatch: RE2 semantics, whole strings.
    {"regex_word_boundary_and_classes", 20,
     "g () => (bool[3] y) <string[3] x = {\"www.google.com\", \"www.bbc.co.uk\", \"www.a.com \"}> "
     "{ y = RegexFullMatch<pattern = \"www\\\\.[\\\\w.-]+\\\\.\\\\bcom\\\\b\">(x) }",
     "bool[3] {true, false, false}"},
    {"regex_alternation_counts_anchors", 20,
     "g () => (bool[3] y) <string[3] x = {\"ab@gmail.com\", \"@yahoo.com!\", \"ab@mail.com\"}> "
     "{ y = RegexFullMatch<pattern = \"(\\\\W|^)[\\\\w.]{0,25}@(yahoo|gmail)\\\\.com(\\\\W|$)\">(x) }",
     "bool[3] {true, true, false}"},
    {"regex_dot_not_newline_and_utf8", 20,
     "g () => (bool[2] y) <string[2] x = {\"a\\nb\", \"a\xc3\xa9" "b\"}> "
     "{ y = RegexFullMatch<pattern = \"a.b\">(x) }",
     "bool[2] {false, true}"},
    {"regex_negated_class_range_and_repeat", 20,
     "g () => (bool[3] y) <string[3] x = {\"x12\", \"x1234\", \"a12\"}> "
     "{ y = RegexFullMatch<pattern = \"[^a-c]\\\\d{2,3}\">(x) }",
     "bool[3] {true, false, false}"},
    {"regex_unsupported_flag", 20,
     "g () => (bool[1] y) <string[1] x = {\"a\"}> { y = RegexFullMatch<pattern = \"(?i)a\">(x) }",
     "node '' (RegexFullMatch-20): pattern: flags and other (? groups are not supported at 1"},
    {"regex_backreference_refused", 20,
     "g () => (bool[1] y) <string[1] x = {\"aa\"}> { y = RegexFullMatch<pattern = \"(a)\\\\1\">(x) }",
     "node '' (RegexFullMatch-20): pattern: unsupported escape \\1 at 5"},
    {"regex_bad_repeat", 20,
     "g () => (bool[1] y) <string[1] x = {\"a\"}> { y = RegexFullMatch<pattern = \"a**\">(x) }",
     "node '' (RegexFullMatch-20): pattern: bad repetition operator at 3"},
};

INSTANTIATE_TEST_SUITE_P(String, KernelCaseTest, testing::ValuesIn(kCases), CaseName);

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
