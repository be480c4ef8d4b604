// Load on onnx-convert-server over loopback: N concurrent clients convert
// small models of the ONNX backend corpus, unary Convert, until M calls are
// done. Reports calls/s, latency percentiles, failures, and the server's
// resident memory along the way (with --workers, the worker processes'
// too). A benchmark, not a test:
//
//   bazel run //service:load_bench -- --clients 8 --calls 10000 --target 21 --workers 2

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "tests/corpus.h"

ABSL_FLAG(int, clients, 8, "Concurrent clients, each with its own channel.");
ABSL_FLAG(int, calls, 10000, "Calls in all.");
ABSL_FLAG(int, target, 21, "Target opset of every conversion.");
ABSL_FLAG(int, models, 200, "How many small corpus models to cycle through.");
ABSL_FLAG(int64_t, max_model_bytes, 64 << 10, "Only corpus models up to this size.");
ABSL_FLAG(int, max_concurrent, 8, "The server's --max_concurrent.");
ABSL_FLAG(int, workers, 4, "The server's --workers (0: calls run on the server's threads).");

extern char** environ;

namespace {

namespace v1 = ::onnxconvert::v1;
using Clock = std::chrono::steady_clock;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Resident memory of process `pid` in KiB (-1 if unknown).
int64_t RssKib(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    int64_t kib = 0;
    if (line.rfind("VmRSS:", 0) == 0 &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(6, line.size() - 9)), &kib)) {
      return kib;
    }
  }
  return -1;
}

// CPU time (user and system) process `pid` has used, in seconds.
double CpuSeconds(pid_t pid) {
  std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  size_t close = stat.rfind(')');  // "pid (comm) state ... utime stime" (fields 14, 15)
  unsigned long long user = 0, system = 0;
  if (close == std::string::npos ||
      std::sscanf(stat.c_str() + close + 1,
                  " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &user,
                  &system) != 2) {
    return 0;
  }
  return static_cast<double>(user + system) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The processes that the main thread of `parent` started.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  std::istringstream list(ReadFile(absl::StrCat("/proc/", parent, "/task/", parent, "/children")));
  for (pid_t child = 0; list >> child;) children.push_back(child);
  return children;
}

// The server binary as a subprocess on a free port.
struct ServerProcess {
  pid_t pid = -1;
  int port = 0;
  std::string log = "/tmp/onnx-convert-load-bench.log";

  bool Start(int max_concurrent, int workers) {
    std::vector<std::string> args = {"service/onnx-convert-server", "--port=0",
                                     "--log_requests=false",
                                     absl::StrCat("--max_concurrent=", max_concurrent),
                                     absl::StrCat("--workers=", workers)};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) return false;
    for (int i = 0; i < 500 && port == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::string text = ReadFile(log);
      size_t at = text.find("listening on 127.0.0.1:");
      size_t end = text.find('\n', at);
      if (at != std::string::npos && end != std::string::npos) {
        (void)absl::SimpleAtoi(text.substr(at + 23, end - at - 23), &port);
      }
    }
    return port != 0;
  }
  // CPU time of the server's process and of its zygote and workers (those
  // running now), in seconds.
  std::pair<double, double> Cpu() const {
    double workers = 0;
    for (pid_t zygote : ChildrenOf(pid)) {
      workers += CpuSeconds(zygote);
      for (pid_t worker : ChildrenOf(zygote)) workers += CpuSeconds(worker);
    }
    return {CpuSeconds(pid), workers};
  }
  // Resident memory of the server's process in KiB.
  int64_t RssKib() const { return ::RssKib(pid); }
  // Resident memory of its zygote and worker processes, summed, in KiB
  // (pages they share counted in each).
  int64_t WorkersRssKib() const {
    int64_t kib = 0;
    for (pid_t zygote : ChildrenOf(pid)) {
      kib += ::RssKib(zygote);
      for (pid_t worker : ChildrenOf(zygote)) kib += ::RssKib(worker);
    }
    return kib;
  }
  void Stop() {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
  }
};

std::unique_ptr<v1::OnnxConvert::Stub> NewStub(int port) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  // A connection of its own per client.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return v1::OnnxConvert::NewStub(grpc::CreateCustomChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials(), args));
}

