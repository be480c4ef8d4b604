// The case file reader (ParseCaseFile, CasesInFolder): what a well-formed
// file gives, and the file:line a malformed one is refused with.

#include "tests/adapter_cases.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace onnxconvert::adapters {
namespace {

constexpr char kTwoCases[] =
    "# a comment\n"
    "case first: 11 -> 10\n"
    "ir_version: 7\n"
    "model:\n"
    "  g (float[3,1] X) => (float[3] Y) {\n"
    "    [s] Y = Squeeze <axes = [-1]> (X)\n"
    "  }\n"
    "nodes:\n"
    "  [a] Y = A(X)\n"
    "\n"
    "  [b] Z = B(Y)\n"
    "constants: none\n"
    "\n"
    "case second: 9 -> 8\n"
    "no_casts: true\n"
    "model:\n"
    "  g (float X) => (float Y) { [w] Y = Where(X) }\n"
    "error: step 9 -> 8: cannot express\n";

TEST(ParseCaseFileTest, ReadsEveryPart) {
  absl::StatusOr<std::vector<ConversionCase>> cases = ParseCaseFile("f.cases", kTwoCases);
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 2);
  const ConversionCase& first = (*cases)[0];
  EXPECT_EQ(first.name, "first");
  EXPECT_EQ(first.from, 11);
  EXPECT_EQ(first.to, 10);
  EXPECT_EQ(first.ir_version, 7);
  EXPECT_EQ(first.graph,
            "g (float[3,1] X) => (float[3] Y) {\n  [s] Y = "
            "Squeeze <axes = [-1]> (X)\n}");
  EXPECT_TRUE(first.all_nodes);
  EXPECT_EQ(first.expected_node, "[a] Y = A(X); [b] Z = B(Y)");
  EXPECT_EQ(first.constants, std::optional<std::string>(""));
  EXPECT_EQ(first.where, "f.cases:2");
  const ConversionCase& second = (*cases)[1];
  EXPECT_TRUE(second.no_casts);
  EXPECT_FALSE(second.all_nodes);
  EXPECT_EQ(second.ir_version, 8);
  EXPECT_EQ(second.error, "step 9 -> 8: cannot express");
  EXPECT_EQ(second.constants, std::nullopt);
  EXPECT_EQ(second.where, "f.cases:14");
}

TEST(ParseCaseFileTest, RefusesMalformedFilesAtTheirLine) {
  const struct {
    const char* text;
    const char* error;
  } cases[] = {
      {"model:\n  g () => () {}\n", "f.cases:1: a key before the first 'case' line"},
      {"case a 1 -> 2\n", "f.cases:1: a case line is 'case NAME: FROM -> TO'"},
      {"case a: 1 -> x\n", "f.cases:1: a case line is 'case NAME: FROM -> TO'"},
      {"case a: 1 -> 2\n  g\n", "f.cases:2: an indented line under no block key"},
      {"case a: 1 -> 2\nmodl:\n", "f.cases:2: unknown key 'modl'"},
      {"case a: 1 -> 2\nerror: x\nerror: y\n", "f.cases:3: 'error:' twice"},
      {"case a: 1 -> 2\nir_version:\n", "f.cases:2: 'ir_version:' takes its value on its line"},
      {"case a: 1 -> 2\nir_version: seven\n", "f.cases:2: no valid value for 'ir_version:'"},
      {"case a: 1 -> 2\nmodel:\nnode: n\n", "f.cases:2: no valid value for 'model:'"},
      {"case a: 1 -> 2\nnode: x\n  y\n", "f.cases:3: 'node:' has a value on its line and below"},
      {"case a: 1 -> 2\nerror: x\n", "f.cases:1: case 'a': no model:"},
      {"case a: 1 -> 2\nmodel: g\n",
       "f.cases:1: case 'a': give either node: (or nodes:), expanded: or error:"},
      {"case a: 1 -> 2\nmodel: g\nnode: n\nerror: e\n", "f.cases:1: case 'a': give either"},
      {"case a: 1 -> 2\nmodel: g\nnode: n\nexpanded: Op\n", "f.cases:1: case 'a': give either"},
      {"case a: 1 -> 2\nexpanded:\n", "f.cases:2: 'expanded:' takes its value on its line"},
      {"case a: 1 -> 2\nmodel: g\nerror: e\nconstants: none\n",
       "f.cases:1: case 'a': a refused case has no constants: or converted "
       "model:"},
      {"case a: 1 -> 2\nmodel: g\nerror: e\ncase a: 1 -> 2\n",
       "f.cases:4: case 'a' is named already at line 1"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::vector<ConversionCase>> parsed = ParseCaseFile("f.cases", c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_TRUE(absl::StartsWith(parsed.status().message(), c.error)) << c.text << "\n"
                                                                      << parsed.status();
  }
}

// A folder's malformed file, and a case named in two files, are failing
// cases named after the file or the case, with the place at fault.
TEST(CasesInFolderTest, ErrorsBecomeFailingCases) {
  std::filesystem::path folder = std::filesystem::path(::testing::TempDir()) / "case_files";
  std::filesystem::create_directories(folder);
  std::ofstream((folder / "a.cases").string()) << kTwoCases;
  std::ofstream((folder / "b.cases").string()) << "case first: 1 -> 2\nmodel: g\nerror: e\n";
  std::ofstream((folder / "c.cases").string()) << "case x: 1 -> 2\nmodl: g\n";
  std::vector<ConversionCase> cases = CasesInFolder(folder.string());
  ASSERT_EQ(cases.size(), 4);
  EXPECT_EQ(cases[0].name, "first");
  EXPECT_EQ(cases[1].name, "second");
  EXPECT_EQ(cases[2].name, "twice_first");
  EXPECT_TRUE(absl::StrContains(cases[2].file_error, "b.cases:1: case 'first' is named already"))
      << cases[2].file_error;
  EXPECT_EQ(cases[3].name, "case_file_c");
  EXPECT_TRUE(absl::StrContains(cases[3].file_error, "c.cases:2: unknown key 'modl'"))
      << cases[3].file_error;
  EXPECT_EQ(CasesInFolder((folder / "none").string())[0].name, "no_case_files");
}

}  // namespace
}  // namespace onnxconvert::adapters
