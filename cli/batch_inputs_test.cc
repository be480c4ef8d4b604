#include "cli/batch_inputs.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

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

// Empty files at `paths` under `dir`, their folders created.
void EmptyFiles(const fs::path& dir, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    fs::create_directories((dir / path).parent_path());
    WriteTestFile(dir / path, "");
  }
}

// A symbolic link at `link` to `target` (a file or a folder), the link's
// folder created.
void Symlink(const fs::path& target, const fs::path& link) {
  fs::create_directories(link.parent_path());
  fs::create_symlink(target, link);
}

// The jobs of `inputs`, paths under `dir`, with dir/out the output folder
// and reports in `format`.
absl::StatusOr<std::vector<BatchJob>> Collect(const fs::path& dir,
                                              const std::vector<std::string>& inputs,
                                              const std::string& format = "json") {
  std::vector<std::string> paths;
  for (const std::string& input : inputs) paths.push_back((dir / input).string());
  return CollectBatchJobs(paths, (dir / "out").string(), format);
}

TEST(CollectBatchJobsTest, DirectoriesFilesAndManifests) {
  fs::path dir = FreshTestDir("inputs_mixed");
  EmptyFiles(dir, {"models/b.onnx", "models/sub/a.onnx", "models/notes.txt",
                   "models/.hidden.onnx", "single.onnx", "listed/c.pb"});
  WriteTestFile(dir / "list.manifest", "# models to convert\n\nlisted/c.pb\n  single.onnx  \n");
  absl::StatusOr<std::vector<BatchJob>> jobs =
      Collect(dir, {"models", "single.onnx", "list.manifest"});
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
  EmptyFiles(dir, {"a.onnx", "out/a.onnx"});
  absl::StatusOr<std::vector<BatchJob>> jobs =
      CollectBatchJobs({dir.string()}, (dir / "out").string(), "txt");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(Names(*jobs), (std::vector<std::string>{"a.onnx"}));
  EXPECT_EQ((*jobs)[0].report, (dir / "out/a.report.txt").string());
}

TEST(CollectBatchJobsTest, TwoModelsForOneOutputIsAnErrorNamingBoth) {
  fs::path dir = FreshTestDir("inputs_clash");
  EmptyFiles(dir, {"x/m.onnx", "y/m.onnx"});
  absl::StatusOr<std::vector<BatchJob>> jobs = Collect(dir, {"x/m.onnx", "y/m.onnx"});
  EXPECT_EQ(jobs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(jobs.status().message().find("x/m.onnx"), absl::string_view::npos);
  EXPECT_NE(jobs.status().message().find("y/m.onnx"), absl::string_view::npos);
}

TEST(CollectBatchJobsTest, MissingInputsAndEmptyBatchesAreErrors) {
  fs::path dir = FreshTestDir("inputs_missing");
  absl::StatusOr<std::vector<BatchJob>> missing = Collect(dir, {"nope.onnx"});
  EXPECT_NE(missing.status().message().find("nope.onnx"), absl::string_view::npos);
  WriteTestFile(dir / "list.txt", "gone.onnx\n");
  absl::StatusOr<std::vector<BatchJob>> bad_line = Collect(dir, {"list.txt"});
  EXPECT_NE(bad_line.status().message().find("list.txt:1"), absl::string_view::npos)
      << bad_line.status();
  fs::create_directories(dir / "empty");
  absl::StatusOr<std::vector<BatchJob>> empty = Collect(dir, {"empty"});
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CollectBatchJobsTest, SymlinkedModelsKeepTheirNamesAndOutputsStayUnderOutDir) {
  fs::path dir = FreshTestDir("inputs_symlinks");
  EmptyFiles(dir, {"elsewhere/case/model.onnx"});
  Symlink(dir / "elsewhere/case/model.onnx", dir / "links/case.onnx");
  absl::StatusOr<std::vector<BatchJob>> jobs = Collect(dir, {"links"});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(Names(*jobs), (std::vector<std::string>{"case.onnx"}));
  EXPECT_EQ((*jobs)[0].output, (dir / "out/case.onnx").string());
}

TEST(CollectBatchJobsTest, AnOutputThatWouldOverwriteItsInputIsRefused) {
  fs::path dir = FreshTestDir("inputs_self");
  EmptyFiles(dir, {"in/sub/m.onnx"});
  // OUTDIR/sub is the input's own folder: sub/m.onnx would be written over itself.
  Symlink(dir / "in/sub", dir / "out/sub");
  absl::StatusOr<std::vector<BatchJob>> jobs = Collect(dir, {"in"});
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
