#ifndef ONNX_CONVERT_SERVICE_TESTING_SERVER_PROCESS_H_
#define ONNX_CONVERT_SERVICE_TESTING_SERVER_PROCESS_H_

// The onnx-convert-server binary run as a process by tests (which list
// //service:onnx-convert-server in their data).

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "service/testing/logged_process.h"
#include "tests/test_files.h"

namespace onnxconvert::service {

// A channel to 127.0.0.1:`port` that takes answers up to 64 MiB.
inline std::shared_ptr<grpc::Channel> Channel(int port) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                   grpc::InsecureChannelCredentials(), args);
}

// Starts onnx-convert-server with --work_dir in a fresh test folder named
// `name`, then `flags`; its stderr goes to `stderr_path` (set here). The
// process id, or -1.
inline pid_t SpawnServer(const std::string& name, const std::vector<std::string>& flags,
                         std::string& stderr_path) {
  std::filesystem::path dir = onnxconvert::testing::FreshTestDir(name);
  stderr_path = (dir / "stderr.txt").string();
  std::vector<std::string> args = {"service/onnx-convert-server",
                                   absl::StrCat("--work_dir=", dir.string())};
  args.insert(args.end(), flags.begin(), flags.end());
  pid_t pid = SpawnLogged(std::move(args), stderr_path);
  EXPECT_NE(pid, -1);
  return pid;
}

// onnx-convert-server started with some flags, its stderr in a file.
class ServerProcess {
 public:
  explicit ServerProcess(const std::string& name, std::vector<std::string> flags) {
    flags.insert(flags.begin(), "--port=0");
    pid_ = SpawnServer(name, flags, stderr_path_);
    port_ = ListeningPort(stderr_path_);
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
  pid_t pid() const { return pid_; }
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

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string stderr_path_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_TESTING_SERVER_PROCESS_H_
