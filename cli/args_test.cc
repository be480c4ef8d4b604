#include "cli/args.h"

#include "gtest/gtest.h"

namespace onnxconvert::cli {
namespace {

const FlagSpec kSpecs[] = {{"json", false, ""}, {"output", true, "o"}, {"to", true, ""}};

TEST(ArgsTest, SplitsPositionalAndFlags) {
  std::vector<std::string> args = {"in.onnx", "--json", "-o", "out.onnx", "--to=13"};
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, kSpecs);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->positional, std::vector<std::string>{"in.onnx"});
  EXPECT_TRUE(parsed->Has("json"));
  EXPECT_EQ(parsed->Get("output"), "out.onnx");
  EXPECT_EQ(parsed->Get("to"), "13");
  EXPECT_EQ(parsed->Get("missing"), std::nullopt);
}

// An optional value comes only as --name=VALUE; a bare --name leaves the
// next argument positional.
TEST(ArgsTest, OptionalValueOnlyInline) {
  const FlagSpec specs[] = {{"verify", true, "", true}};
  std::vector<std::string> bare = {"--verify", "model.onnx"};
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(bare, specs);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Get("verify"), "");
  EXPECT_EQ(parsed->positional, std::vector<std::string>{"model.onnx"});
  std::vector<std::string> inline_value = {"--verify=5"};
  parsed = ParseArgs(inline_value, specs);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Get("verify"), "5");
}

TEST(ArgsTest, DoubleDashEndsFlags) {
  std::vector<std::string> args = {"--", "--json"};
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, kSpecs);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->positional, std::vector<std::string>{"--json"});
}

struct ErrorCase {
  std::vector<std::string> args;
  std::string message;
};

TEST(ArgsTest, RejectsBadFlags) {
  const ErrorCase cases[] = {
      {{"--nope"}, "unknown option '--nope'"},
      {{"-o"}, "option -o needs a value"},
      {{"--json=1"}, "option --json takes no value"},
      {{"--to", "1", "--to", "2"}, "option --to given twice"},
  };
  for (const ErrorCase& c : cases) {
    absl::StatusOr<ParsedArgs> parsed = ParseArgs(c.args, kSpecs);
    ASSERT_FALSE(parsed.ok()) << c.message;
    EXPECT_EQ(parsed.status().message(), c.message);
  }
}

}  // namespace
}  // namespace onnxconvert::cli
