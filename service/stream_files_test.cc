#include "service/stream_files.h"

#include <filesystem>
#include <fstream>
#include <optional>

#include "gtest/gtest.h"
#include "service/testing/output_chunks.h"
#include "tests/test_files.h"

namespace onnxconvert::service {
namespace {
namespace fs = std::filesystem;

std::unique_ptr<StreamWorkspace> Workspace(const std::string& test, UploadLimits limits = {}) {
  std::string parent = onnxconvert::testing::FreshTestDir(test).string();
  auto workspace = StreamWorkspace::Create(parent, "m.onnx", limits);
  EXPECT_TRUE(workspace.ok()) << workspace.status();
  return *std::move(workspace);
}

TEST(StreamWorkspaceTest, ChunksAppendInOrderEvenInterleaved) {
  auto workspace = Workspace("ws_append");
  ASSERT_TRUE(workspace->Append("", "mod").ok());
  ASSERT_TRUE(workspace->Append("data/w.bin", "12").ok());
  ASSERT_TRUE(workspace->Append("", "el").ok());
  ASSERT_TRUE(workspace->Append("data/w.bin", "34").ok());
  ASSERT_TRUE(workspace->FinishUpload().ok());
  EXPECT_EQ(onnxconvert::testing::ReadTestFile(workspace->input_model_path()), "model");
  EXPECT_EQ(onnxconvert::testing::ReadTestFile(workspace->input_dir() + "/data/w.bin"), "1234");
  EXPECT_EQ(workspace->uploaded_bytes(), 9);
}

TEST(StreamWorkspaceTest, RefusesLocationsOutsideTheModelsDirectory) {
  auto workspace = Workspace("ws_refuse");
  for (const char* name : {"../escape.bin", "/etc/passwd", "a/../../b", "m.onnx"}) {
    absl::Status status = workspace->Append(name, "x");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_NE(status.message().find(name), absl::string_view::npos) << status;
  }
}

TEST(StreamWorkspaceTest, OverlongLocationsAreInvalidArgumentQuotedShort) {
  auto workspace = Workspace("ws_overlong");
  for (const std::string& name : {std::string(5000, 'n'), "dir/" + std::string(300, 'n')}) {
    absl::Status status = workspace->Append(name, "x");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name.size();
    EXPECT_LT(status.message().size(), 300u) << status.message().substr(0, 300);
    EXPECT_NE(status.message().find("nnnn"), absl::string_view::npos);
  }
  EXPECT_TRUE(workspace->Append(std::string(255, 'n'), "x").ok());
}

TEST(StreamWorkspaceTest, AttachedWorkspaceSharesTheFilesAndLeavesThemInPlace) {
  auto workspace = Workspace("ws_attach");
  ASSERT_TRUE(workspace->Append("", "model").ok());
  ASSERT_TRUE(workspace->FinishUpload().ok());
  {
    absl::StatusOr<std::unique_ptr<StreamWorkspace>> attached =
        StreamWorkspace::Attach(workspace->root(), workspace->model_file());
    ASSERT_TRUE(attached.ok()) << attached.status();
    EXPECT_EQ((*attached)->input_model_path(), workspace->input_model_path());
    EXPECT_EQ((*attached)->output_model_path(), workspace->output_model_path());
  }
  EXPECT_TRUE(fs::exists(workspace->input_model_path()));
  EXPECT_EQ(StreamWorkspace::Attach(workspace->root() + "/nowhere", "m.onnx").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(StreamWorkspaceTest, LimitsAreResourceExhausted) {
  auto workspace = Workspace("ws_limits", UploadLimits{4, 6, 2});
  EXPECT_TRUE(workspace->Append("", "1234").ok());
  EXPECT_EQ(workspace->Append("", "5").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(workspace->Append("a", "12").ok());
  EXPECT_EQ(workspace->Append("a", "3").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(workspace->Append("b", "").code(), absl::StatusCode::kResourceExhausted);
}

TEST(StreamWorkspaceTest, ReadOutputsSinkMayTakeEachChunksString) {
  auto workspace = Workspace("ws_take");
  onnxconvert::testing::WriteTestFile(workspace->output_model_path(), "0123456789");
  std::vector<std::string> taken;
  ASSERT_TRUE(workspace
                  ->ReadOutput("", 4,
                               [&](std::string& piece) {
                                 taken.emplace_back().swap(piece);  // left empty
                                 return absl::OkStatus();
                               })
                  .ok());
  EXPECT_EQ(taken, (std::vector<std::string>{"0123", "4567", "89"}));
}

// ReadOutput leaves the ranges to skip out, and no chunk spans the start
// of one; ranges out of order or past the file's end are Internal.
TEST(StreamWorkspaceTest, ReadOutputSkipsRanges) {
  using Range = StreamWorkspace::ByteRange;
  struct Case {
    const char* name;
    std::vector<Range> skip;
    std::vector<std::string> chunks;  // empty: an Internal error
  };
  const Case cases[] = {
      {"none", {}, {"0123", "4567", "89"}},
      {"inside", {{2, 3}}, {"01", "5678", "9"}},
      {"first_and_last", {{0, 2}, {8, 2}}, {"2345", "67"}},
      {"adjacent", {{1, 1}, {2, 1}}, {"0", "3456", "789"}},
      {"whole", {{0, 10}}, {}},
      {"past_the_end", {{8, 4}}, {}},
      {"out_of_order", {{6, 1}, {2, 1}}, {}},
  };
  auto workspace = Workspace("ws_skip");
  onnxconvert::testing::WriteTestFile(workspace->output_model_path(), "0123456789");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> chunks;
    absl::Status status = workspace->ReadOutput(
        "", 4,
        [&](std::string& piece) {
          chunks.push_back(piece);
          return absl::OkStatus();
        },
        c.skip);
    bool whole = std::string_view(c.name) == "whole";
    if (c.chunks.empty() && !whole) {
      EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
      continue;
    }
    EXPECT_TRUE(status.ok()) << status;
    EXPECT_EQ(chunks, c.chunks);
  }
}

TEST(StreamWorkspaceTest, UploadWithoutModelBytesIsInvalid) {
  auto workspace = Workspace("ws_empty");
  ASSERT_TRUE(workspace->Append("w.bin", "1").ok());
  EXPECT_EQ(workspace->FinishUpload().code(), absl::StatusCode::kInvalidArgument);
}

TEST(StreamWorkspaceTest, OutputFilesListTheModelFirstAndReadBackInChunks) {
  auto workspace = Workspace("ws_output");
  fs::path out = fs::path(workspace->output_model_path()).parent_path();
  onnxconvert::testing::WriteTestFile(out / "m.onnx.data", "abcdefg");
  onnxconvert::testing::WriteTestFile(workspace->output_model_path(), "MODEL");
  auto files = workspace->OutputFiles();
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0], std::make_pair(std::string(""), int64_t{5}));
  EXPECT_EQ((*files)[1], std::make_pair(std::string("m.onnx.data"), int64_t{7}));
  absl::StatusOr<std::vector<std::string>> chunks =
      testing::OutputChunks(*workspace, "m.onnx.data", 3);
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  EXPECT_EQ(*chunks, (std::vector<std::string>{"abc", "def", "g"}));
}

TEST(StreamWorkspaceTest, UploadSameAsNamesOnlyUploadsMovedUnchanged) {
  auto workspace = Workspace("ws_same");
  ASSERT_TRUE(workspace->Append("", "model").ok());
  for (const char* name : {"moved.bin", "copied.bin", "sub/moved.bin", "written.bin"}) {
    ASSERT_TRUE(workspace->Append(name, "0123").ok());
  }
  ASSERT_TRUE(workspace->FinishUpload().ok());
  fs::path in = workspace->input_dir();
  fs::path out = fs::path(workspace->output_model_path()).parent_path();
  fs::create_directories(out / "d");
  fs::rename(in / "moved.bin", out / "m.onnx.data");
  fs::rename(in / "sub/moved.bin", out / "d/w.bin");
  fs::copy_file(in / "copied.bin", out / "copy.bin");
  fs::rename(in / "written.bin", out / "written.bin");
  std::ofstream(out / "written.bin", std::ios::app) << "4";  // changed after the move
  onnxconvert::testing::WriteTestFile(workspace->output_model_path(), "MODEL");
  const std::pair<const char*, std::optional<std::string>> cases[] = {
      {"m.onnx.data", "moved.bin"}, {"d/w.bin", "sub/moved.bin"}, {"copy.bin", std::nullopt},
      {"written.bin", std::nullopt}, {"", std::nullopt}, {"absent.bin", std::nullopt},
  };
  for (const auto& [output, upload] : cases) {
    EXPECT_EQ(workspace->UploadSameAs(output), upload) << output;
  }
}

TEST(StreamWorkspaceTest, RelabelHidesServerPathsAndTheDirectoryGoesAway) {
  auto workspace = Workspace("ws_relabel");
  std::string root = fs::path(workspace->input_dir()).parent_path().string();
  absl::Status relabelled = workspace->Relabel(
      absl::NotFoundError(workspace->input_model_path() + ": tensor 'W': " +
                          workspace->input_dir() + "/w.bin not found"),
      "client/m.onnx");
  EXPECT_EQ(relabelled.message(), "client/m.onnx: tensor 'W': w.bin not found");
  EXPECT_TRUE(fs::exists(root));
  workspace.reset();
  EXPECT_FALSE(fs::exists(root));
}

TEST(ModelFileNameTest, KeepsPlainNamesOnly) {
  EXPECT_EQ(ModelFileName("dir/sub/model-1.onnx"), "model-1.onnx");
  EXPECT_EQ(ModelFileName("model.onnx"), "model.onnx");
  EXPECT_EQ(ModelFileName(""), "model.onnx");
  EXPECT_EQ(ModelFileName("dir/.."), "model.onnx");
  EXPECT_EQ(ModelFileName("we ird$.onnx"), "model.onnx");
}

}  // namespace
}  // namespace onnxconvert::service
