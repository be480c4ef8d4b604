// The CLI's help, version, suggestions and completion, for every command of
// the table (issue 22).

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "cli/help.h"
#include "gtest/gtest.h"

namespace onnxconvert::cli {
namespace {

TEST(HelpTest, EveryCommandHasItsOwnHelp) {
  const std::vector<CommandInfo> table = CommandTable();
  ASSERT_GE(table.size(), 10u);
  for (const CommandInfo& command : table) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{command.name, "--help"},
          std::vector<std::string>{command.name, "-h"},
          std::vector<std::string>{"help", command.name}}) {
      Result result = RunCli(args);
      EXPECT_EQ(result.exit_code, 0) << args[0] << " " << args[1] << ": " << result.err;
      EXPECT_TRUE(absl::StartsWith(result.out, absl::StrCat("usage: onnx-convert ", command.name)))
          << result.out;
      EXPECT_TRUE(absl::StrContains(result.out, "example:\n  onnx-convert " + command.name))
          << command.name;
      for (const std::string& option : command.options) {
        EXPECT_TRUE(absl::StrContains(result.out, option + " ") ||
                    absl::StrContains(result.out, option + "[=") ||
                    absl::StrContains(result.out, option + "\n"))
            << command.name << " help lacks " << option;
      }
      // Only this command's usage: no other command's usage line.
      for (const CommandInfo& other : table) {
        if (other.name == command.name) continue;
        EXPECT_FALSE(absl::StrContains(result.out, "usage: onnx-convert " + other.name + " "))
            << command.name;
      }
    }
  }
}

TEST(HelpTest, EveryOptionHasALineOfHelp) {
  for (const CommandInfo& command : CommandTable()) {
    for (const std::string& option : command.options) {
      EXPECT_FALSE(FlagHelp(option.substr(2)).empty()) << command.name << " " << option;
    }
  }
}

TEST(HelpTest, VersionNamesTheToolTheSpecAndTheOpsets) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--version"}, std::vector<std::string>{"version"}}) {
    Result result = RunCli(args);
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_TRUE(absl::StartsWith(result.out, "onnx-convert 0.")) << result.out;
    EXPECT_TRUE(absl::StrContains(result.out, "ONNX spec 1.22: ai.onnx opsets 1-27, "
                                              "ai.onnx.ml opsets 1-5, IR version 13"))
        << result.out;
  }
  Result json = RunCli({"version", "--json"});
  EXPECT_EQ(json.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(json.out, "\"onnx_spec\": \"1.22\"")) << json.out;
  EXPECT_TRUE(absl::StrContains(json.out, "\"ir_version\": 13")) << json.out;
}

struct MisspeltCase {
  std::vector<std::string> args;
  std::string suggestion;  // "" for none
};

TEST(HelpTest, MisspellingsGetASuggestion) {
  const std::vector<MisspeltCase> cases = {
      {{"convrt", "m.onnx"}, "did you mean 'convert'?"},
      {{"optimise", "m.onnx"}, "did you mean 'optimize'?"},
      {{"convert", "m.onnx", "--outptu", "x"}, "did you mean '--output'?"},
      {{"convert", "m.onnx", "--too=13"}, "did you mean '--to'?"},
      {{"optimize", "m.onnx", "--proflie", "exact"}, "did you mean '--profile'?"},
      {{"help", "inspct"}, "did you mean 'inspect'?"},
      {{"convert", "m.onnx", "--zzzzzzzz"}, ""},
      {{"frobnicate"}, ""},
  };
  for (const MisspeltCase& c : cases) {
    Result result = RunCli(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args[0];
    if (c.suggestion.empty()) {
      EXPECT_FALSE(absl::StrContains(result.err, "did you mean")) << result.err;
    } else {
      EXPECT_TRUE(absl::StrContains(result.err, c.suggestion)) << result.err;
    }
  }
}

// Runs `script` with bash; its exit status.
int RunBash(const std::string& script) {
  const std::string path = absl::StrCat(testing::TempDir(), "/completion_test.sh");
  std::ofstream(path) << script;
  return std::system(absl::StrCat("bash ", path, " > ", path, ".out 2>&1").c_str());
}

TEST(HelpTest, BashCompletionCompletesCommandsAndOptions) {
  Result script = RunCli({"completion", "bash"});
  ASSERT_EQ(script.exit_code, 0);
  const std::string file = absl::StrCat(testing::TempDir(), "/onnx-convert.bash");
  std::ofstream(file) << script.out;
  for (const CommandInfo& command : CommandTable()) {
    // The command completes from its first letters.
    std::string check = absl::StrCat(
        "source ", file, "\nCOMP_WORDS=(onnx-convert ", command.name.substr(0, 3),
        ")\nCOMP_CWORD=1\n_onnx_convert\n"
        "for w in \"${COMPREPLY[@]}\"; do [[ $w == ", command.name, " ]] && exit 0; done\nexit 1\n");
    EXPECT_EQ(RunBash(check), 0) << command.name;
    // Each of its options completes after it.
    for (const std::string& option : command.options) {
      std::string after = absl::StrCat(
          "source ", file, "\nCOMP_WORDS=(onnx-convert ", command.name, " ", option.substr(0, 4),
          ")\nCOMP_CWORD=2\n_onnx_convert\n"
          "for w in \"${COMPREPLY[@]}\"; do [[ $w == ", option, " ]] && exit 0; done\nexit 1\n");
      EXPECT_EQ(RunBash(after), 0) << command.name << " " << option;
    }
  }
}

TEST(HelpTest, ZshCompletionListsEveryCommandAndOption) {
  Result script = RunCli({"completion", "zsh"});
  ASSERT_EQ(script.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(script.out, "#compdef onnx-convert"));
  for (const CommandInfo& command : CommandTable()) {
    EXPECT_TRUE(absl::StrContains(script.out, absl::StrCat("    ", command.name, ") _arguments")))
        << command.name;
    for (const std::string& option : command.options) {
      EXPECT_TRUE(absl::StrContains(script.out, absl::StrCat("'", option)))
          << command.name << " " << option;
    }
  }
  EXPECT_EQ(RunCli({"completion", "fish"}).exit_code, 2);
}

}  // namespace
}  // namespace onnxconvert::cli
