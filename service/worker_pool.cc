#include "service/worker_pool.h"

#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "service/error_text.h"
#include "service/request_guard.h"

namespace onnxconvert::service {
namespace {

// What a packet between the server and the zygote says.
enum ZygoteOp : int32_t {
  kFork,        // server: fork a worker
  kKill,        // server: kill worker `pid` (if it is still the zygote's)
  kForked,      // zygote: worker `pid` runs; its socket is attached
  kForkFailed,  // zygote: fork failed with errno `value`
  kEnded,       // zygote: worker `pid` ended with wait status `value`
};

// A packet between the server and the zygote.
struct ZygoteMessage {
  int32_t op;
  int32_t pid;
  int32_t value;
};

// The packet that sends a worker a task (the task's memory file attached).
struct TaskPacket {
  char request_id[96];  // NUL-terminated
};

// The head of a worker's reply packet: the status's message follows when
// `code` is not OK; otherwise the reply's memory file is attached.
struct ReplyHead {
  int32_t code;
  int32_t retire;  // the worker ends after this reply
};

// Longest status message a worker sends back.
constexpr size_t kMaxReplyMessageBytes = size_t{16} << 10;
constexpr size_t kMaxReplyPacketBytes = sizeof(ReplyHead) + kMaxReplyMessageBytes + 64;
// Workers tried for a task before giving up (an idle worker may have ended
// before the zygote's report of it arrived).
constexpr int kMaxSendAttempts = 3;
// How long a task whose worker closed its socket waits for the zygote to
// say how the worker ended.
constexpr absl::Duration kEndReportWait = absl::Seconds(5);
// How long the server waits before asking again for a fork that failed.
constexpr absl::Duration kForkRetryDelay = absl::Milliseconds(100);

template <typename T>
absl::string_view AsBytes(const T& value) {
  return absl::string_view(reinterpret_cast<const char*>(&value), sizeof(value));
}

// Copies a packet's first bytes into `value`; false when there are too few.
template <typename T>
bool FromBytes(absl::string_view bytes, T& value) {
  if (bytes.size() < sizeof(T)) return false;
  std::memcpy(&value, bytes.data(), sizeof(T));
  return true;
}

std::string ErrnoText(absl::string_view call) { return absl::StrCat(call, ": ", strerror(errno)); }

void TellZygote(int control, ZygoteOp op, pid_t pid = 0) {
  (void)SendPacket(control, AsBytes(ZygoteMessage{op, pid, 0}));
}

// Threads of this process (-1 if /proc cannot say).
int ThreadCount() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  int count = 0;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(tasks);
  return count;
}

std::string SignalName(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  return abbreviation != nullptr ? absl::StrCat("SIG", abbreviation)
                                 : absl::StrCat("signal ", signal);
}

// --- In a worker process.

// No core dumps, and the address-space limit.
void LimitWorker(int64_t memory_mb) {
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  if (memory_mb <= 0) return;
#ifdef __SANITIZE_ADDRESS__
  return;  // ASan's shadow memory takes terabytes of address space
#endif
  rlim_t bytes = static_cast<rlim_t>(memory_mb) << 20;
  rlimit address_space{bytes, bytes};
  setrlimit(RLIMIT_AS, &address_space);
}

// " in worker process 1234 (address-space limit 4096 MiB)".
std::string WorkerPlace(int64_t memory_mb) {
  return absl::StrCat(
      " in worker process ", getpid(),
      memory_mb > 0 ? absl::StrCat(" (address-space limit ", memory_mb, " MiB)") : "");
}

// The handler's reply to one task; what it throws becomes the status, and
// the worker retires.
absl::StatusOr<UniqueFd> HandleTask(const WorkerPoolOptions& options, absl::string_view id,
                                    int task, bool& retire) {
  try {
    return options.handler(id, task);
  } catch (...) {
    retire = true;
    return ExceptionStatus(std::current_exception(), absl::StrCat("request ", id),
                           WorkerPlace(options.memory_mb));
  }
}

void SendReply(int socket, const absl::StatusOr<UniqueFd>& reply, bool retire) {
  ReplyHead head{static_cast<int32_t>(reply.status().code()), retire ? 1 : 0};
  std::string packet(AsBytes(head));
  if (reply.ok()) {
    (void)SendPacket(socket, packet, reply->get());
    return;
  }
  absl::StrAppend(&packet, Abbreviate(reply.status().message(), kMaxReplyMessageBytes));
  (void)SendPacket(socket, packet);
}

// How long a worker waits for its next task before it gives the heap its
// last task grew back to the system.
constexpr int kIdleTrimDelayMs = 200;

// True when `socket` has something to read within `timeout_ms`.
bool ReadableWithin(int socket, int timeout_ms) {
  pollfd entry{socket, POLLIN, 0};
  return poll(&entry, 1, timeout_ms) != 0;
}

// A worker: answers tasks on `socket` until the server closes it. Idle for
// kIdleTrimDelayMs after a task, it returns the free heap (malloc_trim), so
// that a burst of large calls does not leave the workers large.
[[noreturn]] void RunWorker(int socket, pid_t zygote, const WorkerPoolOptions& options) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != zygote) _exit(0);
  LimitWorker(options.memory_mb);
  bool worked_since_trim = false;
  for (;;) {
    if (worked_since_trim && !ReadableWithin(socket, kIdleTrimDelayMs)) {
      malloc_trim(0);
      worked_since_trim = false;
    }
    worked_since_trim = true;
    absl::StatusOr<std::optional<Packet>> packet = ReceivePacket(socket, sizeof(TaskPacket));
    if (!packet.ok() || !packet->has_value()) _exit(0);
    TaskPacket task{};
    if (!FromBytes((*packet)->bytes, task)) _exit(1);
    task.request_id[sizeof(task.request_id) - 1] = '\0';
    bool retire = false;
    absl::StatusOr<UniqueFd> reply =
        HandleTask(options, task.request_id, (*packet)->fd.get(), retire);
    (*packet)->fd.Reset();
    SendReply(socket, reply, retire);
    if (retire) _exit(0);
  }
}

