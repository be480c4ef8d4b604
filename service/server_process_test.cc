// The onnx-convert-server binary as a subprocess on a loopback port.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "grpcpp/grpcpp.h"
#include "proto/grpc_health.grpc.pb.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "service/testing/http_get.h"
#include "service/testing/server_process.h"
#include "service/testing/test_models.h"
#include "tests/corpus.h"
#include "tests/eventually.h"
#include "tests/test_files.h"

extern char** environ;

namespace onnxconvert::service {
namespace {

using ::onnxconvert::testing::Eventually;

namespace v1 = ::onnxconvert::v1;

// A chain whose conversion to opset 25 takes about a second.
const std::string& SlowModelBytes() {
  static const auto* bytes = new std::string(testing::UnsqueezeChain(15000).SerializeAsString());
  return *bytes;
}

// The processes that the main thread of `parent` started.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  std::istringstream list(onnxconvert::testing::ReadTestFile(
      absl::StrCat("/proc/", parent, "/task/", parent, "/children")));
  for (pid_t child = 0; list >> child;) children.push_back(child);
  return children;
}

// The worker processes of the server `server`: the children of its only
// child, the zygote.
std::vector<pid_t> WorkerPids(pid_t server) {
  std::vector<pid_t> zygote = ChildrenOf(server);
  return zygote.size() == 1 ? ChildrenOf(zygote[0]) : std::vector<pid_t>();
}

// A chain whose conversion to opset 25 takes over a second, for deadlines
// of a few hundred ms.
const std::string& SlowerModelBytes() {
  static const auto* bytes =
      new std::string(testing::UnsqueezeChain(150000).SerializeAsString());
  return *bytes;
}

v1::ConvertRequest Request(const std::string& bytes, int64_t target) {
  v1::ConvertRequest request;
  request.set_report_message_only(true);
  request.set_model(bytes);
  request.set_model_name("model.onnx");
  request.mutable_options()->set_target_opset(target);
  return request;
}

// Converts `bytes` to opset `target` as request `id`, naming crash hook
// `hook` unless it is empty.
grpc::Status ConvertAs(ServerProcess& server, const std::string& id, const std::string& bytes,
                       int64_t target, const std::string& hook = "",
                       v1::ConvertResponse* response = nullptr) {
  grpc::ClientContext context;
  context.AddMetadata("x-request-id", id);
  if (!hook.empty()) context.AddMetadata("x-testing-crash-hook", hook);
  v1::ConvertResponse ignored;
  return server.Stub()->Convert(&context, Request(bytes, target),
                                response != nullptr ? response : &ignored);
}

// Streams `bytes` to opset `target` as request `id` with crash hook `hook`.
grpc::Status StreamAs(ServerProcess& server, const std::string& id, const std::string& bytes,
                      int64_t target, const std::string& hook) {
  grpc::ClientContext context;
  context.AddMetadata("x-request-id", id);
  context.AddMetadata("x-testing-crash-hook", hook);
  auto stub = server.Stub();
  auto stream = stub->ConvertStream(&context);
  v1::ConvertStreamRequest message;
  message.mutable_header()->mutable_options()->set_target_opset(target);
  message.mutable_header()->set_external_data(v1::EXTERNAL_DATA_KEPT_BY_CLIENT);
  stream->Write(message);
  message.mutable_chunk()->set_data(bytes);
  stream->Write(message);
  stream->WritesDone();
  v1::ConvertStreamResponse response;
  while (stream->Read(&response)) {
  }
  return stream->Finish();
}

// The bytes of the corpus case `name` (e.g. "node/test_relu").
std::string CorpusModel(const std::string& name) {
  absl::StatusOr<std::vector<onnxconvert::testing::CorpusCase>> cases =
      onnxconvert::testing::ListCorpusCases();
  EXPECT_TRUE(cases.ok()) << cases.status();
  if (!cases.ok()) return "";
  for (const auto& corpus_case : *cases) {
    if (corpus_case.name == name) return onnxconvert::testing::ReadTestFile(corpus_case.model_path);
  }
  ADD_FAILURE() << "no corpus case " << name;
  return "";
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

// The value of the sample `series` (name and labels) in the Prometheus text
// `text`, or -1 when it is not there.
double Sample(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!absl::StartsWith(line, series + " ")) continue;
    double value = -1;
    return absl::SimpleAtod(line.substr(series.size() + 1), &value) ? value : -1;
  }
  return -1;
}

