#include "cli/batch_inputs.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "tests/test_files.h"

namespace onnxconvert::cli {
namespace {
namespace fs = std::filesystem;
using onnxconvert::testing::FreshTestDir;
using onnxconvert::testing::WriteTestFile;

std::vector<std::string> Names(const std::vector<BatchJob>& jobs) {
  std::vector<std::string> names;
  for (const BatchJob& job : jobs) names.push_back(job.name);
  return names;
}

TEST(CollectBatchJobsTest, DirectoriesFilesAndManifests) {
  fs::path dir = FreshTestDir("inputs_mixed");
  fs::create_directories(dir / "models/sub");
  WriteTestFile(dir / "models/b.onnx", "");
  WriteTestFile(dir / "models/sub/a.onnx", "");
  WriteTestFile(dir / "models/notes.txt", "");
  WriteTestFile(dir / "models/.hidden.onnx", "");
  WriteTestFile(dir / "single.onnx", "");
  fs::create_directories(dir / "listed");
  WriteTestFile(dir / "listed/c.pb", "");
  WriteTestFile(dir / "list.manifest", "# models to convert\n\nlisted/c.pb\n  single.onnx  \n");
  absl::StatusOr<std::vector<BatchJob>> jobs =
      CollectBatchJobs({(dir / "models").string(), (dir / "single.onnx").string(),
                        (dir / "list.manifest").string()},
                       (dir / "out").string(), "json");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  // single.onnx is listed twice and runs once.
  EXPECT_EQ(Names(*jobs),
            (std::vector<std::string>{"b.onnx", "sub/a.onnx", "single.onnx", "c.pb"}));
  const BatchJob& nested = (*jobs)[1];
  EXPECT_EQ(nested.input, (dir / "models/sub/a.onnx").string());
  EXPECT_EQ(nested.output, (dir / "out/sub/a.onnx").string());
  EXPECT_EQ(nested.report, (dir / "out/sub/a.report.json").string());
  EXPECT_EQ(nested.error, (dir / "out/sub/a.error.txt").string());
  EXPECT_EQ((*jobs)[3].report, (dir / "out/c.pb.report.json").string());
}

TEST(CollectBatchJobsTest, OutputDirectoryInsideAnInputIsSkipped) {
  fs::path dir = FreshTestDir("inputs_outdir");
  fs::create_directories(dir / "out");
  WriteTestFile(dir / "a.onnx", "");
  WriteTestFile(dir / "out/a.onnx", "");
  absl::StatusOr<std::vector<BatchJob>> jobs =
      CollectBatchJobs({dir.string()}, (dir / "out").string(), "txt");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(Names(*jobs), (std::vector<std::string>{"a.onnx"}));
  EXPECT_EQ((*jobs)[0].report, (dir / "out/a.report.txt").string());
}

TEST(CollectBatchJobsTest, TwoModelsForOneOutputIsAnErrorNamingBoth) {
  fs::path dir = FreshTestDir("inputs_clash");
  fs::create_directories(dir / "x");
  fs::create_directories(dir / "y");
  WriteTestFile(dir / "x/m.onnx", "");
  WriteTestFile(dir / "y/m.onnx", "");
  absl::StatusOr<std::vector<BatchJob>> jobs = CollectBatchJobs(
      {(dir / "x/m.onnx").string(), (dir / "y/m.onnx").string()}, (dir / "out").string(), "json");
  EXPECT_EQ(jobs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(jobs.status().message().find("x/m.onnx"), absl::string_view::npos);
  EXPECT_NE(jobs.status().message().find("y/m.onnx"), absl::string_view::npos);
}

TEST(CollectBatchJobsTest, MissingInputsAndEmptyBatchesAreErrors) {
  fs::path dir = FreshTestDir("inputs_missing");
  absl::StatusOr<std::vector<BatchJob>> missing =
      CollectBatchJobs({(dir / "nope.onnx").string()}, (dir / "out").string(), "json");
  EXPECT_NE(missing.status().message().find("nope.onnx"), absl::string_view::npos);
  WriteTestFile(dir / "list.txt", "gone.onnx\n");
  absl::StatusOr<std::vector<BatchJob>> bad_line =
      CollectBatchJobs({(dir / "list.txt").string()}, (dir / "out").string(), "json");
  EXPECT_NE(bad_line.status().message().find("list.txt:1"), absl::string_view::npos)
      << bad_line.status();
  fs::create_directories(dir / "empty");
  absl::StatusOr<std::vector<BatchJob>> empty =
      CollectBatchJobs({(dir / "empty").string()}, (dir / "out").string(), "json");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnxconvert::cli
