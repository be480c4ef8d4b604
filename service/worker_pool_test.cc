// A worker pool of real processes, started first thing in main (before
// any thread), running the test's own handler.
#include "service/worker_pool.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "service/testing/cancel_later.h"
#include "tests/eventually.h"

namespace onnxconvert::service {
namespace {

using ::onnxconvert::testing::Eventually;

constexpr int kWorkers = 2;
constexpr int64_t kMemoryMb = 512;
WorkerPool* pool = nullptr;

// The test's handler, in the worker: the task holds a command and a payload.
absl::StatusOr<UniqueFd> TestHandler(absl::string_view /*request_id*/, int task) {
  OC_ASSIGN_OR_RETURN(MappedSections sections, MappedSections::Map(task, "task"));
  absl::string_view command = sections.section(0);
  absl::string_view payload = sections.section(1);
  if (command == "segv") raise(SIGSEGV);
  if (command == "abort") std::abort();
  if (command == "exit") _exit(3);
  if (command == "throw") throw std::runtime_error("boom");
  if (command == "fail") return absl::InvalidArgumentError(payload);
  if (command == "sleep") std::this_thread::sleep_for(std::chrono::seconds(30));
  if (command == "oom") {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (;;) blocks.push_back(std::make_unique<char[]>(size_t{16} << 20));
  }
  Section echo = BytesSection(payload);
  return WriteSections("reply", {&echo, 1});
}

// Runs `command` with `payload` as request `id`; the reply's payload.
absl::StatusOr<std::string> RunTask(const std::string& id, const std::string& command,
                                    const std::string& payload = "", WaitLimits limits = {}) {
  Section sections[] = {BytesSection(command), BytesSection(payload)};
  OC_ASSIGN_OR_RETURN(UniqueFd task, WriteSections("task", sections));
  OC_ASSIGN_OR_RETURN(UniqueFd reply, pool->Run(id, std::move(task), limits));
  OC_ASSIGN_OR_RETURN(MappedSections mapped, MappedSections::Map(reply.get(), "reply"));
  return std::string(mapped.section(0));
}


bool FullPool() { return static_cast<int>(pool->worker_pids().size()) == kWorkers; }

TEST(WorkerPoolTest, TasksAndRepliesTravelAsMemoryFiles) {
  std::string payload(3 << 20, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7 + i / 4096);
  absl::StatusOr<std::string> reply = RunTask("t-echo", "echo", payload);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, payload);
  EXPECT_EQ(*RunTask("t-empty", "echo"), "");
}

TEST(WorkerPoolTest, StatusOfTheHandlerComesBackAsItIs) {
  absl::StatusOr<std::string> reply = RunTask("t-fail", "fail", "model.onnx: not a model");
  EXPECT_EQ(reply.status(), absl::InvalidArgumentError("model.onnx: not a model"));
}

TEST(WorkerPoolTest, WorkerThatDiesFailsItsTaskOnlyAndIsReplaced) {
  struct Case {
    const char* command;
    const char* end;
  };
  for (const Case& death : {Case{"segv", "died of SIGSEGV"}, Case{"abort", "died of SIGABRT"},
                            Case{"exit", "exited with code 3"}}) {
    int64_t replaced = pool->replaced();
    std::string id = absl::StrCat("t-", death.command);
    absl::StatusOr<std::string> reply = RunTask(id, death.command);
    EXPECT_EQ(reply.status().code(), absl::StatusCode::kInternal) << reply.status();
    std::string message(reply.status().message());
    EXPECT_TRUE(absl::StartsWith(message, absl::StrCat("request ", id, ": worker process ")))
        << message;
    EXPECT_TRUE(absl::EndsWith(message, death.end)) << message;
    EXPECT_EQ(pool->replaced(), replaced + 1);
    for (int i = 0; i < 2 * kWorkers; ++i) {
      EXPECT_EQ(*RunTask("t-after", "echo", "ok"), "ok") << death.command;
    }
    EXPECT_TRUE(Eventually(FullPool));
  }
}

TEST(WorkerPoolTest, OutOfMemoryIsResourceExhaustedAndRetiresTheWorker) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "under ASan workers have no address-space limit to run out of";
#endif
  int64_t replaced = pool->replaced();
  absl::StatusOr<std::string> reply = RunTask("t-oom", "oom");
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kResourceExhausted) << reply.status();
  EXPECT_TRUE(absl::StartsWith(reply.status().message(),
                               "request t-oom: out of memory (std::bad_alloc) in worker process "))
      << reply.status();
  EXPECT_TRUE(absl::EndsWith(reply.status().message(),
                             absl::StrCat("(address-space limit ", kMemoryMb, " MiB)")))
      << reply.status();
  EXPECT_EQ(pool->replaced(), replaced + 1);
  EXPECT_EQ(*RunTask("t-after", "echo", "ok"), "ok");
}

