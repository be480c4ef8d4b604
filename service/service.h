#ifndef ONNX_CONVERT_SERVICE_SERVICE_H_
#define ONNX_CONVERT_SERVICE_SERVICE_H_

// The onnxconvert.v1.OnnxConvert service (ConvertService), the gRPC handlers
// of every call, and its limits and choices; the server (server.h) runs it.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/heap_trimmer.h"
#include "grpcpp/grpcpp.h"
#include "proto/onnx_convert_service.grpc.pb.h"
#include "service/admission.h"
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
  // Memory budget of the model calls in flight, in bytes: each is charged
  // an estimate from its model's size before its work starts (see
  // ModelCallCharge; streamed models as they arrive), and one that does not
  // fit is refused with RESOURCE_EXHAUSTED and a retry delay. <= 0: no
  // limit.
  int64_t max_inflight_bytes = 0;
  // Disk budget of the streamed calls' files under work_dir: each uploaded
  // byte is charged twice (the upload and the output it becomes); an upload
  // past it is refused with RESOURCE_EXHAUSTED and a retry delay. <= 0: no
  // limit.
  int64_t max_work_bytes = 0;
  // The retry delay (google.rpc.RetryInfo) of calls refused for want of
  // room (budgets, max_concurrent).
  absl::Duration retry_delay = absl::Seconds(1);
  // Deadline of calls whose client set none; zero: none.
  absl::Duration default_deadline = absl::ZeroDuration();
  // Where ConvertStream keeps the files of a call while it runs.
  std::string work_dir = "/tmp";
  // Size of the chunks ConvertStream sends.
  int64_t stream_chunk_bytes = int64_t{1} << 20;
  // Receives one line per call (id, method, sizes, opsets, duration,
  // status); null: no log. Calls refused for want of room get one more line
  // (reason and sizes), here or else on stderr.
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

// The generated service with its unary model calls (Convert, Plan, Check,
// Inspect, Rewrite) served as streamed unary methods: gRPC starts their
// handler before it reads the request, so that admission by bytes (from the
// size the client declares in kModelBytesMetadata) comes before the body.
// On the wire they are the same unary calls.
using ModelCallsStreamed = v1::OnnxConvert::WithStreamedUnaryMethod_Convert<
    v1::OnnxConvert::WithStreamedUnaryMethod_Plan<v1::OnnxConvert::WithStreamedUnaryMethod_Check<
        v1::OnnxConvert::WithStreamedUnaryMethod_Inspect<
            v1::OnnxConvert::WithStreamedUnaryMethod_Rewrite<v1::OnnxConvert::Service>>>>>;

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
class ConvertService final : public ModelCallsStreamed {
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
  // Bytes charged to the memory budget now.
  int64_t inflight_bytes() const { return memory_->in_use(); }
  // The most bytes charged to the memory budget at once so far.
  int64_t inflight_bytes_peak() const { return memory_->peak(); }
  // Calls refused for `reason` so far ("max_model_bytes", "max_upload_bytes",
  // "max_message_bytes", "inflight_bytes", "max_concurrent", "work_bytes").
  int64_t rejections(absl::string_view reason) const { return metrics_.Rejections(reason); }
  // Waits until no model call's work runs (abandoned work included) or
  // `deadline` passes; true when idle.
  bool WaitIdle(absl::Time deadline) const { return slots_->WaitIdle(deadline); }
  // The options it was built with.
  const ServiceOptions& options() const { return options_; }
  // The figures of the Metrics call, taken from outside any call.
  v1::MetricsResponse MetricsSnapshot() const;
  // Calls refused for want of room so far, by reason (max_concurrent,
  // inflight_bytes, work_bytes, ...).
  std::map<std::string, int64_t, std::less<>> RejectionCounts() const {
    return metrics_.RejectionCounts();
  }
  // Model bytes received by the calls being handled now (a streamed upload
  // counts once received whole).
  int64_t in_flight_bytes() const;

