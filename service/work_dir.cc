#include "service/work_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace onnxconvert::service {
namespace fs = std::filesystem;
namespace {

constexpr absl::string_view kPrefix = "onnx-convert-";
constexpr char kLockFile[] = "/.lock";

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// The pid in a process work folder's name.
pid_t PidOf(absl::string_view name) {
  absl::ConsumePrefix(&name, kPrefix);
  int64_t pid = 0;
  std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
  return absl::SimpleAtoi(parts[0], &pid) ? static_cast<pid_t>(pid) : 0;
}

// True when the process that made folder `dir` is gone: its lock can be
// taken, or (a folder without a lock file, its process killed between the
// two) its pid names no process.
bool OwnerIsGone(const fs::path& dir) {
  int fd = open((dir.string() + kLockFile).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    pid_t pid = PidOf(dir.filename().string());
    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
  }
  bool gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);
  return gone;
}

}  // namespace

bool IsProcessWorkDirName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, kPrefix)) return false;
  std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
  return parts.size() == 2 && AllDigits(parts[0]) && AllDigits(parts[1]);
}

std::vector<std::string> RemoveStaleWorkDirs(const std::string& parent) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (auto it = fs::directory_iterator(parent, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (!IsProcessWorkDirName(it->path().filename().string())) continue;
    if (!it->is_directory() || !OwnerIsGone(it->path())) continue;
    std::error_code remove_ec;
    fs::remove_all(it->path(), remove_ec);
    if (!remove_ec) removed.push_back(it->path().string());
  }
  return removed;
}

absl::StatusOr<std::unique_ptr<ProcessWorkDir>> ProcessWorkDir::Create(
    const std::string& parent, std::vector<std::string>* removed) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (!fs::is_directory(parent, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("work directory ", parent, ": is not a directory and cannot be made one"));
  }
  std::vector<std::string> stale = RemoveStaleWorkDirs(parent);
  if (removed != nullptr) *removed = std::move(stale);
  std::string path = absl::StrCat(parent, "/", kPrefix, getpid(), "-",
                                   absl::ToUnixMicros(absl::Now()));
  if (!fs::create_directory(path, ec)) {
    return absl::InternalError(absl::StrCat("work directory ", path, ": cannot be created (",
                                            ec ? ec.message() : "it exists", ")"));
  }
  int fd = open((path + kLockFile).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
    std::string reason = std::strerror(errno);
    if (fd >= 0) close(fd);
    fs::remove_all(path, ec);
    return absl::InternalError(absl::StrCat("work directory ", path, ": cannot lock ",
                                            kLockFile + 1, " (", reason, ")"));
  }
  return std::unique_ptr<ProcessWorkDir>(new ProcessWorkDir(path, fd));
}

void ProcessWorkDir::Remove() {
  if (removed_) return;
  removed_ = true;
  std::error_code ec;
  fs::remove_all(path_, ec);
  close(lock_fd_);
}

ProcessWorkDir::~ProcessWorkDir() { Remove(); }

}  // namespace onnxconvert::service
