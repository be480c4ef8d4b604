#include "cli/engine.h"

#include <filesystem>

#include "bench/synthetic_models.h"
#include "converter/converter.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/test_files.h"

namespace onnxconvert::cli {
namespace {

using Args = std::vector<std::string>;
namespace fs = std::filesystem;

// The local engine converts a model from its file: a large one window by
// window, a small one whole on an arena, both as Convert would. What needs
// the loader or Convert's own error it leaves to them, writing nothing.
TEST(LocalEngineTest, ConvertsModelFilesAsConvertWould) {
  fs::path dir = testing::FreshTestDir("engine");
  converter::ConvertOptions options;
  options.target_opset = 13;
  for (int nodes : {30000, 30}) {
    onnx::ModelProto model = bench::MakeChainModel(nodes);
    testing::WriteTestFile(dir / "in.onnx", model.SerializeAsString());
    absl::StatusOr<std::optional<converter::ConversionReport>> converted =
        LocalEngine().ConvertFile((dir / "in.onnx").string(), (dir / "out.onnx").string(),
                                  options);
    ASSERT_TRUE(converted.ok()) << converted.status();
    ASSERT_TRUE(converted->has_value()) << nodes;
    absl::StatusOr<converter::ConversionResult> whole = converter::ConvertModel(model, options);
    ASSERT_TRUE(whole.ok()) << whole.status();
    EXPECT_EQ((*converted)->nodes_converted, whole->report.nodes_converted) << nodes;
    EXPECT_TRUE(testing::ReadTestFile(dir / "out.onnx") == whole->model.SerializeAsString())
        << nodes;
    fs::remove(dir / "out.onnx");
  }

  onnx::ModelProto external = bench::MakeChainModel(30);
  onnx::TensorProto& weight = *external.mutable_graph()->mutable_initializer(0);
  weight.clear_raw_data();
  weight.set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = weight.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  testing::WriteTestFile(dir / "external.onnx", external.SerializeAsString());
  onnx::ModelProto unknown_op = bench::MakeChainModel(30);
  unknown_op.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  testing::WriteTestFile(dir / "unknown_op.onnx", unknown_op.SerializeAsString());
  testing::WriteTestFile(dir / "garbage.onnx", "\xff\xff\xff");
  for (const char* name : {"external.onnx", "unknown_op.onnx", "garbage.onnx", "missing.onnx"}) {
    absl::StatusOr<std::optional<converter::ConversionReport>> left =
        LocalEngine().ConvertFile((dir / name).string(), (dir / "out.onnx").string(), options);
    ASSERT_TRUE(left.ok()) << left.status();
    EXPECT_FALSE(left->has_value()) << name;
    EXPECT_FALSE(fs::exists(dir / "out.onnx")) << name;
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

TEST(TakeServerFlagTest, BalancingAndRetriesGoWithTheServer) {
  absl::StatusOr<ServerChoice> choice = TakeServerFlag(
      {"--server", "ipv4:127.0.0.1:1,127.0.0.1:2", "batch", "--lb=pick_first", "--retries", "0",
       "in"});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->target, "ipv4:127.0.0.1:1,127.0.0.1:2");
  EXPECT_EQ(choice->connection.lb_policy, "pick_first");
  EXPECT_EQ(choice->connection.retries, 0);
  EXPECT_EQ(choice->rest, (Args{"batch", "in"}));
  absl::StatusOr<ServerChoice> defaults = TakeServerFlag({"--server=unix:/tmp/s", "check"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->connection.lb_policy, "round_robin");
  EXPECT_EQ(defaults->connection.retries, 4);
}

TEST(TakeServerFlagTest, BadBalancingOrRetriesAreErrors) {
  const std::vector<Args> bad = {
      {"--server", "h:1", "--lb", "random", "check"},
      {"--server", "h:1", "--retries", "5", "check"},
      {"--server", "h:1", "--retries=-1", "check"},
      {"--server", "h:1", "--retries", "x", "check"},
      {"--server", "h:1", "--lb", "round_robin", "--lb", "pick_first", "check"},
      {"--lb", "pick_first", "check"},
      {"--retries", "2", "check"},
  };
  for (const Args& args : bad) {
    EXPECT_EQ(TakeServerFlag(args).status().code(), absl::StatusCode::kInvalidArgument)
        << absl::StrJoin(args, " ");
  }
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