  // The unary model calls: admitted by the model size the client declares
  // (kModelBytesMetadata) before the request is read.
  template <typename Request, typename Response>
  using UnaryStreamer = grpc::ServerUnaryStreamer<Request, Response>;
  grpc::Status StreamedConvert(grpc::ServerContext* context,
                               UnaryStreamer<v1::ConvertRequest, v1::ConvertResponse>* call)
      override;
  grpc::Status StreamedPlan(grpc::ServerContext* context,
                            UnaryStreamer<v1::ConvertRequest, v1::ConvertResponse>* call)
      override;
  grpc::Status StreamedCheck(grpc::ServerContext* context,
                             UnaryStreamer<v1::ModelRequest, v1::CheckResponse>* call) override;
  grpc::Status StreamedInspect(grpc::ServerContext* context,
                               UnaryStreamer<v1::ModelRequest, v1::InspectResponse>* call)
      override;
  grpc::Status StreamedRewrite(grpc::ServerContext* context,
                               UnaryStreamer<v1::RewriteRequest, v1::RewriteResponse>* call)
      override;
  grpc::Status ConvertStream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::ConvertStreamResponse, v1::ConvertStreamRequest>* stream)
      override;
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
    // The call's charge against the memory budget (kept by work that
    // outlives the call).
    std::shared_ptr<ByteBudget::Charge> memory;
  };
  using StreamType =
      grpc::ServerReaderWriter<v1::ConvertStreamResponse, v1::ConvertStreamRequest>;
  // What a streamed call has received, and what its header declared.
  struct Upload {
    std::optional<int64_t> declared_model_bytes;  // StreamHeader.model_bytes
    int64_t model_bytes = 0;   // the model's chunks so far
    int64_t upload_bytes = 0;  // every chunk so far
  };

  // Runs `body` as call `method`: refuses it while draining, maps its status
  // to gRPC, records metrics and writes the log line.
  grpc::Status Handle(grpc::ServerContext* context, absl::string_view method,
                      absl::FunctionRef<absl::Status(CallRecord&)> body);
  // Runs unary model call `method` (see Handle): admits it, reads its
  // request, has `run` answer it (with the call's work slot) and sends the
  // answer.
  template <typename Request, typename Response>
  grpc::Status HandleModelCall(
      grpc::ServerContext* context, absl::string_view method,
      grpc::ServerUnaryStreamer<Request, Response>& streamer,
      absl::FunctionRef<absl::Status(Request&, std::shared_ptr<WorkSlots::Slot>, Response&,
                                     CallRecord&)>
          run);
  absl::Status RunConvert(grpc::ServerContext* context, v1::ConvertRequest& request,
                          bool plan, std::shared_ptr<WorkSlots::Slot> slot,
                          v1::ConvertResponse& response, CallRecord& call);
  // The work of Check and Inspect (`kind`).
  template <typename Answer>
  absl::Status RunModelCall(grpc::ServerContext* context, v1::ModelRequest& request,
                            CallKind kind, std::shared_ptr<WorkSlots::Slot> slot,
                            Answer& answer, CallRecord& call);
  absl::Status RunRewrite(grpc::ServerContext* context, v1::RewriteRequest& request,
                          std::shared_ptr<WorkSlots::Slot> slot, v1::RewriteResponse& response,
                          CallRecord& call);
  // Runs `task` on `model` (taken over: work the call abandons keeps it)
  // for `call`, which holds `slot`, in a worker process or on a worker
  // thread, with its crash hook when there is one.
  absl::StatusOr<ModelAnswer> RunTask(grpc::ServerContext* context, const CallRecord& call,
                                      ModelTask task, std::string model,
                                      std::shared_ptr<WorkSlots::Slot> slot);
  absl::StatusOr<ModelAnswer> RunInWorkerProcess(const CallRecord& call, const ModelTask& task,
                                                 std::string_view model,
                                                 const WaitLimits& limits);
  absl::StatusOr<ModelAnswer> RunOnWorkerThread(const CallRecord& call, ModelTask task,
                                                std::string model,
                                                std::shared_ptr<WorkSlots::Slot> slot,
                                                const WaitLimits& limits);
  // The crash hook `context` names (kNone unless testing_crash_hooks).
  absl::StatusOr<CrashHook> CrashHookOf(grpc::ServerContext* context) const;
  // A streamed call of `kind` (ConvertStream or RewriteStream): the
  // upload, the task, the output streamed back.
  absl::Status RunConvertStream(grpc::ServerContext* context, StreamType& stream, CallKind kind,
                                CallRecord& call);
  // A work slot, or RESOURCE_EXHAUSTED naming the limit.
  absl::StatusOr<std::shared_ptr<WorkSlots::Slot>> AcquireSlot(const CallRecord& call);
  // RESOURCE_EXHAUSTED when `bytes` is past max_model_bytes.
  absl::Status RefuseOversized(const CallRecord& call, int64_t bytes);
  // Charges `call` for a model of `model_bytes` against the memory budget,
  // or RESOURCE_EXHAUSTED naming the sizes.
  absl::Status ChargeMemory(CallRecord& call, int64_t model_bytes);
  // Admission of a unary model call before its request is read: the
  // model size the client declared (`declared`) against max_model_bytes,
  // max_message_bytes and the memory budget (without one, only the fixed part of the charge), a
  // work slot.
  absl::StatusOr<std::shared_ptr<WorkSlots::Slot>> Admit(CallRecord& call,
                                                         std::optional<int64_t> declared);
  // Admission of a unary model call's request once read, with a model of
  // `model_bytes`: its size against max_model_bytes, and the call's charge
  // grown to it when the declared size was less (or none);
  // RESOURCE_EXHAUSTED when either fails.
  absl::Status AdmitReceived(CallRecord& call, int64_t model_bytes);
  // Charges streamed `chunk` of `call` against the disk budget (`disk`) and,
  // for model bytes not declared, the memory budget; RESOURCE_EXHAUSTED when
  // either is full, or when the upload passes max_model_bytes or
  // max_upload_bytes; InvalidArgument when the model passes its declared
  // size. Counts the chunk in `upload`.
  absl::Status AdmitChunk(CallRecord& call, ByteBudget::Charge& disk, Upload& upload,
                          const v1::Chunk& chunk);
  // Admission of a streamed call before its body: the model's declared size
  // (if any) against the limits and the memory budget, a work slot, and the
  // declared upload and its output against the disk budget.
  absl::Status AdmitStream(CallRecord& call, const Upload& upload,
                           std::shared_ptr<WorkSlots::Slot>& slot,
                           std::shared_ptr<ByteBudget::Charge>& disk);
  // Counts and logs the refusal of `call` for `reason`; RESOURCE_EXHAUSTED
  // with `message`, and a retry delay unless the call can never fit.
  absl::Status Reject(const CallRecord& call, absl::string_view reason, std::string message,
                      bool retry = true);
  // Counts and logs the refusal of `call` for `reason` with `status`.
  absl::Status Refuse(const CallRecord& call, absl::string_view reason, absl::Status status);
  // The call's deadline (or the default one) and its cancellation.
  WaitLimits LimitsFor(grpc::ServerContext* context, const CallRecord& call) const;
  std::string CallId(grpc::ServerContext* context);
  void Log(const CallRecord& call, const grpc::Status& status, double milliseconds);
  // The log line of `call` as JSON (ServiceOptions::log_json).
  void LogJson(const CallRecord& call, const grpc::Status& status, double milliseconds);

  const ServiceOptions options_;
  std::shared_ptr<WorkSlots> slots_;
  std::shared_ptr<ByteBudget> memory_;
  std::shared_ptr<ByteBudget> disk_;
  IdleHeapTrimmer trimmer_;
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
