#include "service/model_tasks.h"

#include "ir/memory_budget.h"

#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "service/report_proto.h"

namespace onnxconvert::service {
namespace {

// A hook and the name a request gives it.
struct HookName {
  CrashHook hook;
  absl::string_view name;
};

constexpr HookName kHookNames[] = {
    {CrashHook::kSegv, "segv"},       {CrashHook::kAbort, "abort"},
    {CrashHook::kOutOfMemory, "oom"}, {CrashHook::kBadAlloc, "bad_alloc"},
    {CrashHook::kThrow, "throw"},
};

// Allocates 16 MiB blocks and fills them until an allocation throws.
[[noreturn]] void FillMemory() {
  std::vector<std::unique_ptr<char[]>> blocks;
  for (;;) blocks.push_back(std::make_unique<char[]>(size_t{16} << 20));
}

void RunCrashHook(CrashHook hook) {
  switch (hook) {
    case CrashHook::kNone:
      return;
    case CrashHook::kSegv:
      raise(SIGSEGV);
      std::abort();
    case CrashHook::kAbort:
      std::abort();
    case CrashHook::kOutOfMemory:
      FillMemory();
    case CrashHook::kBadAlloc:
      throw std::bad_alloc();
    case CrashHook::kThrow:
      throw std::runtime_error("crash hook 'throw'");
  }
}

// The fixed part of a task, its first section.
struct TaskHead {
  uint32_t kind;
  uint32_t hook;
  int64_t max_model_bytes;
};

// The sections of a task's memory file.
enum TaskSection : size_t {
  kHead,
  kHeader,         // the StreamHeader
  kWorkspaceRoot,  // "" when there is no workspace
  kWorkspaceModelFile,
  kModel,
  kTaskSections,
};

absl::string_view AsBytes(const TaskHead& head) {
  return absl::string_view(reinterpret_cast<const char*>(&head), sizeof(head));
}

absl::StatusOr<ModelAnswer> PerformConvert(const ModelTask& task, std::string_view model,
                                           const std::function<bool()>& should_stop) {
  converter::ConvertOptions options = OptionsFromProto(task.header.options());
  options.dry_run = options.dry_run || task.kind == CallKind::kPlan;
  if (should_stop) options.should_stop = should_stop;
  ReportForms forms =
      task.header.report_message_only() ? ReportForms::kMessageOnly : ReportForms::kAll;
  OC_ASSIGN_OR_RETURN(
      v1::ConvertResponse response,
      ConvertModelBytes(model, task.header.model_name(), options, task.max_model_bytes, forms));
  return ModelAnswer(std::move(response));
}

absl::StatusOr<ModelAnswer> PerformCheck(const ModelTask& task, std::string_view model,
                                         const std::function<bool()>& /*should_stop*/) {
  OC_ASSIGN_OR_RETURN(v1::CheckResponse response,
                      CheckModelBytes(model, task.header.model_name(), task.max_model_bytes));
  return ModelAnswer(std::move(response));
}

absl::StatusOr<ModelAnswer> PerformInspect(const ModelTask& task, std::string_view model,
                                           const std::function<bool()>& /*should_stop*/) {
  OC_ASSIGN_OR_RETURN(v1::InspectResponse response,
                      InspectModelBytes(model, task.header.model_name(), task.max_model_bytes));
  return ModelAnswer(std::move(response));
}

absl::StatusOr<ModelAnswer> PerformRewrite(const ModelTask& task, std::string_view model,
                                           const std::function<bool()>& /*should_stop*/) {
  OC_ASSIGN_OR_RETURN(v1::RewriteResponse response,
                      RewriteModelBytes(model, task.header.model_name(), task.header.rewrite(),
                                        task.max_model_bytes));
  return ModelAnswer(std::move(response));
}

absl::StatusOr<ModelAnswer> PerformStream(const ModelTask& task, std::string_view /*model*/,
                                          const std::function<bool()>& should_stop) {
  if (task.workspace == nullptr) {
    return absl::InternalError("a ConvertStream task came without its workspace");
  }
  OC_ASSIGN_OR_RETURN(StreamOutput output, ConvertUploadedModel(*task.workspace, task.header,
                                                                task.max_model_bytes, should_stop));
  return ModelAnswer(std::move(output));
}

absl::StatusOr<ModelAnswer> PerformRewriteStream(const ModelTask& task, std::string_view /*model*/,
                                                 const std::function<bool()>& /*should_stop*/) {
  if (task.workspace == nullptr) {
    return absl::InternalError("a RewriteStream task came without its workspace");
  }
  OC_ASSIGN_OR_RETURN(StreamOutput output,
                      RewriteUploadedModel(*task.workspace, task.header, task.max_model_bytes));
  return ModelAnswer(std::move(output));
}

// An answer that is one message.
template <typename Answer>
absl::StatusOr<ModelAnswer> ReadMessage(const MappedSections& sections) {
  Answer answer;
  if (sections.count() != 1 ||
      !answer.ParseFromArray(sections.section(0).data(),
                             static_cast<int>(sections.section(0).size()))) {
    return absl::InternalError(
        absl::StrCat("the worker's reply does not hold a ", answer.GetTypeName()));
  }
  return ModelAnswer(std::move(answer));
}

// A ConvertStream answer: the result, the model's bytes, "1" when the model
// is sent from them.
absl::StatusOr<ModelAnswer> ReadStream(const MappedSections& sections) {
  StreamOutput output;
  if (sections.count() != 3 ||
      !output.result.ParseFromArray(sections.section(0).data(),
                                    static_cast<int>(sections.section(0).size()))) {
    return absl::InternalError("the worker's reply does not hold a streamed conversion");
  }
  output.model_bytes = std::string(sections.section(1));
  output.model_in_memory = sections.section(2) == "1";
  return ModelAnswer(std::move(output));
}

// How each kind of call is done and its answer read, by CallKind.
struct KindEntry {
  absl::StatusOr<ModelAnswer> (*perform)(const ModelTask&, std::string_view,
                                         const std::function<bool()>&);
  absl::StatusOr<ModelAnswer> (*read)(const MappedSections&);
};

constexpr KindEntry kKinds[] = {
    {&PerformConvert, &ReadMessage<v1::ConvertResponse>},  // kConvert
    {&PerformConvert, &ReadMessage<v1::ConvertResponse>},  // kPlan
    {&PerformCheck, &ReadMessage<v1::CheckResponse>},      // kCheck
    {&PerformInspect, &ReadMessage<v1::InspectResponse>},  // kInspect
    {&PerformStream, &ReadStream},                         // kConvertStream
    {&PerformRewrite, &ReadMessage<v1::RewriteResponse>},  // kRewrite
    {&PerformRewriteStream, &ReadStream},                  // kRewriteStream
};
static_assert(std::size(kKinds) == static_cast<size_t>(CallKind::kRewriteStream) + 1);

constexpr char kReplyName[] = "onnx-convert-reply";

absl::StatusOr<UniqueFd> WriteAnswerOf(const google::protobuf::MessageLite& message) {
  Section section = MessageSection(message);
  return WriteSections(kReplyName, {&section, 1});
}

absl::StatusOr<UniqueFd> WriteAnswerOf(const StreamOutput& output) {
  Section sections[] = {MessageSection(output.result), BytesSection(output.model_bytes),
                        BytesSection(output.model_in_memory ? "1" : "")};
  return WriteSections(kReplyName, sections);
}

// The task in a memory file written by WriteModelTask.
absl::StatusOr<ModelTask> ReadTask(const MappedSections& sections) {
  TaskHead head;
  if (sections.count() != kTaskSections || sections.section(kHead).size() != sizeof(head)) {
    return absl::InternalError("the task's memory file does not hold a task");
  }
  std::memcpy(&head, sections.section(kHead).data(), sizeof(head));
  if (head.kind >= std::size(kKinds) || head.hook > static_cast<uint32_t>(CrashHook::kThrow)) {
    return absl::InternalError(
        absl::StrCat("the task has kind ", head.kind, " and hook ", head.hook));
  }
  ModelTask task;
  task.kind = static_cast<CallKind>(head.kind);
  task.hook = static_cast<CrashHook>(head.hook);
  task.max_model_bytes = head.max_model_bytes;
  absl::string_view header = sections.section(kHeader);
  if (!task.header.ParseFromArray(header.data(), static_cast<int>(header.size()))) {
    return absl::InternalError("the task's header does not parse");
  }
  absl::string_view root = sections.section(kWorkspaceRoot);
  if (!root.empty()) {
    OC_ASSIGN_OR_RETURN(std::unique_ptr<StreamWorkspace> workspace,
                        StreamWorkspace::Attach(
                            std::string(root), std::string(sections.section(kWorkspaceModelFile))));
    task.workspace = std::move(workspace);
  }
  return task;
}

}  // namespace

absl::StatusOr<CrashHook> ParseCrashHook(absl::string_view name) {
  for (const HookName& entry : kHookNames) {
    if (entry.name == name) return entry.hook;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown crash hook '", name.substr(0, 40),
                                                 "' (segv, abort, oom, bad_alloc or throw)"));
}

