#ifndef ONNX_CONVERT_SERVICE_WORKER_POOL_H_
#define ONNX_CONVERT_SERVICE_WORKER_POOL_H_

// Work on models in worker processes, so that one that crashes (a signal,
// an abort) fails the request it served and nothing else.
//
// First thing, before the process has a second thread (gRPC and fork do not
// mix), the server forks a zygote: a process that stays single-threaded,
// forks the workers (and later their replacements), passes each one's
// socket to the server over its own (SCM_RIGHTS), reaps them and reports
// how each ended. The server sends a worker one task at a time: a packet
// naming the request, carrying a memory file that holds the task (ipc.h);
// the worker answers with a packet carrying the reply's memory file, or a
// status. Each worker runs with an address-space limit (RLIMIT_AS) and no
// core dumps, and dies with the zygote, which dies with the server.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/ipc.h"
#include "service/worker.h"

namespace onnxconvert::service {

// What a worker does with a task: from the memory file `task` sent for
// request `request_id`, the memory file of its reply, or the status the
// request fails with. Runs in the worker process; whatever it throws is
// caught there and answered (std::bad_alloc: ResourceExhausted), and the
// worker is then replaced.
using TaskHandler = std::function<absl::StatusOr<UniqueFd>(absl::string_view request_id, int task)>;

// How many workers, their limit, and their work.
struct WorkerPoolOptions {
  // Worker processes kept running (at least 1).
  int workers = 4;
  // Each worker's address-space limit (RLIMIT_AS) in MiB; <= 0: none.
  int64_t memory_mb = 4096;
  TaskHandler handler;
  // How long Start waits for the first workers.
  absl::Duration start_timeout = absl::Seconds(30);
};

// The zygote, the workers, and the tasks sent to them. Thread-safe.
class WorkerPool {
 public:
  // Forks the zygote, which forks the workers, and waits until they run.
  // Both are copies of this process as it is now: a process that already
  // runs a second thread is FailedPrecondition. workers < 1 or no handler is
  // InvalidArgument; a failed system call is Internal, naming it.
  static absl::StatusOr<std::unique_ptr<WorkerPool>> Start(WorkerPoolOptions options);
  // Stops the workers (whatever they run) and the zygote.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `task` (a memory file, see ipc.h) for request `request_id` on a
  // free worker, waiting for one, and returns the memory file of the reply
  // or the handler's status. A worker that dies on the task fails it with
  // Internal ("request r42: worker process 1234 died of SIGSEGV") and is
  // replaced. When `limits` end the wait first: DeadlineExceeded or
  // Cancelled, and the worker running the task is killed and replaced.
  absl::StatusOr<UniqueFd> Run(absl::string_view request_id, UniqueFd task,
                               const WaitLimits& limits);

  // The options it was started with.
  const WorkerPoolOptions& options() const { return options_; }
  // Process ids of the workers running now (idle or busy).
  std::vector<pid_t> worker_pids() const;
  // Workers started to replace one that died, was killed or retired.
  int64_t replaced() const;

 private:
  // A running worker and the server's end of its socket.
  struct Worker {
    pid_t pid = -1;
    UniqueFd socket;
  };
  WorkerPool(WorkerPoolOptions options, pid_t zygote, UniqueFd control)
      : options_(std::move(options)), zygote_(zygote), control_(std::move(control)) {}

  // The reader thread: takes the zygote's reports until it ends.
  void ReadZygote();
  // Takes the report that worker `pid` ended with wait status `status`.
  void OnWorkerEnded(pid_t pid, int status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits until the first workers run.
  absl::Status AwaitWorkers();
  // An idle worker, now busy; waits for one within `limits`. Internal,
  // naming request `request_id`, once the zygote has ended.
  absl::StatusOr<Worker> Acquire(absl::string_view request_id, const WaitLimits& limits);
  // Waits for the reply of `worker` to the task of `request_id`.
  absl::StatusOr<UniqueFd> AwaitReply(Worker worker, absl::string_view request_id,
                                      const WaitLimits& limits);
  // Internal, saying how `worker`, which closed its socket, ended.
  absl::Status DeathOf(Worker worker, absl::string_view request_id);
  // Makes `worker` idle again.
  void Release(Worker worker);
  // Drops `worker` (killing it first if `kill`) and forks another.
  void Replace(Worker worker, bool kill);

  const WorkerPoolOptions options_;
  const pid_t zygote_;
  UniqueFd control_;  // the server's end of the zygote's socket
  std::thread reader_;
  mutable absl::Mutex mu_;
  std::vector<Worker> idle_ ABSL_GUARDED_BY(mu_);
  // Busy workers, with their wait status once the zygote reports it.
  std::map<pid_t, std::optional<int>> busy_ ABSL_GUARDED_BY(mu_);
  // Why no task can run any more ("" while the zygote runs).
  std::string down_ ABSL_GUARDED_BY(mu_);
  // The last fork that failed, for Start's error.
  std::string fork_error_ ABSL_GUARDED_BY(mu_);
  int64_t replaced_ ABSL_GUARDED_BY(mu_) = 0;
};

// How a process with wait status `status` ended: "died of SIGSEGV",
// "exited with code 3".
std::string DescribeEnd(int status);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_WORKER_POOL_H_
