// `onnx-convert --server`: the same output as a local run.
#include <filesystem>
#include <regex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "gtest/gtest.h"
#include "ir/model_io.h"
#include "service/server.h"
#include "service/testing/test_models.h"
#include "tests/model_text.h"
#include "tests/test_files.h"

namespace onnxconvert::cli {
namespace {
namespace fs = std::filesystem;
using onnxconvert::testing::FreshTestDir;
using onnxconvert::testing::ReadTestFile;
using onnxconvert::testing::WriteTestFile;

// Timings differ from run to run, wherever the work runs.
std::string WithoutTimings(const std::string& text) {
  static const std::regex kTextMs(R"(\(\d+\.\d ms\))");
  static const std::regex kJsonMs(R"("milliseconds": [0-9.eE+-]+)");
  return std::regex_replace(std::regex_replace(text, kTextMs, "(ms)"), kJsonMs,
                            "\"milliseconds\": 0");
}

void ExpectSameRun(const Result& local, const Result& remote, const std::string& what) {
  EXPECT_EQ(remote.exit_code, local.exit_code) << what << "\n" << remote.err;
  EXPECT_EQ(WithoutTimings(remote.out), WithoutTimings(local.out)) << what;
  EXPECT_EQ(remote.err, local.err) << what;
}

class RemoteCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    service::ServerOptions options;
    options.port = 0;
    options.flush_delay = absl::ZeroDuration();  // nothing is in flight at teardown
    options.service.work_dir = FreshTestDir("remote_cli_work").string();
    auto server = service::Server::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    dir_ = FreshTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  std::string Target() const { return absl::StrCat("127.0.0.1:", server_->port()); }
  // Runs `args` locally, then with --server before the command.
  std::pair<Result, Result> Both(std::vector<std::string> local_args,
                                 std::vector<std::string> remote_args) {
    Result local = RunCli(local_args);
    remote_args.insert(remote_args.begin(), {"--server", Target()});
    return {local, RunCli(remote_args)};
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::unique_ptr<service::Server> server_;
  fs::path dir_;
};

TEST_F(RemoteCliTest, ConvertWritesTheSameBytesAndPrintsTheSameReport) {
  auto [local, remote] = Both(
      {"convert", "examples/tiny_cnn.onnx", "-o", Path("local.onnx"), "--to", "17", "--report",
       Path("local.json")},
      {"convert", "examples/tiny_cnn.onnx", "-o", Path("remote.onnx"), "--to", "17", "--report",
       Path("remote.json")});
  ExpectSameRun(local, remote, "convert");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(ReadTestFile(Path("remote.onnx")), ReadTestFile(Path("local.onnx")));
  EXPECT_FALSE(ReadTestFile(Path("local.onnx")).empty());
  EXPECT_EQ(WithoutTimings(ReadTestFile(Path("remote.json"))),
            WithoutTimings(ReadTestFile(Path("local.json"))));
}

TEST_F(RemoteCliTest, ServerFlagAfterTheCommandWorksToo) {
  Result local = RunCli({"convert", "examples/tiny_cnn.onnx", "-o", Path("l.onnx"), "--to", "9",
                         "--ir-version", "7"});
  Result remote = RunCli({"convert", "examples/tiny_cnn.onnx", "-o", Path("r.onnx"), "--to", "9",
                          "--ir-version", "7", "--server=" + Target()});
  ExpectSameRun(local, remote, "convert down with --ir-version");
  EXPECT_EQ(ReadTestFile(Path("r.onnx")), ReadTestFile(Path("l.onnx")));
  absl::StatusOr<LoadedModel> model = LoadModel(Path("r.onnx"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->model.ir_version(), 7);
}

TEST_F(RemoteCliTest, PlanCheckAndInspectPrintTheSame) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"plan", "examples/tiny_cnn.onnx", "--to", "21"},
           {"check", "examples/tiny_cnn.onnx"},
           {"check", "examples/tiny_cnn.onnx", "--json"},
           {"inspect", "examples/tiny_cnn.onnx"},
           {"inspect", "examples/tiny_cnn.onnx", "--json"}}) {
    auto [local, remote] = Both(args, args);
    ExpectSameRun(local, remote, args[0]);
    EXPECT_EQ(local.exit_code, 0);
  }
}

TEST_F(RemoteCliTest, FailuresPrintTheSameAndExitTheSame) {
  WriteTestFile(Path("trilu.onnx"), onnxconvert::testing::ModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2,2] x) => (float[2,2] y) {
      [tri] y = Trilu(x)
    })").SerializeAsString());
  onnx::ModelProto invalid = onnxconvert::testing::ModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2,2] x) => (float[2,2] y) {
      y = Relu(nowhere)
    })");
  WriteTestFile(Path("invalid.onnx"), invalid.SerializeAsString());
  WriteTestFile(Path("garbage.onnx"), "\x0a\xff\xff\xff");
  WriteTestFile(Path("gelu.onnx"), service::testing::GeluModel().SerializeAsString());
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"convert", Path("trilu.onnx"), "-o", Path("t.onnx"), "--to", "13"},
           {"convert", Path("trilu.onnx"), "-o", Path("t.onnx"), "--to", "99"},
           {"convert", Path("invalid.onnx"), "-o", Path("t.onnx"), "--to", "15"},
           {"convert", Path("gelu.onnx"), "-o", Path("t.onnx"), "--to", "19", "--no-expand"},
           {"plan", Path("trilu.onnx"), "--to", "13", "--report", Path("plan.json")},
           {"check", Path("invalid.onnx")},
           {"inspect", Path("garbage.onnx")}}) {
    auto [local, remote] = Both(args, args);
    ExpectSameRun(local, remote, absl::StrCat(args[0], " ", args[1]));
    EXPECT_NE(local.exit_code, 0) << args[1];
    EXPECT_FALSE(fs::exists(Path("t.onnx")));
  }
}

