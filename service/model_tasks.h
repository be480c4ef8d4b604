#ifndef ONNX_CONVERT_SERVICE_MODEL_TASKS_H_
#define ONNX_CONVERT_SERVICE_MODEL_TASKS_H_

// The model calls as tasks: what each asks for, what it answers, and how
// both travel to a worker process and back as memory files (ipc.h), so that
// the service runs a call the same way on a thread of its own process or
// in a worker process (worker_pool.h).

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/onnx_convert_service.pb.h"
#include "service/ipc.h"
#include "service/model_work.h"
#include "service/stream_files.h"

namespace onnxconvert::service {

// The model calls.
enum class CallKind : uint32_t {
  kConvert,
  kPlan,
  kCheck,
  kInspect,
  kConvertStream,
  kRewrite,
  kRewriteStream,
};

// Ways to make a call's work fail, for tests of the server; it honours
// them only when started with --testing_crash_hooks.
enum class CrashHook : uint32_t {
  kNone,
  kSegv,         // raises SIGSEGV
  kAbort,        // calls abort()
  kOutOfMemory,  // allocates (and fills) 16 MiB blocks until one fails
  kBadAlloc,     // throws std::bad_alloc
  kThrow,        // throws std::runtime_error
};

// The hook called `name`: "segv", "abort", "oom", "bad_alloc" or "throw";
// InvalidArgument naming any other.
absl::StatusOr<CrashHook> ParseCrashHook(absl::string_view name);

// True for the hooks that may only run in a worker process: they end the
// process they run in, or take all the memory it may have.
bool NeedsWorkerProcess(CrashHook hook);

// What one model call asks for; the model's bytes travel beside it.
struct ModelTask {
  CallKind kind = CallKind::kConvert;
  CrashHook hook = CrashHook::kNone;
  int64_t max_model_bytes = 0;
  // The model's name (errors begin with it); for conversions also the
  // options and the report's forms, for rewrites the rewrite options (Check
  // and Inspect use the name only).
  v1::StreamHeader header;
  // ConvertStream: the upload, and where the output goes.
  std::shared_ptr<const StreamWorkspace> workspace;
};

// The answer to a call, by kind: Convert and Plan, Check, Inspect,
// ConvertStream, Rewrite.
using ModelAnswer = std::variant<v1::ConvertResponse, v1::CheckResponse, v1::InspectResponse,
                                 StreamOutput, v1::RewriteResponse>;

// Runs the task's crash hook, then does its work on `model` (unused by
// ConvertStream, whose model is in the workspace). Conversions poll
// `should_stop` (if set) and end Cancelled once it is true.
absl::StatusOr<ModelAnswer> PerformModelTask(const ModelTask& task, std::string_view model,
                                             const std::function<bool()>& should_stop = {});

// A memory file holding `task` (its workspace by path) and `model`, for a
// worker process.
absl::StatusOr<UniqueFd> WriteModelTask(const ModelTask& task, std::string_view model);

// What a worker process does with the memory file of a task
// (WriteModelTask): PerformModelTask, then the answer as a memory file. The
// WorkerPool's TaskHandler.
absl::StatusOr<UniqueFd> HandleModelTask(absl::string_view request_id, int task);

// The answer of a task of `kind`, from the memory file HandleModelTask
// wrote. A file that does not hold one is Internal.
absl::StatusOr<ModelAnswer> ReadModelAnswer(CallKind kind, int reply);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_MODEL_TASKS_H_
