// onnx-convert-server: the onnx-convert gRPC service.
//
//   onnx-convert-server --port 50051 --max_concurrent 4 --workers 4
//
// Model calls run in --workers worker processes, forked (by a zygote) before
// gRPC starts a thread: a call that crashes one fails alone.
//
// Stops on SIGTERM or SIGINT: stops accepting calls, gives those in flight
// --grace_ms to finish, and exits 0.

#include <algorithm>
#include <csignal>

#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ir/model_io.h"
#include "service/metrics_http.h"
#include "service/admission.h"
#include "service/capabilities.h"
#include "service/model_tasks.h"
#include "schema/version.h"
#include "service/server.h"
#include "service/work_dir.h"
#include "service/worker_pool.h"

ABSL_FLAG(std::string, address, "127.0.0.1", "Address to listen on (0.0.0.0 for all).");
ABSL_FLAG(int, port, 50051, "Port to listen on; 0 picks a free one (printed at start).");
ABSL_FLAG(int, threads, 0,
          "Most threads gRPC may use for calls, at least 2; 0: gRPC's default.");
ABSL_FLAG(int, malloc_arenas, -1,
          "Most malloc arenas (glibc's M_ARENA_MAX): fewer keep less memory freed by calls "
          "in flight; -1: one per core; 0: glibc's default (8 per core, or MALLOC_ARENA_MAX).");
ABSL_FLAG(int64_t, stream_window_bytes, 0,
          "Bytes of a call the transport takes in before the handler reads them (HTTP/2 "
          "stream window, window probing off): bounds what the requests of refused calls, "
          "unary or streamed, hold unread; 0: 8 MiB, widened by gRPC with the link.");
ABSL_FLAG(int64_t, max_message_bytes, int64_t{64} << 20,
          "Largest gRPC message received or sent; bigger models need ConvertStream.");
ABSL_FLAG(int64_t, max_model_bytes, int64_t{1} << 30,
          "Largest model (serialized ModelProto) any call accepts.");
ABSL_FLAG(int64_t, max_upload_bytes, int64_t{64} << 30,
          "Largest ConvertStream upload, model and external data together.");
ABSL_FLAG(int, max_concurrent, 4,
          "Model calls running at once; more get RESOURCE_EXHAUSTED. 0: no limit.");
ABSL_FLAG(int64_t, max_inflight_bytes, -1,
          "Memory budget of the model calls in flight, in bytes: each is charged 4x its "
          "model + 2 MiB before its model is read (by the size declared in x-model-bytes or "
          "the stream header; else 2 MiB, then the rest as the model arrives), and one past "
          "the budget gets RESOURCE_EXHAUSTED with a retry delay. -1: half the memory of the "
          "cgroup (or machine); 0: no limit.");
ABSL_FLAG(int64_t, max_work_bytes, 0,
          "Disk budget of ConvertStream files in the work folder, in bytes (each uploaded "
          "byte counts twice: the upload and its output); an upload past it gets "
          "RESOURCE_EXHAUSTED with a retry delay. 0: no limit.");
ABSL_FLAG(int64_t, default_deadline_ms, 0,
          "Deadline of calls whose client set none, in ms; 0: none.");
ABSL_FLAG(int64_t, grace_ms, 10000,
          "On SIGTERM/SIGINT, how long calls in flight may take to finish.");
ABSL_FLAG(std::string, work_dir, "",
          "Directory for ConvertStream files; default $TMPDIR or /tmp. The server works in "
          "a subfolder of its own (onnx-convert-<pid>-<start>), removed at exit; those of "
          "servers no longer running are removed at start.");
ABSL_FLAG(bool, log_requests, true, "Write one line per call to stderr.");
ABSL_FLAG(std::string, log_format, "text",
          "Format of the --log_requests lines: text, or json (one object per call).");
ABSL_FLAG(int, metrics_port, 0,
          "Port of the Prometheus text exposition over HTTP (/metrics) on --address; "
          "0: none.");
ABSL_FLAG(int, workers, 4,
          "Worker processes model calls run in (one that crashes fails only its call); "
          "0: threads of the server's own process.");
