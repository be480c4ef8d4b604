#include "cli/batch.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <sstream>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "gtest/gtest.h"
#include "service/server.h"
#include "tests/model_text.h"
#include "tests/test_files.h"

namespace onnxconvert::cli {
namespace {
namespace fs = std::filesystem;
using onnxconvert::testing::FreshTestDir;
using onnxconvert::testing::ReadTestFile;
using onnxconvert::testing::WriteTestFile;

// Every file under `dir`, relative, sorted.
std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), dir).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class BatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "in/sub");
    std::string cnn = ReadTestFile("examples/tiny_cnn.onnx");
    WriteTestFile(dir_ / "in/a.onnx", cnn);
    WriteTestFile(dir_ / "in/c.onnx", cnn);
    WriteTestFile(dir_ / "in/sub/b.onnx", cnn);
  }
  // `batch IN -o OUT --to N --progress lines` plus `extra`.
  Result Batch(const std::string& target, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"batch", In(), "-o", Out(), "--to", target,
                                     "--progress", "lines"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args);
  }
  std::string In() const { return (dir_ / "in").string(); }
  std::string Out() const { return (dir_ / "out").string(); }
  fs::path Out(const std::string& name) const { return dir_ / "out" / name; }
  // Makes the trilu model, which cannot go below opset 14, one of the inputs.
  void AddUnconvertible() {
    WriteTestFile(dir_ / "in/trilu.onnx", onnxconvert::testing::ModelFromText(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (float[2,2] x) => (float[2,2] y) {
        [tri] y = Trilu(x)
      })").SerializeAsString());
  }
  // A server on a free port, its work files under the test's directory.
  absl::StatusOr<std::unique_ptr<service::Server>> StartServer() const {
    service::ServerOptions options;
    options.port = 0;
    options.flush_delay = absl::ZeroDuration();
    options.service.work_dir = dir_.string();
    return service::Server::Start(options);
  }

  fs::path dir_;
};

