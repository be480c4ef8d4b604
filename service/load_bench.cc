// Load on onnx-convert-server: N concurrent clients convert small models
// (of the ONNX backend corpus, or --model), unary Convert, until M calls are
// done. Reports calls/s, latency percentiles and failures; for the server it
// starts (none with --server), its CPU time and resident memory along the
// way (with --workers, the worker processes' too). A benchmark, not a test:
//
//   bazel run //service:load_bench -- --clients 8 --calls 10000 --target 21 --workers 2
//   bazel run //service:load_bench -- --server ipv4:127.0.0.1:50051,127.0.0.1:50052
//       --model /path/to/models --log /tmp/bench.log   (one command line)

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
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
#include "service/client.h"
#include "service/testing/logged_process.h"
#include "tests/corpus.h"

ABSL_FLAG(int, clients, 8, "Concurrent clients, each with its own channel.");
ABSL_FLAG(int, calls, 10000, "Calls in all.");
ABSL_FLAG(int, target, 21, "Target opset of every conversion.");
ABSL_FLAG(int, models, 200, "How many small corpus models to cycle through.");
ABSL_FLAG(int64_t, max_model_bytes, 64 << 10, "Only corpus models up to this size.");
ABSL_FLAG(int, max_concurrent, 8, "The server's --max_concurrent.");
ABSL_FLAG(int, workers, 4, "The server's --workers (0: calls run on the server's threads).");
ABSL_FLAG(std::string, server, "",
          "A running server to load, any gRPC target (HOST:PORT, dns:///HOST:PORT, "
          "ipv4:A:P,B:P, unix:PATH); empty: start one on a free port.");
ABSL_FLAG(std::string, lb, "round_robin",
          "Load balancing over the target: round_robin or pick_first.");
ABSL_FLAG(int, retries, 0,
          "Attempts after the first of a call failing UNAVAILABLE or RESOURCE_EXHAUSTED "
          "(0 to 4; 0 counts every refusal as a failure).");
ABSL_FLAG(std::vector<std::string>, model, {},
          "Models to cycle through, comma-separated: .onnx files, or directories (every "
          "*.onnx under them); empty: small corpus models.");
ABSL_FLAG(std::string, log, "/tmp/onnx-convert-load-bench.log",
          "Where the started server's stderr goes.");

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
  std::string log;

  bool Start(int max_concurrent, int workers) {
    pid = onnxconvert::service::SpawnLogged(
        {"service/onnx-convert-server", "--port=0", "--log_requests=false",
         absl::StrCat("--max_concurrent=", max_concurrent), absl::StrCat("--workers=", workers)},
        log);
    if (pid < 0) return false;
    port = onnxconvert::service::ListeningPort(log);
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

// A stub over a channel of its own to `target`, balanced and retried as
// --lb and --retries say.
std::unique_ptr<v1::OnnxConvert::Stub> NewStub(const std::string& target) {
  onnxconvert::service::ClientOptions options;
  options.lb_policy = absl::GetFlag(FLAGS_lb);
  options.max_attempts = absl::GetFlag(FLAGS_retries) + 1;
  // A connection of its own per client.
  options.own_connections = true;
  return v1::OnnxConvert::NewStub(onnxconvert::service::CreateChannel(target, options));
}

// The (name, path) of the models to cycle through: --model's files and
// the *.onnx files under its directories, or the corpus's.
std::vector<std::pair<std::string, std::string>> CandidateModels() {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> models;
  for (const std::string& path : absl::GetFlag(FLAGS_model)) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      models.emplace_back(path, path);
      continue;
    }
    std::vector<std::pair<std::string, std::string>> under;
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".onnx") {
        under.emplace_back(it->path().string(), it->path().string());
      }
    }
    std::sort(under.begin(), under.end());
    models.insert(models.end(), under.begin(), under.end());
  }
  if (!absl::GetFlag(FLAGS_model).empty()) return models;
  absl::StatusOr<std::vector<onnxconvert::testing::CorpusCase>> cases =
      onnxconvert::testing::ListCorpusCases();
  if (!cases.ok()) {
    std::cerr << cases.status().message() << "\n";
    return models;
  }
  for (const auto& corpus_case : *cases) {
    models.emplace_back(corpus_case.name, corpus_case.model_path);
  }
  return models;
}

// Small models (of --model, or of the corpus) that the server converts to
// the target.
std::vector<v1::ConvertRequest> PickModels(v1::OnnxConvert::Stub& stub) {
  std::vector<v1::ConvertRequest> picked;
  for (const auto& [name, path] : CandidateModels()) {
    if (static_cast<int>(picked.size()) >= absl::GetFlag(FLAGS_models)) break;
    std::string bytes = ReadFile(path);
    int64_t size = static_cast<int64_t>(bytes.size());
    if (size == 0 || size > absl::GetFlag(FLAGS_max_model_bytes)) {
      if (!absl::GetFlag(FLAGS_model).empty()) {
        std::cerr << "load_bench: " << path << ": empty, missing or over --max_model_bytes\n";
      }
      continue;
    }
    v1::ConvertRequest request;
    request.set_model(bytes);
    request.set_model_name(name);
    request.mutable_options()->set_target_opset(absl::GetFlag(FLAGS_target));
    request.set_report_message_only(true);
    v1::ConvertResponse response;
    grpc::ClientContext context;
    grpc::Status status = stub.Convert(&context, request, &response);
    if (status.ok()) {
      picked.push_back(std::move(request));
    } else if (!absl::GetFlag(FLAGS_model).empty()) {
      std::cerr << "load_bench: " << path << ": " << status.error_message() << "\n";
    }
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
  server.log = absl::GetFlag(FLAGS_log);
  const int workers = absl::GetFlag(FLAGS_workers);
  // With --server, the server is someone else's: no CPU or memory figures.
  const bool own_server = absl::GetFlag(FLAGS_server).empty();
  if (absl::GetFlag(FLAGS_retries) < 0 || absl::GetFlag(FLAGS_retries) > 4) {
    std::cerr << "load_bench: --retries is 0 to 4\n";
    return 2;
  }
  if (own_server && !server.Start(absl::GetFlag(FLAGS_max_concurrent), workers)) {
    std::cerr << "load_bench: the server did not start; see " << server.log << "\n";
    return 1;
  }
  const std::string target =
      own_server ? absl::StrCat("127.0.0.1:", server.port) : absl::GetFlag(FLAGS_server);
  std::vector<v1::ConvertRequest> requests = PickModels(*NewStub(target));
  if (requests.empty()) {
    std::cerr << "load_bench: no model converts to the target on " << target << "\n";
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
      auto stub = NewStub(target);
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
        if (own_server && i % 1000 == 999) {
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
      "%d calls, %d clients, %s, %zu models (<= %d bytes) to opset %d: %.0f calls/s; "
      "latency p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f ms; %d failed\n",
      calls, clients, own_server ? absl::StrCat(workers, " workers") : target,
      requests.size(), absl::GetFlag(FLAGS_max_model_bytes),
      absl::GetFlag(FLAGS_target), calls / seconds, Percentile(latencies, 0.50),
      Percentile(latencies, 0.95), Percentile(latencies, 0.99), latencies.back(),
      failed.load());
  if (!own_server) return failed.load() == 0 ? 0 : 1;
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
