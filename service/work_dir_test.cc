#include "service/work_dir.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/test_files.h"

namespace onnxconvert::service {
namespace {

namespace fs = std::filesystem;

// A pid that names no process: a child that has exited and been reaped.
pid_t DeadPid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

TEST(WorkDirTest, NamesOfProcessWorkFolders) {
  struct Case {
    const char* name;
    bool matches;
  };
  const Case kCases[] = {
      {"onnx-convert-1234-1764160000000000", true},
      {"onnx-convert-stream-AbC123", false},  // a call's folder, not a process's
      {"onnx-convert-1234", false},
      {"onnx-convert-12a4-5", false},
      {"other-1234-5", false},
  };
  for (const Case& c : kCases) EXPECT_EQ(IsProcessWorkDirName(c.name), c.matches) << c.name;
}

TEST(WorkDirTest, OwnFolderIsLockedAndRemovedWhenDestroyed) {
  fs::path parent = onnxconvert::testing::FreshTestDir("work_own");
  auto work_dir = ProcessWorkDir::Create(parent.string());
  ASSERT_TRUE(work_dir.ok()) << work_dir.status();
  std::string path = (*work_dir)->path();
  EXPECT_TRUE(IsProcessWorkDirName(fs::path(path).filename().string()));
  EXPECT_TRUE(fs::is_directory(path));
  // A live folder survives the removal of stale ones.
  EXPECT_TRUE(RemoveStaleWorkDirs(parent.string()).empty());
  EXPECT_TRUE(fs::is_directory(path));
  work_dir->reset();
  EXPECT_FALSE(fs::exists(path));
}

TEST(WorkDirTest, FoldersOfDeadProcessesAreRemovedOthersKept) {
  fs::path parent = onnxconvert::testing::FreshTestDir("work_stale");
  // Unlocked lock file: its process is gone.
  fs::path unlocked = parent / "onnx-convert-1-100";
  fs::create_directories(unlocked / "onnx-convert-stream-x" / "in");
  onnxconvert::testing::WriteTestFile(unlocked / ".lock", "");
  // No lock file, and its pid names no process.
  fs::path dead = parent / absl::StrCat("onnx-convert-", DeadPid(), "-200");
  fs::create_directories(dead);
  // No lock file, and its pid is alive (this process): maybe being made.
  fs::path making = parent / absl::StrCat("onnx-convert-", getpid(), "-300");
  fs::create_directories(making);
  // Not a process work folder.
  fs::path other = parent / "keep-me";
  fs::create_directories(other);

  std::vector<std::string> removed;
  auto work_dir = ProcessWorkDir::Create(parent.string(), &removed);
  ASSERT_TRUE(work_dir.ok()) << work_dir.status();
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_FALSE(fs::exists(unlocked));
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(making));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists((*work_dir)->path()));
}

TEST(WorkDirTest, UnusableParentIsAnErrorNamingIt) {
  fs::path parent = onnxconvert::testing::FreshTestDir("work_bad");
  onnxconvert::testing::WriteTestFile(parent / "file", "x");
  auto work_dir = ProcessWorkDir::Create((parent / "file").string());
  ASSERT_FALSE(work_dir.ok());
  EXPECT_NE(work_dir.status().message().find((parent / "file").string()), std::string::npos);
}

}  // namespace
}  // namespace onnxconvert::service
