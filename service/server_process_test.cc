// The onnx-convert-server binary as a subprocess on a loopback port.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "grpcpp/grpcpp.h"
#include "proto/grpc_health.grpc.pb.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "service/testing/test_models.h"
#include "tests/test_files.h"

extern char** environ;

namespace onnxconvert::service {
namespace {

namespace v1 = ::onnxconvert::v1;

// A chain whose conversion to opset 25 takes about a second.
const std::string& SlowModelBytes() {
  static const auto* bytes = new std::string(testing::UnsqueezeChain(15000).SerializeAsString());
  return *bytes;
}

// A channel to 127.0.0.1:`port` that takes answers up to 64 MiB.
std::shared_ptr<grpc::Channel> Channel(int port) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                   grpc::InsecureChannelCredentials(), args);
}

// onnx-convert-server started with some flags, its stderr in a file.
class ServerProcess {
 public:
  explicit ServerProcess(const std::string& name, std::vector<std::string> flags) {
    std::filesystem::path dir = onnxconvert::testing::FreshTestDir(name);
    stderr_path_ = (dir / "stderr.txt").string();
    std::vector<std::string> args = {"service/onnx-convert-server", "--port=0",
                                     absl::StrCat("--work_dir=", dir.string())};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 500 && port_ == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::string text = Stderr();
      size_t at = text.find("listening on 127.0.0.1:");
      size_t end = text.find('\n', at);
      if (at != std::string::npos && end != std::string::npos) {
        EXPECT_TRUE(absl::SimpleAtoi(text.substr(at + 23, end - at - 23), &port_));
      }
    }
    EXPECT_NE(port_, 0) << Stderr();
    channel_ = Channel(port_);
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  std::unique_ptr<v1::OnnxConvert::Stub> Stub() { return v1::OnnxConvert::NewStub(channel_); }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  int port() const { return port_; }
  void Signal(int signal) { kill(pid_, signal); }
  // Waits for the process to end (up to 30 s); its exit code, or -1.
  int Wait() {
    for (int i = 0; i < 3000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  std::string Stderr() const { return onnxconvert::testing::ReadTestFile(stderr_path_); }
  int64_t RunningWorkers() {
    v1::MetricsResponse metrics;
    grpc::ClientContext context;
    return Stub()->Metrics(&context, {}, &metrics).ok() ? metrics.running_workers() : -1;
  }
  // Waits until `predicate` holds (up to 10 s).
  template <typename Predicate>
  static bool Eventually(Predicate predicate) {
    for (int i = 0; i < 1000; ++i) {
      if (predicate()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string stderr_path_;
  std::shared_ptr<grpc::Channel> channel_;
};

v1::ConvertRequest Request(const std::string& bytes, int64_t target) {
  v1::ConvertRequest request;
  request.set_report_message_only(true);
  request.set_model(bytes);
  request.set_model_name("model.onnx");
  request.mutable_options()->set_target_opset(target);
  return request;
}

TEST(ServerProcessTest, ConvertsChecksHealthAndRefusesMalformedModels) {
  ServerProcess server("process_basic", {});
  auto health = grpc::health::v1::Health::NewStub(server.channel());
  grpc::health::v1::HealthCheckResponse serving;
  grpc::ClientContext health_context;
  ASSERT_TRUE(health->Check(&health_context, {}, &serving).ok());
  EXPECT_EQ(serving.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  v1::ConvertResponse converted;
  grpc::ClientContext context;
  grpc::Status status =
      server.Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 17), &converted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(converted.report().target_opset(), 17);
  EXPECT_FALSE(converted.model().empty());

  grpc::ClientContext bad_context;
  status = server.Stub()->Convert(&bad_context, Request("\x0a\x05zz", 17), &converted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "model.onnx: ")) << status.error_message();
  EXPECT_TRUE(absl::StrContains(server.Stderr(), "method=Convert in=1563"));
  EXPECT_TRUE(absl::StrContains(server.Stderr(), "status=INVALID_ARGUMENT"));

  // The status tool reads health and metrics.
  std::string output = onnxconvert::testing::FreshTestDir("status_tool").string() + "/out.txt";
  std::string command = absl::StrCat("service/onnx-convert-status --server=127.0.0.1:",
                                     server.port(), " > ", output);
  EXPECT_EQ(std::system(command.c_str()), 0);
  std::string text = onnxconvert::testing::ReadTestFile(output);
  EXPECT_TRUE(absl::StartsWith(text, "health: SERVING\n")) << text;
  EXPECT_TRUE(absl::StrContains(
      text, "onnx_convert_requests_total{method=\"Convert\",code=\"INVALID_ARGUMENT\"} 1\n"))
      << text;
}

TEST(ServerProcessTest, ModelPastMaxModelBytesIsResourceExhausted) {
  ServerProcess server("process_limit", {"--max_model_bytes=1000"});
  v1::ConvertResponse converted;
  grpc::ClientContext context;
  grpc::Status status =
      server.Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 17), &converted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(ServerProcessTest, CancelledCallIsCancelled) {
  ServerProcess server("process_cancel", {});
  grpc::ClientContext context;
  std::thread canceller([&] {
    ServerProcess::Eventually([&] { return server.RunningWorkers() == 1; });
    context.TryCancel();
  });
  v1::ConvertResponse converted;
  grpc::Status status = server.Stub()->Convert(&context, Request(SlowModelBytes(), 25), &converted);
  canceller.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(ServerProcess::Eventually(
      [&] { return absl::StrContains(server.Stderr(), "status=CANCELLED"); }));
}

TEST(ServerProcessTest, SigtermFinishesTheCallInFlightRefusesNewOnesAndExitsZero) {
  ServerProcess server("process_sigterm", {"--grace_ms=20000"});
  grpc::Status in_flight;
  v1::ConvertResponse converted;
  std::thread call([&] {
    grpc::ClientContext context;
    in_flight = server.Stub()->Convert(&context, Request(SlowModelBytes(), 25), &converted);
  });
  ASSERT_TRUE(ServerProcess::Eventually([&] { return server.RunningWorkers() == 1; }));
  server.Signal(SIGTERM);
  ASSERT_TRUE(ServerProcess::Eventually(
      [&] { return absl::StrContains(server.Stderr(), "SIGTERM: draining"); }));
  auto fresh = v1::OnnxConvert::NewStub(Channel(server.port()));
  grpc::ClientContext late_context;
  v1::ConvertResponse late;
  grpc::Status refused =
      fresh->Convert(&late_context, Request(testing::TinyCnnBytes(), 13), &late);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE) << refused.error_message();
  call.join();
  EXPECT_TRUE(in_flight.ok()) << in_flight.error_message() << "\n" << server.Stderr();
  EXPECT_EQ(converted.report().target_opset(), 25);
  EXPECT_EQ(server.Wait(), 0) << server.Stderr();
  EXPECT_TRUE(absl::StrContains(server.Stderr(), "onnx-convert-server: stopped\n"))
      << server.Stderr();
}

}  // namespace
}  // namespace onnxconvert::service