TEST_F(BatchTest, ConvertsEveryModelWithAReportEachAndASummary) {
  Result result = Batch("17", {"-j", "2"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(FilesUnder(dir_ / "out"),
            (std::vector<std::string>{"a.onnx", "a.report.json", "batch-summary.json", "c.onnx",
                                      "c.report.json", "sub/b.onnx", "sub/b.report.json"}));
  Result single = RunCli({"convert", (dir_ / "in/a.onnx").string(), "-o",
                          (dir_ / "single.onnx").string(), "--to", "17"});
  ASSERT_EQ(single.exit_code, 0);
  EXPECT_EQ(ReadTestFile(Out("a.onnx")), ReadTestFile(dir_ / "single.onnx"));
  EXPECT_EQ(ReadTestFile(Out("sub/b.onnx")), ReadTestFile(dir_ / "single.onnx"));
  EXPECT_TRUE(absl::StrContains(ReadTestFile(Out("a.report.json")), "\"target_opset\": 17"));
  EXPECT_TRUE(absl::StrContains(ReadTestFile(Out("batch-summary.json")), "\"status\": \"ok\""));
  std::vector<std::string> lines = absl::StrSplit(result.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << result.out;
  EXPECT_TRUE(absl::StartsWith(lines[0], "model ")) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "a.onnx      ok       11 -> 17      6")) << lines[1];
  EXPECT_TRUE(absl::StartsWith(lines[3], "sub/b.onnx  ok")) << lines[3];
  EXPECT_EQ(lines[4], "3 models: 3 converted, 0 skipped (up to date), 0 failed");
  EXPECT_TRUE(absl::StrContains(result.err, "/3] ok sub/b.onnx\n")) << result.err;
}

// batch --verify verifies every model: each report says how (or why not).
TEST_F(BatchTest, VerifyReachesEveryModel) {
  Result result = Batch("13", {"--verify=2"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  for (const char* report : {"a.report.json", "c.report.json", "sub/b.report.json"}) {
    EXPECT_TRUE(absl::StrContains(ReadTestFile(Out(report)), "\"verification\"")) << report;
  }
}

// batch --optimize rewrites every converted model as convert --optimize
// does, with both reports; an output made without it is redone.
TEST_F(BatchTest, OptimizeReachesEveryModel) {
  ASSERT_EQ(Batch("17").exit_code, kExitOk);
  Result result = Batch("17", {"--optimize"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "3 converted")) << result.out;
  Result single = RunCli({"convert", (dir_ / "in/a.onnx").string(), "-o",
                          (dir_ / "single.onnx").string(), "--to", "17", "--optimize"});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_EQ(ReadTestFile(Out("a.onnx")), ReadTestFile(dir_ / "single.onnx"));
  std::string report = ReadTestFile(Out("sub/b.report.json"));
  EXPECT_TRUE(absl::StartsWith(report, "{\"conversion\": {")) << report;
  EXPECT_TRUE(absl::StrContains(report, "\"optimize\": {")) << report;
  Result again = Batch("17", {"--optimize"});
  EXPECT_TRUE(absl::StrContains(again.out, "3 skipped")) << again.out;
}

TEST_F(BatchTest, ResumeSkipsCompleteOutputsAndRedoesStaleOnes) {
  ASSERT_EQ(Batch("17").exit_code, kExitOk);
  auto written = fs::last_write_time(Out("a.onnx"));
  Result again = Batch("17");
  EXPECT_EQ(again.exit_code, kExitOk);
  EXPECT_TRUE(absl::StrContains(again.out, "3 models: 0 converted, 3 skipped")) << again.out;
  EXPECT_TRUE(absl::StrContains(again.err, "skipped a.onnx (up to date)")) << again.err;
  EXPECT_EQ(fs::last_write_time(Out("a.onnx")), written);

  // An input changed since: newer than its output.
  fs::last_write_time(dir_ / "in/c.onnx", fs::file_time_type::clock::now() + std::chrono::hours(1));
  // A run killed after the model but before its report.
  fs::remove(Out("sub/b.report.json"));
  Result partly = Batch("17");
  EXPECT_TRUE(absl::StrContains(partly.out, "3 models: 2 converted, 1 skipped")) << partly.out;
  EXPECT_TRUE(fs::exists(Out("sub/b.report.json")));

  // Another target: nothing is complete; --force redoes everything.
  EXPECT_TRUE(absl::StrContains(Batch("18").out, "3 models: 3 converted")) << Batch("18").out;
  EXPECT_TRUE(absl::StrContains(Batch("18", {"--force"}).out, "3 models: 3 converted"));
}

TEST_F(BatchTest, AFailingModelExitsOneLeavingItsErrorAndNoPartialFiles) {
  ASSERT_EQ(Batch("13").exit_code, kExitOk);
  AddUnconvertible();
  // The earlier outputs of trilu (as if it had once converted) must go.
  WriteTestFile(Out("trilu.onnx"), "stale");
  WriteTestFile(Out("trilu.report.json"), "stale");
  Result result = Batch("13");
  EXPECT_EQ(result.exit_code, kExitInvalidModel);
  EXPECT_FALSE(fs::exists(Out("trilu.onnx")));
  EXPECT_FALSE(fs::exists(Out("trilu.report.json")));
  std::string error = ReadTestFile(Out("trilu.error.txt"));
  EXPECT_TRUE(absl::StrContains(error, "trilu.onnx: step 14 -> 13: main")) << error;
  EXPECT_TRUE(absl::StrContains(result.err, "trilu.onnx: step 14 -> 13")) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "trilu.onnx  failed")) << result.out;
  EXPECT_TRUE(
      absl::StrContains(result.out, "4 models: 0 converted, 3 skipped (up to date), 1 failed"))
      << result.out;
  EXPECT_TRUE(absl::StrContains(ReadTestFile(Out("batch-summary.json")), "\"status\": \"failed\""));
  for (const std::string& file : FilesUnder(dir_ / "out")) {
    EXPECT_FALSE(absl::StrContains(file, ".tmp.")) << file;
  }
  // Once it converts, its error file goes.
  fs::remove(dir_ / "in/trilu.onnx");
  WriteTestFile(dir_ / "in/trilu.onnx", ReadTestFile("examples/tiny_cnn.onnx"));
  EXPECT_EQ(Batch("13").exit_code, kExitOk);
  EXPECT_FALSE(fs::exists(Out("trilu.error.txt")));
}

TEST_F(BatchTest, ProgressBarRedrawsInPlace) {
  AddUnconvertible();
  Result result =
      RunCli({"batch", In(), "-o", Out(), "--to", "13", "--progress", "bar", "-j", "1"});
  EXPECT_EQ(result.exit_code, kExitInvalidModel);
  EXPECT_TRUE(absl::StartsWith(result.err, "\r\033[K[#######")) << result.err;
  // A failure gets a line of its own above the bar.
  EXPECT_TRUE(absl::StrContains(result.err, "\r\033[K" + (dir_ / "in/trilu.onnx").string() +
                                                ": step 14 -> 13"))
      << result.err;
  EXPECT_TRUE(absl::EndsWith(result.err,
                             "[##############################] 4/4  ok 3  skipped 0  failed 1\n"))
      << result.err;
  EXPECT_FALSE(absl::StrContains(result.err, "] ok ")) << result.err;
}

TEST_F(BatchTest, ManifestListsModelsRelativeToItself) {
  WriteTestFile(dir_ / "list.manifest", "# two of them\nin/a.onnx\nin/sub/b.onnx\n");
  Result result = RunCli({"batch", (dir_ / "list.manifest").string(), "-o", Out(), "--to", "14",
                          "--report-format", "txt", "--progress", "lines"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(FilesUnder(dir_ / "out"),
            (std::vector<std::string>{"a.onnx", "a.report.txt", "b.onnx", "b.report.txt",
                                      "batch-summary.json"}));
  EXPECT_TRUE(absl::StartsWith(ReadTestFile(Out("a.report.txt")), "opset 11 -> 14,"));
}

TEST_F(BatchTest, ThroughAServerTheOutputsAreTheSame) {
  auto server = StartServer();
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_EQ(Batch("17").exit_code, kExitOk);
  Result remote = RunCli({"batch", In(), "-o", (dir_ / "remote").string(), "--to", "17",
                          "--server", absl::StrCat("127.0.0.1:", (*server)->port()), "-j", "3"});
  ASSERT_EQ(remote.exit_code, kExitOk) << remote.err;
  for (const char* name : {"a.onnx", "c.onnx", "sub/b.onnx"}) {
    EXPECT_EQ(ReadTestFile(dir_ / "remote" / name), ReadTestFile(Out(name))) << name;
  }
}

TEST_F(BatchTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunCli({"batch", In(), "-o", Out()}).exit_code, kExitUsageOrIo);
  EXPECT_EQ(RunCli({"batch", In(), "--to", "13"}).exit_code, kExitUsageOrIo);
  EXPECT_EQ(RunCli({"batch", "-o", Out(), "--to", "13"}).exit_code, kExitUsageOrIo);
  EXPECT_EQ(RunCli({"batch", In(), "-o", Out(), "--to", "13", "-j", "0"}).exit_code,
            kExitUsageOrIo);
  Result missing = RunCli({"batch", (dir_ / "nope").string(), "-o", Out(), "--to", "13"});
  EXPECT_EQ(missing.exit_code, kExitUsageOrIo);
  EXPECT_TRUE(absl::StrContains(missing.err, "nope")) << missing.err;
  EXPECT_FALSE(fs::exists(Out()));
}

TEST_F(BatchTest, ShardsShareTheOutputsEachModelOnceAndResumeApart) {
  WriteTestFile(dir_ / "in/d.onnx", ReadTestFile("examples/tiny_cnn.onnx"));
  WriteTestFile(dir_ / "in/sub/e.onnx", ReadTestFile("examples/tiny_cnn.onnx"));
  const std::vector<std::string> names = {"a.onnx", "c.onnx", "d.onnx", "sub/b.onnx",
                                          "sub/e.onnx"};
  std::vector<int> summaries_naming(names.size(), 0);
  for (int index = 0; index < 3; ++index) {
    std::string shard = absl::StrCat(index, "/3");
    Result result = Batch("17", {"--shard", shard});
    ASSERT_EQ(result.exit_code, kExitOk) << shard << ": " << result.err;
    std::string summary =
        ReadTestFile(Out(absl::StrCat("batch-summary.shard-", index, "-of-3.json")));
    for (size_t i = 0; i < names.size(); ++i) {
      summaries_naming[i] +=
          absl::StrContains(summary, absl::StrCat("\"name\": \"", names[i], "\""));
    }
    // Run again, the shard's models are complete: all skipped.
    Result again = Batch("17", {"--shard", shard});
    EXPECT_FALSE(absl::StrContains(again.out, " ok ")) << again.out;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(summaries_naming[i], 1) << names[i];
    EXPECT_TRUE(fs::exists(Out(names[i]))) << names[i];
  }
  EXPECT_FALSE(fs::exists(Out("batch-summary.json")));
}

TEST_F(BatchTest, BadShardIsAUsageError) {
  for (const char* shard : {"3/3", "-1/3", "0/0", "1", "a/b", "1/2/3"}) {
    EXPECT_EQ(Batch("17", {"--shard", shard}).exit_code, kExitUsageOrIo) << shard;
  }
}

TEST_F(BatchTest, AServerThatIsDownIsAnInfrastructureFailureNotTheModels) {
  AddUnconvertible();
  // Nothing listens on port 1.
  Result result = Batch("13", {"--server", "127.0.0.1:1", "--retries", "0", "-j", "2"});
  EXPECT_EQ(result.exit_code, kExitInfrastructure) << result.err;
  EXPECT_TRUE(absl::StrContains(result.err, "trying again 4 model(s)")) << result.err;
  EXPECT_TRUE(absl::StrContains(ReadTestFile(Out("a.error.txt")),
                                "server 127.0.0.1:1: UNAVAILABLE"));
  EXPECT_TRUE(absl::StrContains(ReadTestFile(Out("batch-summary.json")),
                                "\"infrastructure\": true"));
  EXPECT_FALSE(fs::exists(Out("a.onnx")));
}

TEST_F(BatchTest, ThroughAServerAModelsFailureStillExitsOne) {
  auto server = StartServer();
  ASSERT_TRUE(server.ok()) << server.status();
  AddUnconvertible();
  std::string target = absl::StrCat("ipv4:127.0.0.1:", (*server)->port());
  Result result = Batch("13", {"--server", target, "--lb", "pick_first"});
  EXPECT_EQ(result.exit_code, kExitInvalidModel) << result.err;
  EXPECT_FALSE(absl::StrContains(result.err, "trying again")) << result.err;
  EXPECT_TRUE(absl::StrContains(ReadTestFile(Out("batch-summary.json")),
                                "\"infrastructure\": false"));
  EXPECT_TRUE(fs::exists(Out("a.onnx")));
}

}  // namespace
}  // namespace onnxconvert::cli