TEST_F(RemoteCliTest, ConversionOptionsReachTheServer) {
  WriteTestFile(Path("gelu.onnx"), service::testing::GeluModel().SerializeAsString());
  auto [local, remote] = Both(
      {"convert", Path("gelu.onnx"), "-o", Path("l.onnx"), "--to", "18", "--ir-version", "9"},
      {"convert", Path("gelu.onnx"), "-o", Path("r.onnx"), "--to", "18", "--ir-version", "9"});
  ExpectSameRun(local, remote, "Gelu expanded");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(ReadTestFile(Path("r.onnx")), ReadTestFile(Path("l.onnx")));
  EXPECT_TRUE(absl::StrContains(local.out, "function body expanded")) << local.out;
}

TEST_F(RemoteCliTest, ExternalDataGoesWhereALocalRunPutsIt) {
  fs::create_directories(dir_ / "in");
  WriteTestFile(dir_ / "in/w.bin", std::string(16, '\x02'));
  WriteTestFile(dir_ / "in/m.onnx",
                service::testing::ExternalDataModel("w.bin").SerializeAsString());
  fs::create_directories(dir_ / "local");
  fs::create_directories(dir_ / "remote");
  auto [local, remote] = Both(
      {"convert", Path("in/m.onnx"), "-o", Path("local/m.onnx"), "--to", "14"},
      {"convert", Path("in/m.onnx"), "-o", Path("remote/m.onnx"), "--to", "14"});
  ExpectSameRun(local, remote, "convert with external data");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(ReadTestFile(Path("remote/m.onnx")), ReadTestFile(Path("local/m.onnx")));
  EXPECT_EQ(ReadTestFile(Path("remote/m.onnx.data")), ReadTestFile(Path("local/m.onnx.data")));
  EXPECT_EQ(ReadTestFile(Path("remote/m.onnx.data")).substr(0, 16), std::string(16, '\x02'));
}

// `model` with an initializer `name` of `bytes` bytes no node reads.
onnx::ModelProto WithLargeInitializer(onnx::ModelProto model, const std::string& name,
                                      size_t bytes) {
  onnx::TensorProto* tensor = model.mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(static_cast<int64_t>(bytes / 4));
  tensor->set_raw_data(std::string(bytes, '\x01'));
  return model;
}

// Models past the client's 32 MiB unary limit go from their file to the
// server and back to the output a chunk at a time (never held whole by the
// client), unless they may keep external data (their bytes hold an
// external_data key "location": the output's data file is then copied as
// a local run copies it); a model the server refuses fails as a local run
// fails. Output, report and exit code are a local run's every time.
TEST_F(RemoteCliTest, LargeModelsConvertAsALocalRunConvertsThem) {
  constexpr size_t kLarge = 33 << 20;
  struct Case {
    const char* name;
    std::string model;  // m.onnx; beside it, w.bin (16 bytes)
    int exit_code;
  };
  const Case cases[] = {
      {"streamed",
       WithLargeInitializer(service::testing::UnsqueezeChain(50), "big", kLarge)
           .SerializeAsString(),
       0},
      {"external_data",
       WithLargeInitializer(service::testing::ExternalDataModel("w.bin"), "big", kLarge)
           .SerializeAsString(),
       0},
      {"malformed", "\x0a\xff" + std::string(kLarge, '\x01'), kExitInvalidModel},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fs::path dir = dir_ / c.name;
    for (const char* sub : {"in", "local", "remote"}) fs::create_directories(dir / sub);
    WriteTestFile(dir / "in/w.bin", std::string(16, '\x02'));
    WriteTestFile(dir / "in/m.onnx", c.model);
    auto path = [&](const char* name) { return (dir / name).string(); };
    auto [local, remote] =
        Both({"convert", path("in/m.onnx"), "-o", path("local/m.onnx"), "--to", "14"},
             {"convert", path("in/m.onnx"), "-o", path("remote/m.onnx"), "--to", "14"});
    ExpectSameRun(local, remote, c.name);
    EXPECT_EQ(remote.exit_code, c.exit_code) << remote.err;
    EXPECT_EQ(fs::exists(path("remote/m.onnx")), c.exit_code == 0);
    EXPECT_FALSE(fs::exists(path("remote/m.onnx.partial")));
    if (c.exit_code != 0) continue;
    EXPECT_EQ(ReadTestFile(path("remote/m.onnx")), ReadTestFile(path("local/m.onnx")));
    EXPECT_EQ(fs::exists(path("remote/m.onnx.data")), fs::exists(path("local/m.onnx.data")));
  }
}

TEST_F(RemoteCliTest, UnreachableServerIsAnIoErrorNamingIt) {
  Result result = RunCli({"--server", "127.0.0.1:1", "check", "examples/tiny_cnn.onnx"});
  EXPECT_EQ(result.exit_code, kExitUsageOrIo);
  EXPECT_TRUE(absl::StartsWith(result.err, "examples/tiny_cnn.onnx: server 127.0.0.1:1: "))
      << result.err;
}

TEST_F(RemoteCliTest, CommandsThatRunLocallyOnlyRefuseTheFlag) {
  Result result = RunCli({"print", "examples/tiny_cnn.onnx", "--server", Target()});
  EXPECT_EQ(result.exit_code, kExitUsageOrIo);
  EXPECT_TRUE(absl::StrContains(result.err, "--server runs convert")) << result.err;
}

}  // namespace
}  // namespace onnxconvert::cli