// Small corpus models that the server converts to the target.
std::vector<v1::ConvertRequest> PickModels(v1::OnnxConvert::Stub& stub) {
  std::vector<v1::ConvertRequest> picked;
  absl::StatusOr<std::vector<onnxconvert::testing::CorpusCase>> cases =
      onnxconvert::testing::ListCorpusCases();
  if (!cases.ok()) {
    std::cerr << cases.status().message() << "\n";
    return picked;
  }
  for (const auto& corpus_case : *cases) {
    if (static_cast<int>(picked.size()) >= absl::GetFlag(FLAGS_models)) break;
    std::string bytes = ReadFile(corpus_case.model_path);
    int64_t size = static_cast<int64_t>(bytes.size());
    if (size == 0 || size > absl::GetFlag(FLAGS_max_model_bytes)) continue;
    v1::ConvertRequest request;
    request.set_model(bytes);
    request.set_model_name(corpus_case.name);
    request.mutable_options()->set_target_opset(absl::GetFlag(FLAGS_target));
    request.set_report_message_only(true);
    v1::ConvertResponse response;
    grpc::ClientContext context;
    if (stub.Convert(&context, request, &response).ok()) picked.push_back(std::move(request));
  }
  return picked;
}

double Percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t index = std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()));
  return sorted[index];
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  ServerProcess server;
  const int workers = absl::GetFlag(FLAGS_workers);
  if (!server.Start(absl::GetFlag(FLAGS_max_concurrent), workers)) {
    std::cerr << "load_bench: the server did not start; see " << server.log << "\n";
    return 1;
  }
  std::vector<v1::ConvertRequest> requests = PickModels(*NewStub(server.port));
  if (requests.empty()) {
    std::cerr << "load_bench: no corpus model converts to the target\n";
    server.Stop();
    return 1;
  }
  auto [cpu_start, workers_cpu_start] = server.Cpu();
  int64_t rss_start = server.RssKib();
  int64_t workers_rss_start = server.WorkersRssKib();
  const int clients = absl::GetFlag(FLAGS_clients);
  const int calls = absl::GetFlag(FLAGS_calls);
  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  absl::Mutex mu;
  std::vector<double> latencies;
  // Calls done, the server's RSS, the workers' RSS.
  std::vector<std::tuple<int, int64_t, int64_t>> rss_samples;
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto stub = NewStub(server.port);
      std::vector<double> mine;
      for (int i = next++; i < calls; i = next++) {
        const v1::ConvertRequest& request = requests[(i + c) % requests.size()];
        v1::ConvertResponse response;
        grpc::ClientContext context;
        auto begin = Clock::now();
        grpc::Status status = stub->Convert(&context, request, &response);
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
        if (!status.ok()) {
          if (failed++ < 5) {
            std::cerr << request.model_name() << ": " << status.error_message() << "\n";
          }
        }
        if (i % 1000 == 999) {
          absl::MutexLock lock(&mu);
          rss_samples.emplace_back(i + 1, server.RssKib(), server.WorkersRssKib());
        }
      }
      absl::MutexLock lock(&mu);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  }
  for (std::thread& thread : threads) thread.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  auto [cpu_end, workers_cpu_end] = server.Cpu();
  std::sort(latencies.begin(), latencies.end());
  std::sort(rss_samples.begin(), rss_samples.end());
  std::cout << absl::StrFormat(
      "%d calls, %d clients, %d workers, %zu models (<= %d bytes) to opset %d: %.0f calls/s; "
      "latency p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f ms; %d failed\n",
      calls, clients, workers, requests.size(), absl::GetFlag(FLAGS_max_model_bytes),
      absl::GetFlag(FLAGS_target), calls / seconds, Percentile(latencies, 0.50),
      Percentile(latencies, 0.95), Percentile(latencies, 0.99), latencies.back(),
      failed.load());
  std::cout << absl::StrFormat(
      "server CPU: %.2f s in its process, %.2f s in its workers: %.3f ms per call\n",
      cpu_end - cpu_start, workers_cpu_end - workers_cpu_start,
      1000 * (cpu_end - cpu_start + workers_cpu_end - workers_cpu_start) / calls);
  std::cout << "server RSS: " << rss_start << " KiB before";
  for (const auto& [done, kib, worker_kib] : rss_samples) {
    std::cout << ", " << kib << " KiB at " << done;
  }
  std::cout << "\n";
  if (workers > 0) {
    std::cout << "zygote and workers RSS (summed): " << workers_rss_start << " KiB before";
    for (const auto& [done, kib, worker_kib] : rss_samples) {
      std::cout << ", " << worker_kib << " KiB at " << done;
    }
    std::cout << "\n";
  }
  server.Stop();
  return failed.load() == 0 ? 0 : 1;
}
