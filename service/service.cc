#include "service/service.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "converter/converter.h"
#include "service/capabilities.h"
#include "service/error_text.h"
#include "service/grpc_status.h"
#include "service/model_work.h"
#include "service/report_proto.h"
#include "service/request_id.h"
#include "service/request_log.h"
#include "service/request_guard.h"
#include "service/stream_files.h"
#include "service/transport_counts.h"

namespace onnxconvert::service {
namespace {

constexpr size_t kMaxLoggedError = 300;

// The model's name in errors: what the client called it (abbreviated),
// else "model".
std::string ModelLabel(const std::string& name) {
  return name.empty() ? "model" : Abbreviate(name);
}

// Receives the chunks after the header into `workspace`, until the client
// half-closes; `admit` accepts or refuses each chunk first.
absl::Status ReceiveUpload(grpc::ServerContext* context,
                           grpc::ServerReaderWriter<v1::ConvertStreamResponse,
                                                    v1::ConvertStreamRequest>& stream,
                           const WaitLimits& limits,
                           absl::FunctionRef<absl::Status(const v1::Chunk&)> admit,
                           StreamWorkspace& workspace) {
  v1::ConvertStreamRequest message;
  while (stream.Read(&message)) {
    if (!message.has_chunk()) {
      return absl::InvalidArgumentError(
          "ConvertStream: every message after the header must be a chunk");
    }
    OC_RETURN_IF_ERROR(admit(message.chunk()));
    OC_RETURN_IF_ERROR(workspace.Append(message.chunk().name(), message.chunk().data()));
    if (absl::Now() >= limits.deadline) {
      return absl::DeadlineExceededError("the deadline passed during the upload");
    }
  }
  if (context->IsCancelled()) {
    return absl::CancelledError("the client cancelled the call during the upload");
  }
  return workspace.FinishUpload();
}

// The model size the client declared in kModelBytesMetadata, if any.
absl::StatusOr<std::optional<int64_t>> DeclaredModelBytes(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  auto it = metadata.find(kModelBytesMetadata);
  if (it == metadata.end()) return std::nullopt;
  OC_ASSIGN_OR_RETURN(int64_t bytes,
                      ParseModelBytes(absl::string_view(it->second.data(), it->second.size())));
  return bytes;
}

// Whether the call is cancelled now or within 100 ms: gRPC fails the read
// of a message it refuses (past --max_message_bytes) before it marks the
// call cancelled, so a failed read waits that long before it blames the
// request's bytes (only a failed read pays the wait).
bool CancelledSoon(grpc::ServerContext& context) {
  const absl::Time until = absl::Now() + absl::Milliseconds(100);
  while (!context.IsCancelled()) {
    if (absl::Now() >= until) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

// Reads the request of unary call `method` into `request`.
template <typename Request, typename Response>
absl::Status ReadRequest(grpc::ServerContext* context, absl::string_view method,
                         grpc::ServerUnaryStreamer<Request, Response>& streamer,
                         Request& request) {
  if (streamer.Read(&request)) return absl::OkStatus();
  if (CancelledSoon(*context)) {
    return absl::CancelledError(absl::StrCat(
        method,
        ": the call ended before its request was read (the client cancelled it, or gRPC "
        "refused a message past --max_message_bytes)"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(method, ": the request could not be read (not a ", Request::descriptor()->name(),
                   " message, or none)"));
}

// Names, in `result`, the output files that are uploads moved unchanged
// (same_as_upload): the client that asked writes those from its own files.
void MarkKeptUploads(const StreamWorkspace& workspace, v1::StreamResult& result) {
  for (v1::FileInfo& file : *result.mutable_files()) {
    std::optional<std::string> upload = workspace.UploadSameAs(file.name());
    if (upload) file.set_same_as_upload(*upload);
  }
}

// Sends the result, then every output file as chunks (but those the
// result names same_as_upload, and the ranges it lists from_upload).
absl::Status SendOutput(const StreamOutput& output, const StreamWorkspace& workspace,
                        int64_t chunk_bytes,
                        grpc::ServerReaderWriter<v1::ConvertStreamResponse,
                                                 v1::ConvertStreamRequest>& stream,
                        int64_t& bytes_sent) {
  v1::ConvertStreamResponse message;
  *message.mutable_result() = output.result;
  if (!stream.Write(message)) {
    return absl::CancelledError("the client went away before the result was sent");
  }
  v1::ConvertStreamResponse chunk;
  for (const v1::FileInfo& file : output.result.files()) {
    if (!file.same_as_upload().empty()) continue;  // the client has it
    chunk.mutable_chunk()->set_name(file.name());
    // Sends the chunk whose data is in `piece` (moved into the message,
    // not copied; `piece` gets the previous chunk's buffer back).
    auto send = [&](std::string& piece) -> absl::Status {
      chunk.mutable_chunk()->mutable_data()->swap(piece);
      if (!stream.Write(chunk)) {
        return absl::CancelledError("the client went away during the download");
      }
      bytes_sent += static_cast<int64_t>(chunk.chunk().data().size());
      return absl::OkStatus();
    };
    if (output.model_in_memory && file.name().empty()) {
      std::string_view bytes = output.model_bytes;
      std::string piece;
      for (size_t at = 0; at < bytes.size(); at += chunk_bytes) {
        piece.assign(bytes.substr(at, chunk_bytes));
        OC_RETURN_IF_ERROR(send(piece));
      }
    } else {
      // The ranges the client writes from its upload are not sent.
      std::vector<StreamWorkspace::ByteRange> skip;
      skip.reserve(file.from_upload_size());
      for (const v1::UploadRange& range : file.from_upload()) {
        skip.push_back({range.offset(), range.length()});
      }
      OC_RETURN_IF_ERROR(workspace.ReadOutput(file.name(), chunk_bytes, send, skip));
    }
  }
  return absl::OkStatus();
}

// gRPC's own counts in the Prometheus text format: among the calls it
// ended without a handler's answer are those it refused itself (a message
// over --max_message_bytes, refused as its handler reads it; see
// transport_counts.h).
void AppendTransportText(std::string& text) {
  std::optional<TransportCalls> calls = TransportCallCounts();
  if (!calls) return;
  absl::StrAppend(
      &text, "# HELP onnx_convert_grpc_calls_started_total Calls gRPC started (channelz).\n",
      "# TYPE onnx_convert_grpc_calls_started_total counter\n",
      "onnx_convert_grpc_calls_started_total ", calls->started, "\n",
      "# HELP onnx_convert_grpc_calls_failed_total Calls gRPC ended without a handler's answer "
      "(channelz): messages over --max_message_bytes, cancelled calls, lost connections.\n",
      "# TYPE onnx_convert_grpc_calls_failed_total counter\n",
      "onnx_convert_grpc_calls_failed_total ", calls->failed, "\n");
}

}  // namespace

ConvertService::ConvertService(ServiceOptions options)
    : options_(std::move(options)),
      slots_(WorkSlots::Create(options_.max_concurrent)),
      memory_(ByteBudget::Create(options_.max_inflight_bytes, /*lone_charge_may_exceed=*/true)),
      disk_(ByteBudget::Create(options_.max_work_bytes, /*lone_charge_may_exceed=*/false)) {}

void ConvertService::StartDraining() { draining_.store(true); }

std::string ConvertService::CallId(grpc::ServerContext* context) {
  std::string id = ClientRequestId(context->client_metadata());
  if (id.empty()) id = NewRequestId();
  // In the trailers only: gRPC retries (the clients' service-config
  // policy) only calls whose refusal came without headers before it.
  context->AddTrailingMetadata(kRequestIdMetadata, id);
  return id;
}

v1::MetricsResponse ConvertService::MetricsSnapshot() const {
  return metrics_.Snapshot(in_flight_.load(), slots_->in_use());
}

int64_t ConvertService::in_flight_bytes() const {
  absl::MutexLock lock(&calls_mu_);
  int64_t total = 0;
  for (const CallRecord* call : calls_) total += call->bytes_in.load();
  return total;
}

grpc::Status ConvertService::Handle(grpc::ServerContext* context, absl::string_view method,
                                    absl::FunctionRef<absl::Status(CallRecord&)> body) {
  CallRecord call;
  call.id = CallId(context);
  call.method = method;
  call.start = absl::Now();
  in_flight_.fetch_add(1);
  {
    absl::MutexLock lock(&calls_mu_);
    calls_.insert(&call);
  }
  // Whatever the call throws fails the call only.
  absl::Status status =
      draining() ? absl::UnavailableError("the server is shutting down; retry elsewhere")
                 : GuardRequest(call.id, [&] { return body(call); });
  {
    absl::MutexLock lock(&calls_mu_);
    calls_.erase(&call);
  }
  last_answer_ns_.store(absl::ToUnixNanos(absl::Now()));
  call.memory.reset();
  if (in_flight_.fetch_sub(1) == 1) trimmer_.Idle();
  grpc::Status answer = ToGrpcStatus(status);
  if (!answer.ok()) {
    answer = grpc::Status(answer.error_code(), WithRequestId(answer.error_message(), call.id),
                          answer.error_details());
  }
  double milliseconds = absl::ToDoubleMilliseconds(absl::Now() - call.start);
  metrics_.Record(method, answer.error_code(), milliseconds);
  metrics_.RecordBytes(method, call.bytes_in.load(), call.bytes_out);
  Log(call, answer, milliseconds);
  return answer;
}

void ConvertService::Log(const CallRecord& call, const grpc::Status& status,
                         double milliseconds) {
  if (options_.log == nullptr) return;
  if (options_.log_json) {
    LogJson(call, status, milliseconds);
    return;
  }
  std::string line = absl::StrFormat(
      "onnx-convert-server: id=%s method=%s in=%d out=%d opset=%s ms=%.1f status=%s", call.id,
      call.method, call.bytes_in.load(), call.bytes_out,
      call.to_opset == 0 ? std::string("-")
                         : absl::StrCat(call.from_opset == 0 ? "?" : absl::StrCat(call.from_opset),
                                        "->", call.to_opset),
      milliseconds, StatusCodeName(status.error_code()));
  if (!status.ok()) {
    std::string message = status.error_message().substr(0, kMaxLoggedError);
    absl::StrAppend(&line, " error=\"", absl::CHexEscape(message), "\"");
  }
  absl::MutexLock lock(&log_mu_);
  *options_.log << line << "\n" << std::flush;
}

void ConvertService::LogJson(const CallRecord& call, const grpc::Status& status,
                             double milliseconds) {
  RequestLogEntry entry;
  entry.time = absl::Now();
  entry.id = call.id;
  entry.method = call.method;
  std::string code = StatusCodeName(status.error_code());
  entry.code = code;
  entry.milliseconds = milliseconds;
  entry.bytes_in = call.bytes_in.load();
  entry.bytes_out = call.bytes_out;
  entry.model_name = call.model_name;
  entry.from_opset = call.from_opset;
  entry.to_opset = call.to_opset;
  std::string error = status.error_message().substr(0, kMaxLoggedError);
  entry.error = error;
  std::string line = JsonLogLine(entry);
  absl::MutexLock lock(&log_mu_);
  *options_.log << line << "\n" << std::flush;
}

absl::Status ConvertService::Refuse(const CallRecord& call, absl::string_view reason,
                                    absl::Status status) {
  metrics_.RecordRejection(reason);
  std::string line = absl::StrFormat("onnx-convert-server: rejected id=%s method=%s reason=%s: %s",
                                     call.id, call.method, reason, status.message());
  {
    absl::MutexLock lock(&log_mu_);
    std::ostream& out = options_.log != nullptr ? *options_.log : std::cerr;
    out << line << "\n" << std::flush;
  }
  return status;
}

absl::Status ConvertService::Reject(const CallRecord& call, absl::string_view reason,
                                    std::string message, bool retry) {
  absl::Status status = absl::ResourceExhaustedError(std::move(message));
  return Refuse(call, reason,
                retry ? WithRetryDelay(std::move(status), options_.retry_delay) : status);
}

absl::StatusOr<std::shared_ptr<WorkSlots::Slot>> ConvertService::AcquireSlot(
    const CallRecord& call) {
  std::shared_ptr<WorkSlots::Slot> slot = slots_->TryAcquire();
  if (slot == nullptr) {
    return Reject(call, "max_concurrent",
                  absl::StrCat("the server is busy: all ", slots_->capacity(),
                               " model calls allowed at once (--max_concurrent) are running"));
  }
  return slot;
}

absl::Status ConvertService::RefuseOversized(const CallRecord& call, int64_t bytes) {
  if (bytes <= options_.max_model_bytes) return absl::OkStatus();
  return Reject(call, "max_model_bytes",
                absl::StrCat("the model is ", bytes, " bytes, over the server's limit of ",
                             options_.max_model_bytes, " bytes (--max_model_bytes)"),
                /*retry=*/false);
}

absl::Status ConvertService::ChargeMemory(CallRecord& call, int64_t model_bytes) {
  int64_t charge = ModelCallCharge(model_bytes);
  call.memory = memory_->TryCharge(charge);
  if (call.memory != nullptr) return absl::OkStatus();
  return Reject(call, "inflight_bytes",
                absl::StrCat("the server's memory budget is taken: this call needs an "
                             "estimated ",
                             charge, " bytes for its model of ", model_bytes, " bytes; ",
                             memory_->in_use(), " of ", memory_->capacity(),
                             " bytes (--max_inflight_bytes) are held by calls in flight"));
}

absl::StatusOr<std::shared_ptr<WorkSlots::Slot>> ConvertService::Admit(
    CallRecord& call, std::optional<int64_t> declared) {
  if (declared) {
    OC_RETURN_IF_ERROR(RefuseOversized(call, *declared));
    // gRPC would refuse the message at its read, less clearly.
    if (*declared > options_.max_message_bytes) {
      return Reject(call, "max_message_bytes",
                    absl::StrCat("the model is ", *declared, " bytes (", kModelBytesMetadata,
                                 "), over the server's message limit of ",
                                 options_.max_message_bytes,
                                 " bytes (--max_message_bytes): send it with ConvertStream"),
                    /*retry=*/false);
    }
  }
  OC_RETURN_IF_ERROR(ChargeMemory(call, declared.value_or(0)));
  return AcquireSlot(call);
}

absl::Status ConvertService::AdmitReceived(CallRecord& call, int64_t model_bytes) {
  OC_RETURN_IF_ERROR(RefuseOversized(call, model_bytes));
  int64_t charge = ModelCallCharge(model_bytes);
  int64_t more = charge - call.memory->bytes();
  if (more <= 0 || call.memory->Grow(more)) return absl::OkStatus();
  return Reject(call, "inflight_bytes",
                absl::StrCat("the server's memory budget is taken: this call needs an "
                             "estimated ",
                             charge, " bytes for its model of ", model_bytes, " bytes; ",
                             memory_->in_use(), " of ", memory_->capacity(),
                             " bytes (--max_inflight_bytes) are held by calls in flight (a "
                             "client that declares the model's size in ",
                             kModelBytesMetadata, " is refused before it sends the model)"));
}

absl::Status ConvertService::AdmitStream(CallRecord& call, const Upload& upload,
                                         std::shared_ptr<WorkSlots::Slot>& slot,
                                         std::shared_ptr<ByteBudget::Charge>& disk) {
  int64_t declared = upload.declared_model_bytes.value_or(0);
  if (declared < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the header declares a model of ", declared, " bytes (model_bytes)"));
  }
  if (upload.declared_model_bytes) {
    OC_RETURN_IF_ERROR(RefuseOversized(call, declared));
    if (declared > options_.max_upload_bytes) {
      return Reject(call, "max_upload_bytes",
                    absl::StrCat("the header declares a model of ", declared,
                                 " bytes, over the server's limit of ", options_.max_upload_bytes,
                                 " bytes (--max_upload_bytes)"),
                    /*retry=*/false);
    }
  }
  // Without a declared size, charged as the model arrives.
  OC_RETURN_IF_ERROR(ChargeMemory(call, declared));
  OC_ASSIGN_OR_RETURN(slot, AcquireSlot(call));
  // The declared upload, and the output it becomes.
  disk = disk_->TryCharge(2 * declared);
  if (disk == nullptr) {
    return Reject(call, "work_bytes",
                  absl::StrCat("the server's work folder is full: the header declares a model "
                               "of ",
                               declared, " bytes, and it and its output would take the ",
                               disk_->in_use(), " bytes in use past ", disk_->capacity(),
                               " bytes (--max_work_bytes)"));
  }
  return absl::OkStatus();
}

absl::Status ConvertService::AdmitChunk(CallRecord& call, ByteBudget::Charge& disk,
                                        Upload& upload, const v1::Chunk& chunk) {
  int64_t bytes = static_cast<int64_t>(chunk.data().size());
  bool model = chunk.name().empty();
  if (model && upload.declared_model_bytes &&
      upload.model_bytes + bytes > *upload.declared_model_bytes) {
    return Refuse(call, "model_bytes_declared",
                  absl::InvalidArgumentError(absl::StrCat(
                      "the model's chunks passed the ", *upload.declared_model_bytes,
                      " bytes its header declared (model_bytes)")));
  }
  if (model && upload.model_bytes + bytes > options_.max_model_bytes) {
    return Reject(call, "max_model_bytes",
                  absl::StrCat("the model is over the server's limit of ",
                               options_.max_model_bytes, " bytes (--max_model_bytes)"),
                  /*retry=*/false);
  }
  if (upload.upload_bytes + bytes > options_.max_upload_bytes) {
    return Reject(call, "max_upload_bytes",
                  absl::StrCat("the upload is over the server's limit of ",
                               options_.max_upload_bytes, " bytes (--max_upload_bytes)"),
                  /*retry=*/false);
  }
  // A declared model was charged for in full before its first chunk.
  bool charged = model && upload.declared_model_bytes;
  // The upload, and the output it becomes.
  if (!charged && !disk.Grow(2 * bytes)) {
    return Reject(call, "work_bytes",
                  absl::StrCat("the server's work folder is full: this upload holds ",
                               upload.upload_bytes, " bytes and a chunk of ", bytes,
                               " more would take the ", disk_->in_use(), " bytes in use past ",
                               disk_->capacity(), " bytes (--max_work_bytes)"));
  }
  if (model && !charged && !call.memory->Grow(kChargePerModelByte * bytes)) {
    return Reject(call, "inflight_bytes",
                  absl::StrCat("the server's memory budget is taken: this call's model has "
                               "reached ",
                               upload.model_bytes + bytes, " bytes; ", memory_->in_use(), " of ",
                               memory_->capacity(),
                               " bytes (--max_inflight_bytes) are held by calls in flight"));
  }
  if (model) upload.model_bytes += bytes;
  upload.upload_bytes += bytes;
  return absl::OkStatus();
}

WaitLimits ConvertService::LimitsFor(grpc::ServerContext* context,
                                     const CallRecord& call) const {
  WaitLimits limits;
  limits.cancelled = [context] { return context->IsCancelled(); };
  if (context->deadline() != std::chrono::system_clock::time_point::max()) {
    limits.deadline = absl::FromChrono(context->deadline());
  } else if (options_.default_deadline > absl::ZeroDuration()) {
    limits.deadline = call.start + options_.default_deadline;
  }
  return limits;
}

absl::StatusOr<CrashHook> ConvertService::CrashHookOf(grpc::ServerContext* context) const {
  if (!options_.testing_crash_hooks) return CrashHook::kNone;
  auto it = context->client_metadata().find(kCrashHookMetadata);
  if (it == context->client_metadata().end()) return CrashHook::kNone;
  return ParseCrashHook(absl::string_view(it->second.data(), it->second.size()));
}

absl::StatusOr<ModelAnswer> ConvertService::RunTask(grpc::ServerContext* context,
                                                    const CallRecord& call, ModelTask task,
                                                    std::string model,
                                                    std::shared_ptr<WorkSlots::Slot> slot) {
  OC_ASSIGN_OR_RETURN(task.hook, CrashHookOf(context));
  WaitLimits limits = LimitsFor(context, call);
  if (options_.workers == nullptr) {
    return RunOnWorkerThread(call, std::move(task), std::move(model), std::move(slot), limits);
  }
  // The call keeps its slot until the worker process has answered (or has
  // been killed).
  return RunInWorkerProcess(call, task, model, limits);
}

absl::StatusOr<ModelAnswer> ConvertService::RunInWorkerProcess(const CallRecord& call,
                                                               const ModelTask& task,
                                                               std::string_view model,
                                                               const WaitLimits& limits) {
  OC_ASSIGN_OR_RETURN(UniqueFd file, WriteModelTask(task, model));
  OC_ASSIGN_OR_RETURN(UniqueFd reply, options_.workers->Run(call.id, std::move(file), limits));
  return ReadModelAnswer(task.kind, reply.get());
}

absl::StatusOr<ModelAnswer> ConvertService::RunOnWorkerThread(
    const CallRecord& call, ModelTask task, std::string model,
    std::shared_ptr<WorkSlots::Slot> slot, const WaitLimits& limits) {
  if (NeedsWorkerProcess(task.hook)) {
    return absl::FailedPreconditionError(
        "this crash hook needs worker processes (--workers 1 or more)");
  }
  // Abandoned work (cancelled call, passed deadline) outlives the call: it
  // owns the model, and stops at its next poll.
  auto bytes = std::make_shared<const std::string>(std::move(model));
  auto stop = std::make_shared<std::atomic<bool>>(false);
  absl::Time deadline = limits.deadline;
  std::function<absl::StatusOr<ModelAnswer>()> work = [id = call.id, task = std::move(task),
                                                       bytes, stop, deadline,
                                                       charge = call.memory] {
    return GuardRequest(id, [&] {
      return PerformModelTask(task, *bytes,
                              [stop, deadline] { return stop->load() || absl::Now() >= deadline; });
    });
  };
  absl::StatusOr<ModelAnswer> answer = RunAbandonable(std::move(work), std::move(slot), limits);
  if (!answer.ok()) stop->store(true);
  return answer;
}

absl::Status ConvertService::RunConvert(grpc::ServerContext* context,
                                        v1::ConvertRequest& request, bool plan,
                                        std::shared_ptr<WorkSlots::Slot> slot,
                                        v1::ConvertResponse& response, CallRecord& call) {
  call.to_opset = request.options().target_opset();
  ModelTask task;
  task.kind = plan ? CallKind::kPlan : CallKind::kConvert;
  task.max_model_bytes = options_.max_model_bytes;
  task.header.set_model_name(ModelLabel(request.model_name()));
  *task.header.mutable_options() = request.options();
  task.header.set_report_message_only(request.report_message_only());
  OC_ASSIGN_OR_RETURN(ModelAnswer answer,
                      RunTask(context, call, std::move(task), std::move(*request.mutable_model()),
                              std::move(slot)));
  response = std::get<v1::ConvertResponse>(std::move(answer));
  response.mutable_report()->set_request_id(call.id);
  call.from_opset = response.report().source_opset();
  call.bytes_out = static_cast<int64_t>(response.model().size());
  return absl::OkStatus();
}

absl::Status ConvertService::RunConvertStream(grpc::ServerContext* context, StreamType& stream,
                                              CallKind kind, CallRecord& call) {
  v1::ConvertStreamRequest first;
  if (!stream.Read(&first) || !first.has_header()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind == CallKind::kRewriteStream ? "RewriteStream" : "ConvertStream",
                     ": the first message must be a header"));
  }
  const v1::StreamHeader& header = first.header();
  call.to_opset = header.options().target_opset();
  call.model_name = header.model_name();
  Upload upload;
  if (header.has_model_bytes()) upload.declared_model_bytes = header.model_bytes();
  std::shared_ptr<WorkSlots::Slot> slot;
  std::shared_ptr<ByteBudget::Charge> disk;
  OC_RETURN_IF_ERROR(AdmitStream(call, upload, slot, disk));
  UploadLimits limits{options_.max_model_bytes, options_.max_upload_bytes, 4096};
  OC_ASSIGN_OR_RETURN(
      std::shared_ptr<StreamWorkspace> workspace,
      StreamWorkspace::Create(options_.work_dir, ModelFileName(header.model_name()), limits));
  WaitLimits wait = LimitsFor(context, call);
  absl::Status received = ReceiveUpload(
      context, stream, wait,
      [&](const v1::Chunk& chunk) { return AdmitChunk(call, *disk, upload, chunk); },
      *workspace);
  call.bytes_in = workspace->uploaded_bytes();
  OC_RETURN_IF_ERROR(received);
  ModelTask task;
  task.kind = kind;
  task.max_model_bytes = options_.max_model_bytes;
  task.header = header;
  task.workspace = workspace;
  OC_ASSIGN_OR_RETURN(ModelAnswer answer,
                      RunTask(context, call, std::move(task), "", std::move(slot)));
  StreamOutput output = std::get<StreamOutput>(std::move(answer));
  if (kind == CallKind::kRewriteStream) {
    output.result.mutable_rewrite_report()->set_request_id(call.id);
  } else {
    output.result.mutable_report()->set_request_id(call.id);
  }
  call.from_opset = output.result.report().source_opset();
  if (header.client_keeps_identical_data() && !output.model_in_memory) {
    MarkKeptUploads(*workspace, output.result);
  }
  return SendOutput(output, *workspace, options_.stream_chunk_bytes, stream, call.bytes_out);
}

template <typename Request, typename Response>
grpc::Status ConvertService::HandleModelCall(
    grpc::ServerContext* context, absl::string_view method,
    grpc::ServerUnaryStreamer<Request, Response>& streamer,
    absl::FunctionRef<absl::Status(Request&, std::shared_ptr<WorkSlots::Slot>, Response&,
                                   CallRecord&)>
        run) {
  return Handle(context, method, [&](CallRecord& call) -> absl::Status {
    OC_ASSIGN_OR_RETURN(std::optional<int64_t> declared,
                        DeclaredModelBytes(context->client_metadata()));
    // Refused here, the call leaves its request unread: gRPC holds no more
    // of it than one stream window.
    OC_ASSIGN_OR_RETURN(std::shared_ptr<WorkSlots::Slot> slot, Admit(call, declared));
    Request request;
    OC_RETURN_IF_ERROR(ReadRequest(context, method, streamer, request));
    call.bytes_in = static_cast<int64_t>(request.model().size());
    call.model_name = request.model_name();
    OC_RETURN_IF_ERROR(AdmitReceived(call, call.bytes_in));
    Response response;
    OC_RETURN_IF_ERROR(run(request, std::move(slot), response, call));
    if (!streamer.Write(response)) {
      return absl::CancelledError("the client went away before the answer was sent");
    }
    return absl::OkStatus();
  });
}

grpc::Status ConvertService::StreamedConvert(
    grpc::ServerContext* context, UnaryStreamer<v1::ConvertRequest, v1::ConvertResponse>* call) {
  return HandleModelCall<v1::ConvertRequest, v1::ConvertResponse>(
      context, "Convert", *call,
      [&](v1::ConvertRequest& request, std::shared_ptr<WorkSlots::Slot> slot,
          v1::ConvertResponse& response, CallRecord& record) {
        return RunConvert(context, request, /*plan=*/false, std::move(slot), response, record);
      });
}

grpc::Status ConvertService::StreamedPlan(
    grpc::ServerContext* context, UnaryStreamer<v1::ConvertRequest, v1::ConvertResponse>* call) {
  return HandleModelCall<v1::ConvertRequest, v1::ConvertResponse>(
      context, "Plan", *call,
      [&](v1::ConvertRequest& request, std::shared_ptr<WorkSlots::Slot> slot,
          v1::ConvertResponse& response, CallRecord& record) {
        return RunConvert(context, request, /*plan=*/true, std::move(slot), response, record);
      });
}

grpc::Status ConvertService::ConvertStream(grpc::ServerContext* context, StreamType* stream) {
  return Handle(context, "ConvertStream",
                [&](CallRecord& call) {
                  return RunConvertStream(context, *stream, CallKind::kConvertStream, call);
                });
}

grpc::Status ConvertService::RewriteStream(grpc::ServerContext* context, StreamType* stream) {
  return Handle(context, "RewriteStream", [&](CallRecord& call) {
    return RunConvertStream(context, *stream, CallKind::kRewriteStream, call);
  });
}

template <typename Answer>
absl::Status ConvertService::RunModelCall(grpc::ServerContext* context,
                                          v1::ModelRequest& request, CallKind kind,
                                          std::shared_ptr<WorkSlots::Slot> slot, Answer& answer,
                                          CallRecord& call) {
  ModelTask task;
  task.kind = kind;
  task.max_model_bytes = options_.max_model_bytes;
  task.header.set_model_name(ModelLabel(request.model_name()));
  OC_ASSIGN_OR_RETURN(ModelAnswer done,
                      RunTask(context, call, std::move(task), std::move(*request.mutable_model()),
                              std::move(slot)));
  answer = std::get<Answer>(std::move(done));
  call.bytes_out = static_cast<int64_t>(answer.ByteSizeLong());
  return absl::OkStatus();
}

grpc::Status ConvertService::StreamedCheck(
    grpc::ServerContext* context, UnaryStreamer<v1::ModelRequest, v1::CheckResponse>* call) {
  return HandleModelCall<v1::ModelRequest, v1::CheckResponse>(
      context, "Check", *call,
      [&](v1::ModelRequest& request, std::shared_ptr<WorkSlots::Slot> slot,
          v1::CheckResponse& response, CallRecord& record) {
        return RunModelCall(context, request, CallKind::kCheck, std::move(slot), response,
                            record);
      });
}

grpc::Status ConvertService::StreamedInspect(
    grpc::ServerContext* context, UnaryStreamer<v1::ModelRequest, v1::InspectResponse>* call) {
  return HandleModelCall<v1::ModelRequest, v1::InspectResponse>(
      context, "Inspect", *call,
      [&](v1::ModelRequest& request, std::shared_ptr<WorkSlots::Slot> slot,
          v1::InspectResponse& response, CallRecord& record) {
        return RunModelCall(context, request, CallKind::kInspect, std::move(slot), response,
                            record);
      });
}

absl::Status ConvertService::RunRewrite(grpc::ServerContext* context,
                                        v1::RewriteRequest& request,
                                        std::shared_ptr<WorkSlots::Slot> slot,
                                        v1::RewriteResponse& response, CallRecord& call) {
  ModelTask task;
  task.kind = CallKind::kRewrite;
  task.max_model_bytes = options_.max_model_bytes;
  task.header.set_model_name(ModelLabel(request.model_name()));
  *task.header.mutable_rewrite() = request.options();
  OC_ASSIGN_OR_RETURN(ModelAnswer answer,
                      RunTask(context, call, std::move(task), std::move(*request.mutable_model()),
                              std::move(slot)));
  response = std::get<v1::RewriteResponse>(std::move(answer));
  response.mutable_report()->set_request_id(call.id);
  call.bytes_out = static_cast<int64_t>(response.model().size());
  return absl::OkStatus();
}

grpc::Status ConvertService::StreamedRewrite(
    grpc::ServerContext* context, UnaryStreamer<v1::RewriteRequest, v1::RewriteResponse>* call) {
  return HandleModelCall<v1::RewriteRequest, v1::RewriteResponse>(
      context, "Rewrite", *call,
      [&](v1::RewriteRequest& request, std::shared_ptr<WorkSlots::Slot> slot,
          v1::RewriteResponse& response, CallRecord& record) {
        return RunRewrite(context, request, std::move(slot), response, record);
      });
}

grpc::Status ConvertService::Capabilities(grpc::ServerContext* context,
                                          const v1::CapabilitiesRequest* /*request*/,
                                          v1::CapabilitiesResponse* response) {
  return Handle(context, "Capabilities", [&](CallRecord&) {
    *response = BuildCapabilities();
    response->set_max_model_bytes(options_.max_model_bytes);
    response->set_max_message_bytes(options_.max_message_bytes);
    return absl::OkStatus();
  });
}

grpc::Status ConvertService::Metrics(grpc::ServerContext* context,
                                     const v1::MetricsRequest* /*request*/,
                                     v1::MetricsResponse* response) {
  return Handle(context, "Metrics", [&](CallRecord&) {
    // This call is in flight itself; it reports the others.
    *response = metrics_.Snapshot(in_flight_.load() - 1, slots_->in_use());
    AppendTransportText(*response->mutable_text());
    return absl::OkStatus();
  });
}

}  // namespace onnxconvert::service