ABSL_FLAG(int64_t, worker_memory_mb, 4096,
          "Address-space limit (RLIMIT_AS) of each worker process, in MiB; 0: none.");
ABSL_FLAG(bool, testing_crash_hooks, false,
          "Honour the x-testing-crash-hook metadata of a call (tests only).");

namespace {

std::string DefaultWorkDir() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// The worker processes --workers asks for; null for none.
absl::StatusOr<std::shared_ptr<onnxconvert::service::WorkerPool>> StartWorkers() {
  int workers = absl::GetFlag(FLAGS_workers);
  if (workers < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--workers ", workers, ": give 1 or more, or 0 for none"));
  }
  if (workers == 0) return nullptr;
  onnxconvert::service::WorkerPoolOptions pool;
  pool.workers = workers;
  pool.memory_mb = absl::GetFlag(FLAGS_worker_memory_mb);
  pool.handler = &onnxconvert::service::HandleModelTask;
  OC_ASSIGN_OR_RETURN(std::unique_ptr<onnxconvert::service::WorkerPool> started,
                      onnxconvert::service::WorkerPool::Start(pool));
  return std::shared_ptr<onnxconvert::service::WorkerPool>(std::move(started));
}

// This process's work folder under --work_dir, the folders of servers no
// longer running removed first.
absl::StatusOr<std::unique_ptr<onnxconvert::service::ProcessWorkDir>> StartWorkDir() {
  std::string parent = absl::GetFlag(FLAGS_work_dir);
  if (parent.empty()) parent = DefaultWorkDir();
  std::vector<std::string> removed;
  auto work_dir = onnxconvert::service::ProcessWorkDir::Create(parent, &removed);
  for (const std::string& path : removed) {
    std::cerr << "onnx-convert-server: removed the work folder of a server no longer running: "
              << path << std::endl;
  }
  return work_dir;
}

onnxconvert::service::ServerOptions OptionsFromFlags() {
  onnxconvert::service::ServerOptions options;
  options.address = absl::GetFlag(FLAGS_address);
  options.port = absl::GetFlag(FLAGS_port);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.stream_window_bytes = absl::GetFlag(FLAGS_stream_window_bytes);
  options.grace = absl::Milliseconds(absl::GetFlag(FLAGS_grace_ms));
  onnxconvert::service::ServiceOptions& service = options.service;
  service.max_model_bytes = absl::GetFlag(FLAGS_max_model_bytes);
  service.max_upload_bytes = absl::GetFlag(FLAGS_max_upload_bytes);
  service.max_concurrent = absl::GetFlag(FLAGS_max_concurrent);
  service.default_deadline = absl::Milliseconds(absl::GetFlag(FLAGS_default_deadline_ms));
  int64_t inflight = absl::GetFlag(FLAGS_max_inflight_bytes);
  service.max_inflight_bytes =
      inflight < 0 ? onnxconvert::service::DefaultInflightBytes() : inflight;
  service.max_work_bytes = absl::GetFlag(FLAGS_max_work_bytes);
  service.log = absl::GetFlag(FLAGS_log_requests) ? &std::cerr : nullptr;
  service.log_json = absl::GetFlag(FLAGS_log_format) == "json";
  service.testing_crash_hooks = absl::GetFlag(FLAGS_testing_crash_hooks);
  return options;
}

// An error unless --log_format is text or json.
absl::Status CheckLogFormat() {
  std::string format = absl::GetFlag(FLAGS_log_format);
  if (format == "text" || format == "json") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--log_format ", format, ": give text or json"));
}

// The HTTP exposition of `server`'s metrics that --metrics_port asks for;
// null for none.
absl::StatusOr<std::unique_ptr<onnxconvert::service::MetricsHttp>> StartMetricsHttp(
    onnxconvert::service::Server& server, const std::string& address) {
  int port = absl::GetFlag(FLAGS_metrics_port);
  if (port == 0) return nullptr;
  if (port < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_port ", port, ": give a port, or 0 for none"));
  }
  onnxconvert::service::ConvertService& service = server.service();
  onnxconvert::service::MetricsSources sources;
  sources.snapshot = [&service] { return service.MetricsSnapshot(); };
  sources.in_flight_bytes = [&service] { return service.in_flight_bytes(); };
  sources.rejections = [&service] { return service.RejectionCounts(); };
  sources.charged_bytes = [&service] { return service.inflight_bytes(); };
  sources.work_dir = service.options().work_dir;
  return onnxconvert::service::MetricsHttp::Start(address, port, std::move(sources));
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread starts, so that only sigwait below sees the signals.
  onnxconvert::service::BlockTerminationSignals();
  onnxconvert::QuietProtobufUtf8Logs();
  absl::SetProgramUsageMessage("The onnx-convert gRPC service (onnxconvert.v1.OnnxConvert).");
  absl::ParseCommandLine(argc, argv);
  if (absl::Status format = CheckLogFormat(); !format.ok()) {
    std::cerr << "onnx-convert-server: " << format.message() << "\n";
    return 2;
  }
  int arenas = absl::GetFlag(FLAGS_malloc_arenas);
  if (arenas < 0) arenas = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!onnxconvert::service::LimitMallocArenas(arenas)) {
    std::cerr << "onnx-convert-server: malloc refused --malloc_arenas " << arenas << "\n";
  }
  // The operator tables (schemas, adapters, passes) load here rather than
  // on the first call: the idle server's memory includes them, and the
  // workers forked next share them.
  onnxconvert::service::BuildCapabilities();
  // Before gRPC starts a thread: the workers are copies of this process.
  auto workers = StartWorkers();
  if (!workers.ok()) {
    std::cerr << "onnx-convert-server: " << workers.status().message() << "\n";
    return 2;
  }
  if (*workers != nullptr) {
    int64_t memory_mb = absl::GetFlag(FLAGS_worker_memory_mb);
    std::cerr << "onnx-convert-server: " << absl::GetFlag(FLAGS_workers)
              << " worker processes, address-space limit "
              << (memory_mb > 0 ? absl::StrCat(memory_mb, " MiB") : "none") << " each"
              << std::endl;
  }
  // After the workers are forked, so that none of them holds its lock.
  auto work_dir = StartWorkDir();
  if (!work_dir.ok()) {
    std::cerr << "onnx-convert-server: " << work_dir.status().message() << "\n";
    return 2;
  }
  onnxconvert::service::ServerOptions options = OptionsFromFlags();
  options.service.workers = *workers;
  options.service.work_dir = (*work_dir)->path();
  auto server = onnxconvert::service::Server::Start(options);
  if (!server.ok()) {
    std::cerr << "onnx-convert-server: " << server.status().message() << "\n";
    return 2;
  }
  auto metrics_http = StartMetricsHttp(**server, options.address);
  if (!metrics_http.ok()) {
    std::cerr << "onnx-convert-server: " << metrics_http.status().message() << "\n";
    return 2;
  }
  if (*metrics_http != nullptr) {
    std::cerr << "onnx-convert-server: metrics on http://" << options.address << ":"
              << (*metrics_http)->port() << "/metrics" << std::endl;
  }
  std::cerr << "onnx-convert-server: work folder " << options.service.work_dir
            << "; memory budget "
            << (options.service.max_inflight_bytes > 0
                    ? absl::StrCat(options.service.max_inflight_bytes, " bytes")
                    : "none")
            << std::endl;
  std::cerr << "onnx-convert-server " << onnxconvert::kToolVersion << " (commit "
            << onnxconvert::BuildCommit() << ", ONNX spec " << onnxconvert::kOnnxSpecVersion
            << "): listening on " << options.address << ":"
            << (*server)->port() << std::endl;
  int signal = onnxconvert::service::WaitForTerminationSignal();
  std::cerr << "onnx-convert-server: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
            << ": draining (grace " << absl::GetFlag(FLAGS_grace_ms) << " ms)" << std::endl;
  bool idle = (*server)->Shutdown();
  metrics_http->reset();
  std::cerr << "onnx-convert-server: stopped"
            << (idle ? "" : "; abandoned work was still running") << std::endl;
  // Work abandoned past the grace period may still be running on detached
  // threads: leave without running static destructors under it.
  if (!idle) {
    (*work_dir)->Remove();
    std::_Exit(0);
  }
  server->reset();
  work_dir->reset();
  return 0;
}