// --- In the zygote.

// Forks a worker and hands its socket to the server.
void ForkWorker(int control, int child_events, const sigset_t& worker_signals,
                const WorkerPoolOptions& options, std::set<pid_t>& children) {
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) != 0) {
    (void)SendPacket(control, AsBytes(ZygoteMessage{kForkFailed, 0, errno}));
    return;
  }
  UniqueFd server_end(sockets[0]);
  UniqueFd worker_end(sockets[1]);
  pid_t zygote = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    close(control);
    close(child_events);
    server_end.Reset();
    sigprocmask(SIG_SETMASK, &worker_signals, nullptr);
    RunWorker(worker_end.get(), zygote, options);
  }
  if (pid < 0) {
    (void)SendPacket(control, AsBytes(ZygoteMessage{kForkFailed, 0, errno}));
    return;
  }
  children.insert(pid);
  (void)SendPacket(control, AsBytes(ZygoteMessage{kForked, pid, 0}), server_end.get());
}

// Reaps the workers that ended and reports each to the server.
void ReapWorkers(int control, int child_events, std::set<pid_t>& children) {
  signalfd_siginfo info;
  while (read(child_events, &info, sizeof(info)) == sizeof(info)) {
  }
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    children.erase(pid);
    (void)SendPacket(control, AsBytes(ZygoteMessage{kEnded, pid, status}));
  }
}

// The zygote: forks and kills workers as the server asks, until the server
// closes `control`; then kills the workers left and exits.
[[noreturn]] void RunZygote(int control, pid_t server, const WorkerPoolOptions& options) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != server) _exit(0);
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  sigset_t worker_signals;  // the server's, for the workers
  sigprocmask(SIG_BLOCK, &child_signal, &worker_signals);
  int child_events = signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
  if (child_events < 0) _exit(1);
  std::set<pid_t> children;
  for (;;) {
    pollfd ready[2] = {{control, POLLIN, 0}, {child_events, POLLIN, 0}};
    if (poll(ready, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready[1].revents != 0) ReapWorkers(control, child_events, children);
    if (ready[0].revents == 0) continue;
    absl::StatusOr<std::optional<Packet>> packet = ReceivePacket(control, sizeof(ZygoteMessage));
    if (!packet.ok() || !packet->has_value()) break;
    ZygoteMessage message{};
    if (!FromBytes((*packet)->bytes, message)) continue;
    if (message.op == kFork) {
      ForkWorker(control, child_events, worker_signals, options, children);
    } else if (message.op == kKill && children.count(message.pid) > 0) {
      kill(message.pid, SIGKILL);
    }
  }
  for (pid_t pid : children) kill(pid, SIGKILL);
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
  _exit(0);
}

}  // namespace

