#include "cli/engine.h"

#include <filesystem>

#include "bench/synthetic_models.h"
#include "gtest/gtest.h"
#include "tests/test_files.h"

namespace onnxconvert::cli {
namespace {

using Args = std::vector<std::string>;
namespace fs = std::filesystem;

// The local engine converts a large model from its file, window by window;
// a small one (or a missing file) it leaves to Convert, writing nothing.
TEST(LocalEngineTest, ConvertsLargeModelFilesWindowByWindow) {
  fs::path dir = testing::FreshTestDir("engine");
  converter::ConvertOptions options;
  options.target_opset = 13;
  testing::WriteTestFile(dir / "large.onnx", bench::MakeChainModel(30000).SerializeAsString());
  absl::StatusOr<std::optional<converter::ConversionReport>> large = LocalEngine().ConvertFile(
      (dir / "large.onnx").string(), (dir / "large13.onnx").string(), options);
  ASSERT_TRUE(large.ok()) << large.status();
  ASSERT_TRUE(large->has_value());
  EXPECT_EQ((*large)->nodes_converted, 30000);
  EXPECT_TRUE(fs::exists(dir / "large13.onnx"));
  testing::WriteTestFile(dir / "small.onnx", bench::MakeChainModel(30).SerializeAsString());
  for (const char* name : {"small.onnx", "missing.onnx"}) {
    absl::StatusOr<std::optional<converter::ConversionReport>> small =
        LocalEngine().ConvertFile((dir / name).string(), (dir / "out.onnx").string(), options);
    ASSERT_TRUE(small.ok()) << small.status();
    EXPECT_FALSE(small->has_value()) << name;
    EXPECT_FALSE(fs::exists(dir / "out.onnx"));
  }
}

TEST(TakeServerFlagTest, BeforeOrAfterTheCommandInEitherForm) {
  absl::StatusOr<ServerChoice> before = TakeServerFlag({"--server", "h:1", "check", "m.onnx"});
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->target, "h:1");
  EXPECT_EQ(before->rest, (Args{"check", "m.onnx"}));
  absl::StatusOr<ServerChoice> after = TakeServerFlag({"check", "m.onnx", "--server=h:2"});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->target, "h:2");
  EXPECT_EQ(after->rest, (Args{"check", "m.onnx"}));
}

TEST(TakeServerFlagTest, AbsentFlagLeavesArgumentsAlone) {
  absl::StatusOr<ServerChoice> none = TakeServerFlag({"inspect", "m.onnx", "--json"});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->target.empty());
  EXPECT_EQ(none->rest, (Args{"inspect", "m.onnx", "--json"}));
}

TEST(TakeServerFlagTest, AfterDoubleDashItIsAnArgument) {
  absl::StatusOr<ServerChoice> choice = TakeServerFlag({"check", "--", "--server"});
  ASSERT_TRUE(choice.ok());
  EXPECT_TRUE(choice->target.empty());
  EXPECT_EQ(choice->rest, (Args{"check", "--", "--server"}));
}

TEST(TakeServerFlagTest, MissingValueOrRepeatIsAnError) {
  EXPECT_FALSE(TakeServerFlag({"check", "m.onnx", "--server"}).ok());
  EXPECT_FALSE(TakeServerFlag({"--server=", "check"}).ok());
  absl::StatusOr<ServerChoice> twice =
      TakeServerFlag({"--server", "a:1", "check", "--server", "b:2"});
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(twice.status().message().find("twice"), absl::string_view::npos);
}

TEST(IsServerErrorTest, ModelErrorsAreNotServerErrors) {
  EXPECT_FALSE(IsServerError(absl::InvalidArgumentError("bad model")));
  EXPECT_FALSE(IsServerError(absl::FailedPreconditionError("cannot")));
  EXPECT_TRUE(IsServerError(absl::UnavailableError("down")));
  EXPECT_TRUE(IsServerError(absl::ResourceExhaustedError("busy")));
  EXPECT_TRUE(IsServerError(absl::DeadlineExceededError("late")));
}

}  // namespace
}  // namespace onnxconvert::cli
