#include "tests/case_file.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/test_files.h"

namespace onnxconvert::testing {
namespace {

// The cases of `text`, written to a case file of its own.
absl::StatusOr<std::vector<FileCase>> Read(const std::string& name, const std::string& text) {
  const std::string path = (FreshTestDir("case_file_" + name) / "t.cases").string();
  WriteTestFile(path, text);
  return ReadCaseFile(path);
}

TEST(CaseFileTest, ReadsCasesOfPartsOnOneLineAndBelow) {
  absl::StatusOr<std::vector<FileCase>> cases = Read("parts", R"(# a comment
case first: with a head

one: 1
block:
  line a

    line b, indented
node 'a': no
  why
case second
)");
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 2u);
  const FileCase& first = (*cases)[0];
  EXPECT_EQ(first.head, "first: with a head");
  EXPECT_EQ(first.line, 2);
  ASSERT_EQ(first.parts.size(), 3u);
  EXPECT_EQ(first.Find("one")->value, "1");
  EXPECT_EQ(first.Find("one")->line, 4);
  EXPECT_EQ(first.Find("block")->value, "");
  EXPECT_EQ(first.Find("block")->Text(), "line a\n  line b, indented\n");
  EXPECT_EQ(first.Find("node 'a'")->value, "no");
  EXPECT_EQ(first.Find("node 'a'")->lines, (std::vector<std::string>{"why"}));
  EXPECT_EQ(first.Find("missing"), nullptr);
  EXPECT_TRUE((*cases)[1].parts.empty());
}

TEST(CaseFileTest, ErrorsNameTheFileAndLine) {
  const struct {
    const char* name;
    const char* text;
    const char* error;  // the end of the message
  } cases[] = {
      {"part_first", "key: value\n", "t.cases:1: expected 'case' first"},
      {"indented_first", "case c\n  stray\n", "t.cases:2: an indented line belongs to no part"},
      {"not_a_part", "case c\nno colon here\n",
       "t.cases:2: expected 'KEY: VALUE' or 'KEY:', not 'no colon here'"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::vector<FileCase>> read = Read(c.name, c.text);
    ASSERT_FALSE(read.ok()) << c.name;
    EXPECT_TRUE(absl::EndsWith(read.status().message(), c.error)) << read.status();
  }
  EXPECT_EQ(ReadCaseFile("no/such/file.cases").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace onnxconvert::testing
