#include "service/model_tasks.h"

#include <new>
#include <stdexcept>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "service/stream_files.h"
#include "service/testing/test_models.h"
#include "tests/test_files.h"

namespace onnxconvert::service {
namespace {

constexpr int64_t kNoLimit = int64_t{1} << 30;

ModelTask Task(CallKind kind, int64_t target = 17) {
  ModelTask task;
  task.kind = kind;
  task.max_model_bytes = kNoLimit;
  task.header.set_model_name("cnn.onnx");
  task.header.mutable_options()->set_target_opset(target);
  task.header.set_report_message_only(true);
  return task;
}

// The task done as a worker does it: written to a memory file, handled,
// and its answer read back.
absl::StatusOr<ModelAnswer> ThroughMemoryFiles(const ModelTask& task, std::string_view model) {
  absl::StatusOr<UniqueFd> file = WriteModelTask(task, model);
  if (!file.ok()) return file.status();
  absl::StatusOr<UniqueFd> reply = HandleModelTask("r1", file->get());
  if (!reply.ok()) return reply.status();
  return ReadModelAnswer(task.kind, reply->get());
}

TEST(CrashHookTest, NamesParseAndUnknownOnesAreInvalidArgument) {
  EXPECT_EQ(*ParseCrashHook("segv"), CrashHook::kSegv);
  EXPECT_EQ(*ParseCrashHook("abort"), CrashHook::kAbort);
  EXPECT_EQ(*ParseCrashHook("oom"), CrashHook::kOutOfMemory);
  EXPECT_EQ(*ParseCrashHook("bad_alloc"), CrashHook::kBadAlloc);
  EXPECT_EQ(*ParseCrashHook("throw"), CrashHook::kThrow);
  absl::StatusOr<CrashHook> unknown = ParseCrashHook("explode");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "'explode'"));
  EXPECT_TRUE(NeedsWorkerProcess(CrashHook::kSegv));
  EXPECT_FALSE(NeedsWorkerProcess(CrashHook::kBadAlloc));
}

TEST(CrashHookTest, BadAllocAndThrowHooksThrowFromTheTask) {
  ModelTask task = Task(CallKind::kConvert);
  task.hook = CrashHook::kBadAlloc;
  EXPECT_THROW(PerformModelTask(task, testing::TinyCnnBytes()).IgnoreError(), std::bad_alloc);
  task.hook = CrashHook::kThrow;
  EXPECT_THROW(PerformModelTask(task, testing::TinyCnnBytes()).IgnoreError(), std::runtime_error);
}

TEST(ModelTasksTest, EveryCallKindAnswersThroughMemoryFilesAsItDoesHere) {
  std::string model = testing::TinyCnnBytes();
  for (CallKind kind :
       {CallKind::kConvert, CallKind::kPlan, CallKind::kCheck, CallKind::kInspect}) {
    ModelTask task = Task(kind);
    absl::StatusOr<ModelAnswer> here = PerformModelTask(task, model);
    absl::StatusOr<ModelAnswer> there = ThroughMemoryFiles(task, model);
    ASSERT_TRUE(here.ok()) << here.status();
    ASSERT_TRUE(there.ok()) << there.status();
    ASSERT_EQ(here->index(), there->index());
    if (const auto* converted = std::get_if<v1::ConvertResponse>(&*there)) {
      const auto& local = std::get<v1::ConvertResponse>(*here);
      EXPECT_EQ(converted->model(), local.model());
      EXPECT_EQ(converted->model().empty(), kind == CallKind::kPlan);
      EXPECT_EQ(converted->report().target_opset(), 17);
      EXPECT_EQ(converted->report().steps_size(), local.report().steps_size());
    } else if (const auto* checked = std::get_if<v1::CheckResponse>(&*there)) {
      EXPECT_EQ(checked->SerializeAsString(),
                std::get<v1::CheckResponse>(*here).SerializeAsString());
    } else {
      EXPECT_EQ(std::get<v1::InspectResponse>(*there).text(),
                std::get<v1::InspectResponse>(*here).text());
    }
  }
}

TEST(ModelTasksTest, ErrorsComeBackWithTheirCodeAndMessage) {
  absl::StatusOr<ModelAnswer> answer = ThroughMemoryFiles(Task(CallKind::kConvert), "junk");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(answer.status().message(), "cnn.onnx: ")) << answer.status();
}

// A ConvertStream task converts the workspace's model and its answer
// comes back through the memory files: the model sent from the output file
// when the worker wrote one (ConvertBytes always does), from the answer's
// bytes when a whole conversion kept it in memory (a model whose external
// data the client keeps).
TEST(ModelTasksTest, StreamTaskConvertsTheWorkspacesModel) {
  struct Case {
    const char* name;
    std::string model;
    v1::ExternalData external;
    bool in_memory;
  };
  const Case cases[] = {
      {"uploaded", testing::TinyCnnBytes(), v1::EXTERNAL_DATA_UPLOADED, false},
      {"kept_by_client", testing::TinyCnnBytes(), v1::EXTERNAL_DATA_KEPT_BY_CLIENT, false},
      {"external_data_kept_by_client",
       testing::ExternalDataModel("w.bin").SerializeAsString(),
       v1::EXTERNAL_DATA_KEPT_BY_CLIENT, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string parent = onnxconvert::testing::FreshTestDir(c.name).string();
    absl::StatusOr<std::unique_ptr<StreamWorkspace>> workspace =
        StreamWorkspace::Create(parent, "cnn.onnx", UploadLimits());
    ASSERT_TRUE(workspace.ok()) << workspace.status();
    ASSERT_TRUE((*workspace)->Append("", c.model).ok());
    ASSERT_TRUE((*workspace)->FinishUpload().ok());
    ModelTask task = Task(CallKind::kConvertStream, 21);
    task.workspace = *std::move(workspace);
    task.header.set_external_data(c.external);
    absl::StatusOr<ModelAnswer> answer = ThroughMemoryFiles(task, "");
    ASSERT_TRUE(answer.ok()) << answer.status();
    const StreamOutput& output = std::get<StreamOutput>(*answer);
    EXPECT_EQ(output.result.report().target_opset(), 21);
    ASSERT_GE(output.result.files_size(), 1);
    EXPECT_EQ(output.model_in_memory, c.in_memory);
    int64_t size =
        output.model_in_memory
            ? static_cast<int64_t>(output.model_bytes.size())
            : static_cast<int64_t>(std::filesystem::file_size(task.workspace->output_model_path()));
    EXPECT_GT(size, 0);
    EXPECT_EQ(output.result.files(0).size(), size);
  }
}

TEST(ModelTasksTest, MemoryFileThatHoldsNoTaskIsInternal) {
  Section section = BytesSection("not a task");
  absl::StatusOr<UniqueFd> file = WriteSections("junk", {&section, 1});
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(HandleModelTask("r1", file->get()).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(ReadModelAnswer(CallKind::kConvert, file->get()).status().code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace onnxconvert::service