bool NeedsWorkerProcess(CrashHook hook) {
  return hook == CrashHook::kSegv || hook == CrashHook::kAbort || hook == CrashHook::kOutOfMemory;
}

// The budget of the model `task` works on: `model`, or the uploaded file.
int64_t ModelBudget(const ModelTask& task, std::string_view model) {
  if (!model.empty() || task.workspace == nullptr) {
    return BudgetFor(static_cast<int64_t>(model.size()));
  }
  return BudgetForFile(task.workspace->model_file());
}

absl::StatusOr<ModelAnswer> PerformModelTask(const ModelTask& task, std::string_view model,
                                             const std::function<bool()>& should_stop) {
  RunCrashHook(task.hook);
  // What the task allocates is bounded by its model's size; past that it
  // throws MemoryBudgetExceeded, which the request's guard answers.
  MemoryBudget budget(ModelBudget(task, model));
  return kKinds[static_cast<size_t>(task.kind)].perform(task, model, should_stop);
}

absl::StatusOr<UniqueFd> WriteModelTask(const ModelTask& task, std::string_view model) {
  TaskHead head{static_cast<uint32_t>(task.kind), static_cast<uint32_t>(task.hook),
                task.max_model_bytes};
  std::string root = task.workspace != nullptr ? task.workspace->root() : "";
  std::string model_file = task.workspace != nullptr ? task.workspace->model_file() : "";
  Section sections[] = {BytesSection(AsBytes(head)), MessageSection(task.header),
                        BytesSection(root), BytesSection(model_file), BytesSection(AsAbsl(model))};
  static_assert(std::size(sections) == kTaskSections);
  return WriteSections("onnx-convert-task", sections);
}

absl::StatusOr<UniqueFd> HandleModelTask(absl::string_view /*request_id*/, int task) {
  OC_ASSIGN_OR_RETURN(MappedSections sections, MappedSections::Map(task, "the task"));
  OC_ASSIGN_OR_RETURN(ModelTask model_task, ReadTask(sections));
  absl::string_view model = sections.section(kModel);
  OC_ASSIGN_OR_RETURN(ModelAnswer answer,
                      PerformModelTask(model_task, std::string_view(model.data(), model.size())));
  return std::visit([](const auto& value) { return WriteAnswerOf(value); }, answer);
}

absl::StatusOr<ModelAnswer> ReadModelAnswer(CallKind kind, int reply) {
  OC_ASSIGN_OR_RETURN(MappedSections sections, MappedSections::Map(reply, "the reply"));
  return kKinds[static_cast<size_t>(kind)].read(sections);
}

}  // namespace onnxconvert::service
