#include "cli/batch_inputs.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

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

TEST(CollectBatchJobsTest, SymlinkedModelsKeepTheirNamesAndOutputsStayUnderOutDir) {
  fs::path dir = FreshTestDir("inputs_symlinks");
  fs::create_directories(dir / "elsewhere/case");
  fs::create_directories(dir / "links");
  WriteTestFile(dir / "elsewhere/case/model.onnx", "");
  fs::create_symlink(dir / "elsewhere/case/model.onnx", dir / "links/case.onnx");
  absl::StatusOr<std::vector<BatchJob>> jobs =
      CollectBatchJobs({(dir / "links").string()}, (dir / "out").string(), "json");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(Names(*jobs), (std::vector<std::string>{"case.onnx"}));
  EXPECT_EQ((*jobs)[0].output, (dir / "out/case.onnx").string());
}

TEST(CollectBatchJobsTest, AnOutputThatWouldOverwriteItsInputIsRefused) {
  fs::path dir = FreshTestDir("inputs_self");
  fs::create_directories(dir / "in/sub");
  fs::create_directories(dir / "out");
  WriteTestFile(dir / "in/sub/m.onnx", "");
  // OUTDIR/sub is the input's own folder: sub/m.onnx would be written over itself.
  fs::create_directory_symlink(dir / "in/sub", dir / "out/sub");
  absl::StatusOr<std::vector<BatchJob>> jobs =
      CollectBatchJobs({(dir / "in").string()}, (dir / "out").string(), "json");
  EXPECT_EQ(jobs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(jobs.status().message().find("overwrite"), absl::string_view::npos)
      << jobs.status();
}

// Jobs named `names`, their files beside them.
std::vector<BatchJob> JobsNamed(const std::vector<std::string>& names) {
  std::vector<BatchJob> jobs;
  for (const std::string& name : names) jobs.push_back({name, name, name, name, name});
  return jobs;
}

TEST(ShardTest, EveryJobFallsInExactlyOneShardInItsOrder) {
  std::vector<std::string> names;
  for (int i = 0; i < 500; ++i) names.push_back("dir" + std::to_string(i % 7) + "/m" +
                                                std::to_string(i) + ".onnx");
  for (int count : {1, 2, 3, 7, 16}) {
    std::vector<std::string> seen;
    for (int index = 0; index < count; ++index) {
      std::vector<std::string> shard = Names(JobsOfShard(JobsNamed(names), {index, count}));
      // In the input order, and no shard of a few hundred jobs is empty.
      EXPECT_TRUE(std::is_sorted(shard.begin(), shard.end(),
                                 [&](const std::string& a, const std::string& b) {
                                   return std::find(names.begin(), names.end(), a) <
                                          std::find(names.begin(), names.end(), b);
                                 }))
          << index << "/" << count;
      EXPECT_FALSE(shard.empty()) << index << "/" << count;
      for (const std::string& name : shard) EXPECT_EQ(ShardOf(name, count), index) << name;
      seen.insert(seen.end(), shard.begin(), shard.end());
    }
    std::sort(seen.begin(), seen.end());
    std::vector<std::string> all = names;
    std::sort(all.begin(), all.end());
    EXPECT_EQ(seen, all) << count << " shards";
  }
}

TEST(ShardTest, TheShardIsTheFnv1aHashOfTheNameInEveryRun) {
  // Published FNV-1a 64-bit values: the same in every process, unlike
  // std::hash or absl::Hash.
  struct Case {
    const char* name;
    uint64_t fnv1a;
  };
  const Case cases[] = {{"", 0xcbf29ce484222325ull},
                        {"a", 0xaf63dc4c8601ec8cull},
                        {"foobar", 0x85944171f73967e8ull}};
  for (const Case& c : cases) {
    for (int count : {2, 3, 10, 1000}) {
      EXPECT_EQ(ShardOf(c.name, count), static_cast<int>(c.fnv1a % count)) << c.name;
    }
  }
}

}  // namespace
}  // namespace onnxconvert::cli
