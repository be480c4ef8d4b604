#ifndef ONNX_CONVERT_SERVICE_TESTING_LOGGED_PROCESS_H_
#define ONNX_CONVERT_SERVICE_TESTING_LOGGED_PROCESS_H_

// A server binary started as a process whose stderr goes to a file, and the
// port it says there it listens on: for the tests that run
// onnx-convert-server and for the load benchmark.

#include <fcntl.h>
#include <spawn.h>

#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "tests/test_files.h"

extern char** environ;

namespace onnxconvert::service {

// Starts `args` (args[0]: the binary's path) as a process whose stderr goes
// to `stderr_path`, truncated. The process id, or -1 when it did not start.
inline pid_t SpawnLogged(std::vector<std::string> args, const std::string& stderr_path) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// The port a server logging to `log_path` says it listens on ("listening on
// 127.0.0.1:<port>"), looked for every 10 ms up to 5 s; 0 when not said.
inline int ListeningPort(const std::string& log_path) {
  constexpr std::string_view kListening = "listening on 127.0.0.1:";
  for (int i = 0; i < 500; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::string text = onnxconvert::testing::ReadTestFile(log_path);
    size_t at = text.find(kListening);
    size_t end = text.find('\n', at);
    int port = 0;
    if (at != std::string::npos && end != std::string::npos &&
        absl::SimpleAtoi(text.substr(at + kListening.size(), end - at - kListening.size()),
                         &port)) {
      return port;
    }
  }
  return 0;
}

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_TESTING_LOGGED_PROCESS_H_
