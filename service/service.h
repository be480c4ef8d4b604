#ifndef ONNX_CONVERT_SERVICE_SERVICE_H_
#define ONNX_CONVERT_SERVICE_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "service/metrics.h"
#include "service/model_tasks.h"
#include "service/worker.h"
#include "service/worker_pool.h"

namespace onnxconvert::service {

// Limits and choices of the service.
struct ServiceOptions {
  // Largest model (serialized ModelProto) any call accepts.
  int64_t max_model_bytes = int64_t{1} << 30;
  // Largest ConvertStream upload, model and external data together.
  int64_t max_upload_bytes = int64_t{64} << 30;
  // The server's message limit, as Capabilities reports it (the server
  // enforces it; see server.h).
  int64_t max_message_bytes = int64_t{64} << 20;
  // Model calls (Convert, ConvertStream, Plan, Check, Inspect, Rewrite) running at
  // once, abandoned ones included; more are refused with
  // RESOURCE_EXHAUSTED. <= 0: no limit.
  int64_t max_concurrent = 4;
  // Deadline of calls whose client set none; zero: none.
  absl::Duration default_deadline = absl::ZeroDuration();
  // Where ConvertStream keeps the files of a call while it runs.
  std::string work_dir = "/tmp";
  // Size of the chunks ConvertStream sends.
  int64_t stream_chunk_bytes = int64_t{1} << 20;
  // Receives one line per call (id, method, sizes, opsets, duration,
  // status); null: no log.
  std::ostream* log = nullptr;
  // Log lines as JSON objects (see request_log.h) rather than text.
  bool log_json = false;
  // The worker processes model calls run in (see worker_pool.h; started
  // before the process has a second thread); null: they run on threads of
  // this process.
  std::shared_ptr<WorkerPool> workers;
  // Honour the crash hook a call names in kCrashHookMetadata (tests only).
  bool testing_crash_hooks = false;
};

// The metadata key that names a call's crash hook ("segv", "abort", "oom",
// "bad_alloc", "throw"; see model_tasks.h), with testing_crash_hooks only.
inline constexpr char kCrashHookMetadata[] = "x-testing-crash-hook";

// The onnxconvert.v1.OnnxConvert service. Each model call parses, converts,
// checks or inspects in a worker process (with ServiceOptions::workers; see
// worker_pool.h), or else on a worker thread of its own (see worker.h), and
// answers DEADLINE_EXCEEDED or CANCELLED as soon as the deadline passes or
// the client cancels (a worker process running the call is killed and
// replaced); UNAVAILABLE once draining has begun. Library errors keep their
// code: INVALID_ARGUMENT for a malformed or invalid model,
// FAILED_PRECONDITION when the model cannot be expressed at the target
// (with a ConversionError attached), RESOURCE_EXHAUSTED past a limit. A
// worker process that dies fails its call only, INTERNAL naming the request
// and the signal; std::bad_alloc thrown by a call is RESOURCE_EXHAUSTED,
// any other exception INTERNAL, naming the request.
class ConvertService final : public v1::OnnxConvert::Service {
 public:
  explicit ConvertService(ServiceOptions options);

  // From now on every call fails with UNAVAILABLE (calls running go on).
  void StartDraining();
  // True once StartDraining has been called.
  bool draining() const { return draining_.load(); }
  // Calls being handled now.
  int64_t in_flight() const { return in_flight_.load(); }
  // When the last call answered (InfinitePast if none has).
  absl::Time last_answer() const { return absl::FromUnixNanos(last_answer_ns_.load()); }
  // Waits until no model call's work runs (abandoned work included) or
  // `deadline` passes; true when idle.
  bool WaitIdle(absl::Time deadline) const { return slots_->WaitIdle(deadline); }
  // The options it was built with.
  const ServiceOptions& options() const { return options_; }
  // The figures of the Metrics call, taken from outside any call.
  v1::MetricsResponse MetricsSnapshot() const;
  // Model bytes received by the calls being handled now (a streamed upload
  // counts once received whole).
  int64_t in_flight_bytes() const;

