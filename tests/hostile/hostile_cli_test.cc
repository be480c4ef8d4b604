// Every hostile input of the catalogue, fed to `onnx-convert` check, infer,
// convert --to 7 and --to 21 (text: parse) as a process under a 4 GB
// address-space limit: it must exit 0, 1 or 2 within 30 s, say what went
// wrong in at most one line on stderr, and leave no partial output file.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/hostile/hostile_models.h"
#include "tests/test_files.h"

namespace onnxconvert::testing {
namespace {

namespace fs = std::filesystem;

constexpr rlim_t kAddressSpace = rlim_t{4} << 30;
#ifdef __SANITIZE_ADDRESS__
// Under ASan (no address-space limit, no memory budget, several times
// slower) the string amplifier is a tenth the size and time is longer.
constexpr auto kTimeLimit = std::chrono::seconds(300);
constexpr int kStrings = 3'000'000;
#else
constexpr auto kTimeLimit = std::chrono::seconds(30);
constexpr int kStrings = 30'000'000;
#endif

// How one run ended.
struct Outcome {
  bool exited = false;   // on its own, not by a signal or the time limit
  int code = -1;         // exit code, or the signal
  std::string err;       // what it wrote to stderr
  double seconds = 0;
};

Outcome RunCli(const std::vector<std::string>& args, const fs::path& dir) {
  const std::string err_path = (dir / "stderr.txt").string();
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
#ifndef __SANITIZE_ADDRESS__  // ASan maps terabytes of shadow memory
    rlimit limit{kAddressSpace, kAddressSpace};
    setrlimit(RLIMIT_AS, &limit);
#endif
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = open("/dev/null", O_WRONLY);
    dup2(err, 2);
    dup2(null, 1);
    std::vector<char*> argv;
    std::string binary = "cli/onnx-convert";
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (std::string& arg : copy) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Outcome outcome;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - start > kTimeLimit) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      outcome.err = absl::StrCat("killed after ", kTimeLimit.count(), " s");
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  outcome.exited = WIFEXITED(status);
  outcome.code = outcome.exited ? WEXITSTATUS(status) : WTERMSIG(status);
  outcome.err = ReadTestFile(err_path);
  return outcome;
}

TEST(HostileCliTest, EveryHostileInputEndsWithAnExitCodeAndOneLine) {
  const std::vector<HostileModel> models = HostileModels(kStrings);
  ASSERT_GE(models.size(), 50u);
  int runs = 0;
  for (const HostileModel& model : models) {
    const fs::path dir = FreshTestDir(absl::StrCat("hostile/", model.name)) / "model";
    fs::create_directories(dir);
    const fs::path input = dir / (model.text ? "model.txt" : "model.onnx");
    WriteTestFile(input, model.bytes);
    if (!model.linked_data.empty()) {
      const fs::path outside = dir.parent_path() / "outside.bin";
      WriteTestFile(outside, "secret");
      fs::create_hard_link(outside, dir / model.linked_data);
    }
    const fs::path output = dir.parent_path() / "out.onnx";
    std::vector<std::vector<std::string>> commands;
    if (model.text) {
      commands = {{"parse", input.string(), "-o", output.string()}};
    } else {
      commands = {{"check", input.string()},
                  {"infer", input.string(), "-o", output.string()},
                  {"convert", input.string(), "--to", "7", "-o", output.string()},
                  {"convert", input.string(), "--to", "21", "-o", output.string()},
                  {"optimize", input.string(), "-o", output.string()},
                  {"optimize", input.string(), "--profile", "deploy", "-o", output.string()}};
    }
    for (const std::vector<std::string>& command : commands) {
      fs::remove(output);
      const std::string label =
          absl::StrCat(model.name, ": ", command[0],
                       command[0] == "convert" ||
                               (command.size() > 3 && command[2] == "--profile")
                           ? command[3]
                           : "");
      Outcome outcome = RunCli(command, dir.parent_path());
      ++runs;
      std::cout << label << " -> exit " << outcome.code << " in " << outcome.seconds << " s: "
                << outcome.err.substr(0, outcome.err.find('\n')).substr(0, 200) << "\n";
      EXPECT_TRUE(outcome.exited) << label << ": ended by signal " << outcome.code << " "
                                  << outcome.err;
      EXPECT_TRUE(outcome.code == 0 || outcome.code == 1 || outcome.code == 2)
          << label << ": exit " << outcome.code;
      std::vector<absl::string_view> lines =
          absl::StrSplit(outcome.err, '\n', absl::SkipEmpty());
      EXPECT_LE(lines.size(), 1u) << label << ":\n" << outcome.err;
      EXPECT_FALSE(absl::StrContains(outcome.err, "libprotobuf")) << label << ": " << outcome.err;
      EXPECT_FALSE(absl::StrContains(outcome.err, "Sanitizer")) << label << ": " << outcome.err;
      if (model.invalid && command[0] == "check") {
        EXPECT_EQ(outcome.code, 1) << label << ": an invalid model passed the check";
      }
      if (outcome.code != 0 && command.size() > 2) {
        EXPECT_FALSE(fs::exists(output)) << label << ": a failed run left " << output;
      }
    }
  }
  std::cout << runs << " runs of " << models.size() << " hostile inputs\n";
}

}  // namespace
}  // namespace onnxconvert::testing