std::string DescribeEnd(int status) {
  if (WIFSIGNALED(status)) return absl::StrCat("died of ", SignalName(WTERMSIG(status)));
  if (WIFEXITED(status)) return absl::StrCat("exited with code ", WEXITSTATUS(status));
  return absl::StrCat("ended with wait status ", status);
}

absl::StatusOr<std::unique_ptr<WorkerPool>> WorkerPool::Start(WorkerPoolOptions options) {
  if (options.workers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("a worker pool needs at least 1 worker, not ", options.workers));
  }
  if (!options.handler) return absl::InvalidArgumentError("a worker pool needs a task handler");
  int threads = ThreadCount();
  if (threads != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the worker pool must start while the process has one thread; it has ", threads));
  }
  OC_ASSIGN_OR_RETURN(auto sockets, SocketPair());
  pid_t server = getpid();
  pid_t zygote = fork();
  if (zygote < 0) return absl::InternalError(ErrnoText("fork (the worker pool's zygote)"));
  if (zygote == 0) {
    sockets.first.Reset();
    RunZygote(sockets.second.get(), server, options);
  }
  sockets.second.Reset();
  std::unique_ptr<WorkerPool> pool(
      new WorkerPool(std::move(options), zygote, std::move(sockets.first)));
  pool->reader_ = std::thread([raw = pool.get()] { raw->ReadZygote(); });
  for (int i = 0; i < pool->options_.workers; ++i) TellZygote(pool->control_.get(), kFork);
  OC_RETURN_IF_ERROR(pool->AwaitWorkers());
  return pool;
}

WorkerPool::~WorkerPool() {
  // The zygote reads the end of its socket, kills the workers and exits;
  // the reader thread reads the end too, and reaps it.
  shutdown(control_.get(), SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
}

absl::Status WorkerPool::AwaitWorkers() {
  absl::MutexLock lock(&mu_);
  auto started = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int>(idle_.size()) >= options_.workers || !down_.empty();
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&started), options_.start_timeout)) {
    return absl::UnavailableError(absl::StrCat(
        "the worker processes did not start within ", absl::FormatDuration(options_.start_timeout),
        fork_error_.empty() ? "" : absl::StrCat(" (", fork_error_, ")")));
  }
  if (!down_.empty()) return absl::InternalError(down_);
  return absl::OkStatus();
}

void WorkerPool::ReadZygote() {
  for (;;) {
    absl::StatusOr<std::optional<Packet>> packet =
        ReceivePacket(control_.get(), sizeof(ZygoteMessage));
    if (!packet.ok() || !packet->has_value()) break;
    ZygoteMessage message{};
    if (!FromBytes((*packet)->bytes, message)) continue;
    if (message.op == kForkFailed) {
      {
        absl::MutexLock lock(&mu_);
        fork_error_ = absl::StrCat("fork: ", strerror(message.value));
      }
      absl::SleepFor(kForkRetryDelay);
      TellZygote(control_.get(), kFork);
      continue;
    }
    absl::MutexLock lock(&mu_);
    if (message.op == kForked && (*packet)->fd.valid()) {
      idle_.push_back(Worker{message.pid, std::move((*packet)->fd)});
    } else if (message.op == kEnded) {
      OnWorkerEnded(message.pid, message.value);
    }
  }
  int status = 0;
  waitpid(zygote_, &status, 0);
  absl::MutexLock lock(&mu_);
  down_ = absl::StrCat("the worker pool's zygote process ", zygote_, " ", DescribeEnd(status));
  idle_.clear();
}

void WorkerPool::OnWorkerEnded(pid_t pid, int status) {
  auto busy = busy_.find(pid);
  if (busy != busy_.end()) {
    busy->second = status;  // its task says how it ended
    return;
  }
  auto idle = std::find_if(idle_.begin(), idle_.end(),
                           [pid](const Worker& worker) { return worker.pid == pid; });
  if (idle == idle_.end()) return;  // dropped already
  idle_.erase(idle);
  ++replaced_;
  TellZygote(control_.get(), kFork);
}

absl::StatusOr<UniqueFd> WorkerPool::Run(absl::string_view request_id, UniqueFd task,
                                         const WaitLimits& limits) {
  TaskPacket packet{};
  std::memcpy(packet.request_id, request_id.data(),
              std::min(request_id.size(), sizeof(packet.request_id) - 1));
  for (int attempt = 1;; ++attempt) {
    OC_ASSIGN_OR_RETURN(Worker worker, Acquire(request_id, limits));
    absl::Status sent = SendPacket(worker.socket.get(), AsBytes(packet), task.get());
    if (sent.ok()) return AwaitReply(std::move(worker), request_id, limits);
    Replace(std::move(worker), /*kill=*/true);
    if (attempt == kMaxSendAttempts) {
      return absl::InternalError(absl::StrCat(
          "request ", request_id, ": no worker process took the task: ", sent.message()));
    }
  }
}