TEST(WorkerPoolTest, ExceptionIsInternalNamingTheRequest) {
  absl::StatusOr<std::string> reply = RunTask("t-throw", "throw");
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(
      absl::StartsWith(reply.status().message(), "request t-throw: unexpected error (boom)"))
      << reply.status();
  EXPECT_EQ(*RunTask("t-after", "echo", "ok"), "ok");
}

TEST(WorkerPoolTest, DeadlineKillsTheWorkerAndAnswersAtOnce) {
  int64_t replaced = pool->replaced();
  WaitLimits limits;
  limits.deadline = absl::Now() + absl::Milliseconds(100);
  absl::Time start = absl::Now();
  absl::StatusOr<std::string> reply = RunTask("t-late", "sleep", "", limits);
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded) << reply.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(pool->replaced(), replaced + 1);
  EXPECT_TRUE(Eventually(FullPool));
  EXPECT_EQ(*RunTask("t-after", "echo", "ok"), "ok");
}

TEST(WorkerPoolTest, CancellationKillsTheWorker) {
  std::vector<pid_t> before = pool->worker_pids();
  absl::StatusOr<std::string> reply;
  {
    testing::CancelLater client(std::chrono::milliseconds(100));
    reply = RunTask("t-cancel", "sleep", "", client.limits());
  }
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kCancelled) << reply.status();
  // One of the workers is gone for good (killed, reaped by the zygote).
  EXPECT_TRUE(Eventually([&] {
    int gone = 0;
    for (pid_t pid : before) gone += kill(pid, 0) != 0 ? 1 : 0;
    return gone == 1 && FullPool();
  }));
}

TEST(WorkerPoolTest, ConcurrentTasksWhileOneWorkerCrashes) {
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 6; ++c) {
    clients.emplace_back([c, &failed] {
      for (int i = 0; i < 20; ++i) {
        std::string payload = absl::StrCat("client ", c, " call ", i);
        absl::StatusOr<std::string> reply = RunTask(absl::StrCat("t-", c, "-", i), "echo", payload);
        if (!reply.ok() || *reply != payload) ++failed;
      }
    });
  }
  absl::StatusOr<std::string> crashed = RunTask("t-crash", "segv");
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_TRUE(absl::EndsWith(crashed.status().message(), "died of SIGSEGV")) << crashed.status();
  EXPECT_TRUE(Eventually(FullPool));
}

TEST(WorkerPoolTest, WorkerKilledWhileIdleIsReplaced) {
  ASSERT_TRUE(Eventually(FullPool));
  pid_t victim = pool->worker_pids().front();
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  EXPECT_TRUE(Eventually([&] {
    std::vector<pid_t> pids = pool->worker_pids();
    return FullPool() && std::find(pids.begin(), pids.end(), victim) == pids.end();
  }));
  for (int i = 0; i < 2 * kWorkers; ++i) EXPECT_EQ(*RunTask("t-after", "echo", "ok"), "ok");
}

TEST(WorkerPoolTest, RefusesToStartOnceTheProcessHasThreads) {
  WorkerPoolOptions options;
  options.handler = &TestHandler;
  absl::StatusOr<std::unique_ptr<WorkerPool>> second = WorkerPool::Start(options);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
}

TEST(DescribeEndTest, NamesTheSignalOrTheExitCode) {
  EXPECT_EQ(DescribeEnd(SIGSEGV), "died of SIGSEGV");  // WIFSIGNALED form
  EXPECT_EQ(DescribeEnd(3 << 8), "exited with code 3");
}

}  // namespace
}  // namespace onnxconvert::service

int main(int argc, char** argv) {
  // Before anything starts a thread.
  onnxconvert::service::WorkerPoolOptions options;
  options.workers = onnxconvert::service::kWorkers;
  options.memory_mb = onnxconvert::service::kMemoryMb;
  options.handler = &onnxconvert::service::TestHandler;
  auto started = onnxconvert::service::WorkerPool::Start(options);
  if (!started.ok()) {
    std::cerr << "worker_pool_test: " << started.status() << "\n";
    return 1;
  }
  onnxconvert::service::pool = started->get();
  ::testing::InitGoogleTest(&argc, argv);
  int result = RUN_ALL_TESTS();
  started->reset();
  return result;
}