  grpc::Status Convert(grpc::ServerContext* context, const v1::ConvertRequest* request,
                       v1::ConvertResponse* response) override;
  grpc::Status ConvertStream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::ConvertStreamResponse, v1::ConvertStreamRequest>* stream)
      override;
  grpc::Status Plan(grpc::ServerContext* context, const v1::ConvertRequest* request,
                    v1::ConvertResponse* response) override;
  grpc::Status Check(grpc::ServerContext* context, const v1::ModelRequest* request,
                     v1::CheckResponse* response) override;
  grpc::Status Inspect(grpc::ServerContext* context, const v1::ModelRequest* request,
                       v1::InspectResponse* response) override;
  grpc::Status Rewrite(grpc::ServerContext* context, const v1::RewriteRequest* request,
                       v1::RewriteResponse* response) override;
  grpc::Status RewriteStream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::ConvertStreamResponse, v1::ConvertStreamRequest>* stream)
      override;
  grpc::Status Capabilities(grpc::ServerContext* context,
                            const v1::CapabilitiesRequest* request,
                            v1::CapabilitiesResponse* response) override;
  grpc::Status Metrics(grpc::ServerContext* context, const v1::MetricsRequest* request,
                       v1::MetricsResponse* response) override;

 private:
  // What the log line of one call reports.
  struct CallRecord {
    std::string id;
    absl::string_view method;
    absl::Time start;
    std::atomic<int64_t> bytes_in{0};  // read by in_flight_bytes() meanwhile
    int64_t bytes_out = 0;
    std::string model_name;  // "": not known
    int64_t from_opset = 0;  // 0: not known
    int64_t to_opset = 0;
  };
  using StreamType =
      grpc::ServerReaderWriter<v1::ConvertStreamResponse, v1::ConvertStreamRequest>;

  // Runs `body` as call `method`: refuses it while draining, maps its status
  // to gRPC, records metrics and writes the log line.
  grpc::Status Handle(grpc::ServerContext* context, absl::string_view method,
                      absl::FunctionRef<absl::Status(CallRecord&)> body);
  absl::Status RunConvert(grpc::ServerContext* context, const v1::ConvertRequest& request,
                          bool plan, v1::ConvertResponse& response, CallRecord& call);
  // The work of Check and Inspect (`kind`).
  template <typename Answer>
  absl::Status RunModelCall(grpc::ServerContext* context, const v1::ModelRequest& request,
                            CallKind kind, Answer& answer, CallRecord& call);
  // Runs `task` on `model` (which outlives the call) for `call`, which
  // holds `slot`, in a worker process or on a worker thread, with its crash
  // hook when there is one.
  absl::StatusOr<ModelAnswer> RunTask(grpc::ServerContext* context, const CallRecord& call,
                                      ModelTask task, std::string_view model,
                                      std::shared_ptr<WorkSlots::Slot> slot);
  absl::StatusOr<ModelAnswer> RunInWorkerProcess(const CallRecord& call, const ModelTask& task,
                                                 std::string_view model,
                                                 const WaitLimits& limits);
  absl::StatusOr<ModelAnswer> RunOnWorkerThread(const CallRecord& call, ModelTask task,
                                                std::string_view model,
                                                std::shared_ptr<WorkSlots::Slot> slot,
                                                const WaitLimits& limits);
  // The crash hook `context` names (kNone unless testing_crash_hooks).
  absl::StatusOr<CrashHook> CrashHookOf(grpc::ServerContext* context) const;
  // A streamed call of `kind` (ConvertStream or RewriteStream): the
  // upload, the task, the output streamed back.
  absl::Status RunConvertStream(grpc::ServerContext* context, StreamType& stream, CallKind kind,
                                CallRecord& call);
  // A work slot, or RESOURCE_EXHAUSTED naming the limit.
  absl::StatusOr<std::shared_ptr<WorkSlots::Slot>> AcquireSlot();
  // RESOURCE_EXHAUSTED when `bytes` is past max_model_bytes.
  absl::Status RefuseOversized(int64_t bytes) const;
  // The call's deadline (or the default one) and its cancellation.
  WaitLimits LimitsFor(grpc::ServerContext* context, const CallRecord& call) const;
  std::string CallId(grpc::ServerContext* context);
  void Log(const CallRecord& call, const grpc::Status& status, double milliseconds);
  // The log line of `call` as JSON (ServiceOptions::log_json).
  void LogJson(const CallRecord& call, const grpc::Status& status, double milliseconds);

  const ServiceOptions options_;
  std::shared_ptr<WorkSlots> slots_;
  service::Metrics metrics_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> last_answer_ns_{absl::ToUnixNanos(absl::InfinitePast())};
  absl::Mutex log_mu_;
  mutable absl::Mutex calls_mu_;
  std::set<const CallRecord*> calls_ ABSL_GUARDED_BY(calls_mu_);  // in flight
};

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_SERVICE_H_