absl::StatusOr<WorkerPool::Worker> WorkerPool::Acquire(absl::string_view request_id,
                                                       const WaitLimits& limits) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]()
                   ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !idle_.empty() || !down_.empty(); };
  while (!mu_.AwaitWithTimeout(absl::Condition(&ready), limits.poll)) {
    OC_RETURN_IF_ERROR(WaitEnded(limits));
  }
  if (!down_.empty()) return absl::InternalError(absl::StrCat("request ", request_id, ": ", down_));
  Worker worker = std::move(idle_.back());
  idle_.pop_back();
  busy_[worker.pid] = std::nullopt;
  return worker;
}

absl::StatusOr<UniqueFd> WorkerPool::AwaitReply(Worker worker, absl::string_view request_id,
                                                const WaitLimits& limits) {
  pollfd reply{worker.socket.get(), POLLIN, 0};
  int poll_ms = static_cast<int>(std::max<int64_t>(1, absl::ToInt64Milliseconds(limits.poll)));
  for (;;) {
    int ready = poll(&reply, 1, poll_ms);
    if (ready > 0 || (ready < 0 && errno != EINTR)) break;
    absl::Status ended = WaitEnded(limits);
    if (!ended.ok()) {
      Replace(std::move(worker), /*kill=*/true);
      return ended;
    }
  }
  absl::StatusOr<std::optional<Packet>> packet =
      ReceivePacket(worker.socket.get(), kMaxReplyPacketBytes);
  if (!packet.ok() || !packet->has_value()) return DeathOf(std::move(worker), request_id);
  pid_t pid = worker.pid;
  ReplyHead head{};
  if (!FromBytes((*packet)->bytes, head)) {
    Replace(std::move(worker), /*kill=*/true);
    return absl::InternalError(absl::StrCat("request ", request_id, ": worker process ", pid,
                                            " sent a reply of ", (*packet)->bytes.size(),
                                            " bytes"));
  }
  if (head.retire != 0) {
    Replace(std::move(worker), /*kill=*/false);
  } else {
    Release(std::move(worker));
  }
  if (head.code != 0) {
    return absl::Status(static_cast<absl::StatusCode>(head.code),
                        absl::string_view((*packet)->bytes).substr(sizeof(head)));
  }
  if (!(*packet)->fd.valid()) {
    return absl::InternalError(
        absl::StrCat("request ", request_id, ": worker process ", pid, " sent no reply file"));
  }
  return std::move((*packet)->fd);
}

absl::Status WorkerPool::DeathOf(Worker worker, absl::string_view request_id) {
  pid_t pid = worker.pid;
  std::string end = "ended (how is not known)";
  {
    absl::MutexLock lock(&mu_);
    auto reported = [this, pid]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return busy_[pid].has_value() || !down_.empty();
    };
    mu_.AwaitWithTimeout(absl::Condition(&reported), kEndReportWait);
    if (busy_[pid].has_value()) {
      end = DescribeEnd(*busy_[pid]);
    } else if (!down_.empty()) {
      end = absl::StrCat("ended: ", down_);
    }
  }
  Replace(std::move(worker), /*kill=*/true);
  return absl::InternalError(
      absl::StrCat("request ", request_id, ": worker process ", pid, " ", end));
}

void WorkerPool::Release(Worker worker) {
  absl::MutexLock lock(&mu_);
  busy_.erase(worker.pid);
  if (down_.empty()) idle_.push_back(std::move(worker));
}

void WorkerPool::Replace(Worker worker, bool kill) {
  if (kill) TellZygote(control_.get(), kKill, worker.pid);
  worker.socket.Reset();
  absl::MutexLock lock(&mu_);
  busy_.erase(worker.pid);
  ++replaced_;
  TellZygote(control_.get(), kFork);
}

std::vector<pid_t> WorkerPool::worker_pids() const {
  absl::MutexLock lock(&mu_);
  std::vector<pid_t> pids;
  for (const Worker& worker : idle_) pids.push_back(worker.pid);
  for (const auto& [pid, status] : busy_) pids.push_back(pid);
  return pids;
}

int64_t WorkerPool::replaced() const {
  absl::MutexLock lock(&mu_);
  return replaced_;
}

}  // namespace onnxconvert::service