// The body of GET /metrics from 127.0.0.1:`port`.
std::string Scrape(int port) { return testing::HttpBody(testing::HttpGet(port, "/metrics")); }

// The value of metadata `key` the server sent, or "".
std::string Metadata(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                     const std::string& key) {
  auto it = metadata.find(key);
  return it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
}

// --metrics_port serves the Prometheus text over HTTP; its counts move with
// the calls. --log_format=json writes one JSON object per call, with the
// call's request id (the client's, or generated and sent back).
TEST(ServerProcessTest, MetricsOverHttpAndJsonLogLinesWithRequestIds) {
  int metrics_port = testing::FreeLoopbackPort();
  ASSERT_NE(metrics_port, 0);
  ServerProcess server("process_metrics",
                       {absl::StrCat("--metrics_port=", metrics_port), "--log_format=json",
                        "--workers=1", "--max_model_bytes=20000", "--max_message_bytes=65536"});
  EXPECT_TRUE(absl::StrContains(
      server.Stderr(), absl::StrCat("metrics on http://127.0.0.1:", metrics_port, "/metrics")));
  std::string before = Scrape(metrics_port);
  ASSERT_TRUE(absl::StrContains(before, "# TYPE onnx_convert_requests_total counter")) << before;
  EXPECT_EQ(Sample(before, "onnx_convert_requests_total{method=\"Convert\",code=\"OK\"}"), -1);
  EXPECT_GT(Sample(before, "process_resident_memory_bytes"), 1 << 20) << before;
  EXPECT_EQ(Sample(before, "onnx_convert_work_dir_bytes"), 0) << before;
  EXPECT_EQ(Sample(before, "onnx_convert_in_flight_bytes"), 0) << before;

  v1::ConvertResponse converted;
  grpc::ClientContext context;
  context.AddMetadata("x-request-id", "job-m1");
  ASSERT_TRUE(
      server.Stub()->Convert(&context, Request(testing::TinyCnnBytes(), 17), &converted).ok());
  EXPECT_EQ(Metadata(context.GetServerTrailingMetadata(), "x-request-id"), "job-m1");
  EXPECT_EQ(converted.report().request_id(), "job-m1");
  grpc::ClientContext bad_context;
  grpc::Status bad =
      server.Stub()->Convert(&bad_context, Request("\x0a\x05zz", 17), &converted);
  ASSERT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  std::string generated = Metadata(bad_context.GetServerTrailingMetadata(), "x-request-id");
  EXPECT_EQ(generated.size(), 16u) << generated;
  EXPECT_EQ(Metadata(bad_context.GetServerTrailingMetadata(), "x-request-id"), generated);
  EXPECT_TRUE(absl::EndsWith(bad.error_message(), absl::StrCat(" [request ", generated, "]")))
      << bad.error_message();

  std::string after = Scrape(metrics_port);
  EXPECT_EQ(Sample(after, "onnx_convert_requests_total{method=\"Convert\",code=\"OK\"}"), 1)
      << after;
  EXPECT_EQ(
      Sample(after,
             "onnx_convert_requests_total{method=\"Convert\",code=\"INVALID_ARGUMENT\"}"),
      1);
  EXPECT_EQ(Sample(after, "onnx_convert_request_duration_ms_count{method=\"Convert\"}"), 2);
  EXPECT_EQ(Sample(after,
                   "onnx_convert_request_duration_ms_bucket{method=\"Convert\",le=\"+Inf\"}"),
            2);
  EXPECT_EQ(Sample(after, "onnx_convert_received_bytes_total{method=\"Convert\"}"),
            testing::TinyCnnBytes().size() + 4);
  EXPECT_EQ(Sample(after, "onnx_convert_sent_bytes_total{method=\"Convert\"}"),
            converted.model().size());
  EXPECT_EQ(Sample(after, "onnx_convert_in_flight"), 0);

  // Refusals count: a model past --max_model_bytes by its reason, a message
  // past --max_message_bytes (refused by gRPC when the handler reads it) among the
  // calls gRPC failed.
  EXPECT_EQ(Sample(after, "onnx_convert_rejections_total{reason=\"max_model_bytes\"}"), -1);
  const double failed_before = Sample(after, "onnx_convert_grpc_calls_failed_total");
  ASSERT_GE(failed_before, 0) << after;
  for (size_t bytes : {size_t{30000}, size_t{100000}}) {
    grpc::ClientContext refused_context;
    v1::ConvertResponse refused;
    grpc::Status status = server.Stub()->Convert(
        &refused_context, Request(std::string(bytes, '\x01'), 17), &refused);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << bytes;
  }
  std::string refusals = Scrape(metrics_port);
  EXPECT_EQ(Sample(refusals, "onnx_convert_rejections_total{reason=\"max_model_bytes\"}"), 1)
      << refusals;
  EXPECT_GE(Sample(refusals, "onnx_convert_grpc_calls_failed_total"), failed_before + 1)
      << refusals;

  // One JSON line per call, each parsed, with its id. The call gRPC refused
  // ends on the server after its client has the refusal: its line may come
  // a moment later, so wait for it (up to 30 s) before reading them all.
  auto json_lines = [&] {
    std::istringstream text(server.Stderr());
    int count = 0;
    for (std::string line; std::getline(text, line);) count += absl::StartsWith(line, "{");
    return count;
  };
  for (int i = 0; i < 3000 && json_lines() < 4; ++i) absl::SleepFor(absl::Milliseconds(10));
  std::vector<google::protobuf::Struct> lines;
  std::istringstream text(server.Stderr());
  for (std::string line; std::getline(text, line);) {
    if (!absl::StartsWith(line, "{")) continue;
    google::protobuf::Struct parsed;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &parsed).ok()) << line;
    lines.push_back(parsed);
  }
  // The refused model's call too, and the call whose message gRPC refused
  // when its handler read it (logged as ended before its request was read).
  ASSERT_EQ(lines.size(), 4u) << server.Stderr();
  EXPECT_EQ(lines[0].fields().at("id").string_value(), "job-m1");
  EXPECT_EQ(lines[0].fields().at("code").string_value(), "OK");
  EXPECT_EQ(lines[0].fields().at("to_opset").number_value(), 17);
  EXPECT_EQ(lines[1].fields().at("id").string_value(), generated);
  EXPECT_EQ(lines[1].fields().at("code").string_value(), "INVALID_ARGUMENT");
  EXPECT_EQ(lines[2].fields().at("code").string_value(), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(lines[3].fields().at("code").string_value(), "CANCELLED");
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
    Eventually([&] { return server.RunningWorkers() == 1; });
    context.TryCancel();
  });
  v1::ConvertResponse converted;
  grpc::Status status = server.Stub()->Convert(&context, Request(SlowModelBytes(), 25), &converted);
  canceller.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(Eventually(
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
  ASSERT_TRUE(Eventually([&] { return server.RunningWorkers() == 1; }));
  server.Signal(SIGTERM);
  ASSERT_TRUE(Eventually(
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

TEST(ServerProcessTest, WorkersConvertACorpusModelAsTheServersOwnThreadsDo) {
  std::string model = CorpusModel("node/test_relu");
  ASSERT_FALSE(model.empty());
  ServerProcess workers("process_workers", {"--workers=2"});
  ServerProcess threads("process_threads", {"--workers=0"});
  v1::ConvertResponse in_worker, in_thread;
  grpc::Status status = ConvertAs(workers, "corpus-1", model, 21, "", &in_worker);
  ASSERT_TRUE(status.ok()) << status.error_message();
  status = ConvertAs(threads, "corpus-2", model, 21, "", &in_thread);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(in_worker.report().target_opset(), 21);
  EXPECT_FALSE(in_worker.model().empty());
  EXPECT_EQ(in_worker.model(), in_thread.model());
  EXPECT_EQ(in_worker.report().steps_size(), in_thread.report().steps_size());
  EXPECT_EQ(in_worker.report().source_opset(), in_thread.report().source_opset());
  EXPECT_TRUE(absl::StrContains(workers.Stderr(), "2 worker processes")) << workers.Stderr();
  // Check and Inspect run in the workers too.
  v1::ModelRequest request;
  request.set_model(model);
  v1::CheckResponse checked;
  grpc::ClientContext check_context;
  ASSERT_TRUE(workers.Stub()->Check(&check_context, request, &checked).ok());
  EXPECT_TRUE(checked.valid());
  v1::InspectResponse inspected;
  grpc::ClientContext inspect_context;
  ASSERT_TRUE(workers.Stub()->Inspect(&inspect_context, request, &inspected).ok());
  EXPECT_FALSE(inspected.text().empty());
}

TEST(ServerProcessTest, WorkerThatCrashesFailsOnlyItsCallNamingTheSignal) {
  ServerProcess server("process_crash", {"--workers=1", "--testing_crash_hooks"});
  struct Crash {
    const char* hook;
    const char* end;
  };
  for (const Crash& crash : {Crash{"segv", "died of SIGSEGV"}, Crash{"abort", "died of SIGABRT"}}) {
    std::string id = absl::StrCat("crash-", crash.hook);
    grpc::Status status = ConvertAs(server, id, testing::TinyCnnBytes(), 17, crash.hook);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL) << status.error_message();
    EXPECT_TRUE(absl::StartsWith(status.error_message(),
                                 absl::StrCat("request ", id, ": worker process ")))
        << status.error_message();
    EXPECT_TRUE(absl::EndsWith(status.error_message(), crash.end)) << status.error_message();
    // The next call runs on the worker that replaced the only one.
    status = ConvertAs(server, "after", testing::TinyCnnBytes(), 17);
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
  grpc::Status streamed = StreamAs(server, "crash-stream", testing::TinyCnnBytes(), 17, "segv");
  EXPECT_EQ(streamed.error_code(), grpc::StatusCode::INTERNAL) << streamed.error_message();
  EXPECT_TRUE(absl::EndsWith(streamed.error_message(), "died of SIGSEGV"))
      << streamed.error_message();
  EXPECT_TRUE(ConvertAs(server, "after", testing::TinyCnnBytes(), 17).ok());
  EXPECT_TRUE(absl::StrContains(
      server.Stderr(), "id=crash-segv method=Convert in=1563 out=0 opset=?->17"))
      << server.Stderr();
  EXPECT_TRUE(absl::StrContains(server.Stderr(),
                                "status=INTERNAL error=\"request crash-segv: worker process "))
      << server.Stderr();
}

TEST(ServerProcessTest, WorkerOutOfMemoryIsResourceExhaustedAndTheNextCallSucceeds) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "under ASan workers have no address-space limit to run out of";
#endif
  ServerProcess server("process_oom",
                       {"--workers=1", "--worker_memory_mb=512", "--testing_crash_hooks"});
  grpc::Status status = ConvertAs(server, "oom-1", testing::TinyCnnBytes(), 17, "oom");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_TRUE(absl::StartsWith(status.error_message(),
                               "request oom-1: out of memory (std::bad_alloc) in worker process "))
      << status.error_message();
  EXPECT_TRUE(absl::EndsWith(status.error_message(), "(address-space limit 512 MiB)"))
      << status.error_message();
  status = ConvertAs(server, "after", testing::TinyCnnBytes(), 17);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST(ServerProcessTest, CallsGoOnWhileAWorkerCrashes) {
  ServerProcess server("process_concurrent",
                       {"--workers=2", "--max_concurrent=16", "--testing_crash_hooks"});
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 6; ++c) {
    clients.emplace_back([&server, &failed, c] {
      for (int i = 0; i < 15; ++i) {
        grpc::Status status =
            ConvertAs(server, absl::StrCat("c", c, "-", i), testing::TinyCnnBytes(), 17);
        if (!status.ok()) {
          ++failed;
          ADD_FAILURE() << status.error_message();
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  grpc::Status crashed = ConvertAs(server, "crash", testing::TinyCnnBytes(), 17, "segv");
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(crashed.error_code(), grpc::StatusCode::INTERNAL) << crashed.error_message();
  EXPECT_TRUE(absl::EndsWith(crashed.error_message(), "died of SIGSEGV"))
      << crashed.error_message();
}

TEST(ServerProcessTest, DeadlineAndCancellationKillTheWorkerAndReplaceIt) {
  int metrics_port = testing::FreeLoopbackPort();
  ASSERT_NE(metrics_port, 0);
  ServerProcess server("process_deadline", {"--workers=1", "--max_concurrent=1",
                                            absl::StrCat("--metrics_port=", metrics_port)});
  std::vector<pid_t> first = WorkerPids(server.pid());
  ASSERT_EQ(first.size(), 1u);
  v1::ConvertRequest slow = Request(SlowerModelBytes(), 25);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  v1::ConvertResponse converted;
  grpc::Status status = server.Stub()->Convert(&context, slow, &converted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  std::vector<pid_t> second;
  EXPECT_TRUE(Eventually([&] {
    second = WorkerPids(server.pid());
    return second.size() == 1 && second != first && server.RunningWorkers() == 0;
  })) << server.Stderr();
  status = ConvertAs(server, "after", testing::TinyCnnBytes(), 17);
  EXPECT_TRUE(status.ok()) << status.error_message();

  // A call holds its slot (running_workers) from before its request is
  // read: the canceller waits until the request is in, so that the cancel
  // finds the conversion on the worker, not the upload.
  grpc::ClientContext cancelled;
  std::thread canceller([&] {
    Eventually([&] {
      return Sample(Scrape(metrics_port), "onnx_convert_in_flight_bytes") >=
             static_cast<double>(slow.model().size());
    });
    cancelled.TryCancel();
  });
  status = server.Stub()->Convert(&cancelled, slow, &converted);
  canceller.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();
  EXPECT_TRUE(Eventually([&] {
    std::vector<pid_t> third = WorkerPids(server.pid());
    return third.size() == 1 && third != second && server.RunningWorkers() == 0;
  })) << server.Stderr();
  EXPECT_TRUE(ConvertAs(server, "after", testing::TinyCnnBytes(), 17).ok());
}

TEST(ServerProcessTest, ServerOutlivesItsZygoteAndSaysSo) {
  ServerProcess server("process_zygote", {"--workers=1"});
  std::vector<pid_t> zygote = ChildrenOf(server.pid());
  ASSERT_EQ(zygote.size(), 1u);
  ASSERT_EQ(kill(zygote[0], SIGKILL), 0);
  grpc::Status status;
  EXPECT_TRUE(Eventually([&] {
    status = ConvertAs(server, "orphan", testing::TinyCnnBytes(), 17);
    return status.error_code() == grpc::StatusCode::INTERNAL;
  })) << status.error_message();
  // A call that took the worker before the server saw the zygote end
  // learns it from the worker's end; later ones at once.
  std::string zygote_died =
      absl::StrCat("the worker pool's zygote process ", zygote[0], " died of SIGKILL");
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "request orphan: "));
  EXPECT_TRUE(absl::EndsWith(status.error_message(), zygote_died)) << status.error_message();
  status = ConvertAs(server, "later", testing::TinyCnnBytes(), 17);
  EXPECT_EQ(status.error_message(), absl::StrCat("request later: ", zygote_died));
  // The server itself still answers.
  v1::CapabilitiesResponse capabilities;
  grpc::ClientContext context;
  EXPECT_TRUE(server.Stub()->Capabilities(&context, {}, &capabilities).ok());
}

TEST(ServerProcessTest, CrashHooksAreIgnoredWithoutTheirFlag) {
  ServerProcess server("process_no_hooks", {"--workers=1"});
  grpc::Status status = ConvertAs(server, "hook", testing::TinyCnnBytes(), 17, "segv");
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST(ServerProcessTest, InProcessServerAnswersExceptionsAndKeepsServing) {
  ServerProcess server("process_threads_hooks", {"--workers=0", "--testing_crash_hooks"});
  grpc::Status status = ConvertAs(server, "ba-1", testing::TinyCnnBytes(), 17, "bad_alloc");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_EQ(status.error_message(), "request ba-1: out of memory (std::bad_alloc)");
  status = ConvertAs(server, "th-1", testing::TinyCnnBytes(), 17, "throw");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL) << status.error_message();
  EXPECT_EQ(status.error_message(), "request th-1: unexpected error (crash hook 'throw')");
  status = ConvertAs(server, "segv-1", testing::TinyCnnBytes(), 17, "segv");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  status = ConvertAs(server, "after", testing::TinyCnnBytes(), 17);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// The process work folders (onnx-convert-<pid>-<start>) under `parent`.
std::vector<std::string> ProcessWorkDirs(const std::filesystem::path& parent) {
  std::vector<std::string> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(parent)) {
    std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "onnx-convert-")) dirs.push_back(name);
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// True when some file under `dir` holds at least one byte.
bool HoldsAnUploadedByte(const std::filesystem::path& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->file_size(ec) > 0) return true;
  }
  return false;
}

TEST(ServerProcessTest, WorkFolderOfAKilledServerIsRemovedByTheNextAndItsOwnAtExit) {
  std::filesystem::path shared = onnxconvert::testing::FreshTestDir("process_work_shared");
  std::string flag = absl::StrCat("--work_dir=", shared.string());
  ServerProcess first("process_work_first", {flag});
  std::vector<std::string> first_dirs = ProcessWorkDirs(shared);
  ASSERT_EQ(first_dirs.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(first_dirs[0], absl::StrCat("onnx-convert-", first.pid(), "-")))
      << first_dirs[0];
  // An upload under way when the server is killed.
  grpc::ClientContext context;
  auto stub = first.Stub();
  auto stream = stub->ConvertStream(&context);
  v1::ConvertStreamRequest message;
  message.mutable_header()->mutable_options()->set_target_opset(17);
  ASSERT_TRUE(stream->Write(message));
  message.mutable_chunk()->set_data(std::string(256 << 10, 'x'));
  ASSERT_TRUE(stream->Write(message));
  ASSERT_TRUE(Eventually([&] { return HoldsAnUploadedByte(shared / first_dirs[0]); }));
  first.Signal(SIGKILL);
  first.Wait();
  context.TryCancel();
  stream->Finish();
  ASSERT_EQ(ProcessWorkDirs(shared), first_dirs);  // left behind

  ServerProcess second("process_work_second", {flag});
  std::vector<std::string> second_dirs = ProcessWorkDirs(shared);
  ASSERT_EQ(second_dirs.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(second_dirs[0], absl::StrCat("onnx-convert-", second.pid(), "-")))
      << second_dirs[0];
  EXPECT_TRUE(absl::StrContains(second.Stderr(), first_dirs[0])) << second.Stderr();
  grpc::Status status = ConvertAs(second, "after", testing::TinyCnnBytes(), 17);
  EXPECT_TRUE(status.ok()) << status.error_message();
  second.Signal(SIGTERM);
  EXPECT_EQ(second.Wait(), 0);
  EXPECT_TRUE(ProcessWorkDirs(shared).empty());
}

// Runs onnx-convert-server with `flags` until it exits (up to 30 s, then
// kills it); its exit code (-1 if it did not exit) and its stderr.
std::pair<int, std::string> RunServerToExit(const std::string& name,
                                            std::vector<std::string> flags) {
  std::string stderr_path;
  const pid_t pid = SpawnServer(name, flags, stderr_path);
  int code = -1;
  bool exited = Eventually([&] {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) != pid) return false;
    code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return true;
  });
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return {code, onnxconvert::testing::ReadTestFile(stderr_path)};
}

TEST(ServerProcessTest, UnusableWorkDirIsRefusedAtStart) {
  // A --work_dir that is a file cannot hold the streamed calls' folders:
  // the server says so and exits before it listens.
  std::filesystem::path dir = onnxconvert::testing::FreshTestDir("process_bad_work_dir");
  onnxconvert::testing::WriteTestFile(dir / "file", "x");
  std::string flag = absl::StrCat("--work_dir=", (dir / "file").string());
  auto [code, text] = RunServerToExit("process_bad_work_dir_run", {flag, "--port=0"});
  EXPECT_NE(code, 0) << text;
  EXPECT_NE(code, -1) << "the server did not exit: " << text;
  EXPECT_TRUE(absl::StrContains(text, (dir / "file").string())) << text;
  EXPECT_FALSE(absl::StrContains(text, "listening on")) << text;
}

TEST(ServerProcessTest, SecondServerOnAPortInUseRefusesToStart) {
  ServerProcess first("process_port_first", {});
  auto [code, text] =
      RunServerToExit("process_port_second", {absl::StrCat("--port=", first.port())});
  EXPECT_NE(code, 0) << text;
  EXPECT_NE(code, -1) << "the second server did not exit: " << text;
  EXPECT_TRUE(absl::StrContains(text, absl::StrCat("cannot listen on 127.0.0.1:", first.port())))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "listening on")) << text;
  // The first still serves.
  grpc::Status status = ConvertAs(first, "still", testing::TinyCnnBytes(), 17);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
}  // namespace onnxconvert::service
