#ifndef ONNX_CONVERT_SERVICE_WORK_DIR_H_
#define ONNX_CONVERT_SERVICE_WORK_DIR_H_

// The work folder of one server process: a subfolder of --work_dir named
// onnx-convert-<pid>-<start time>, locked (flock on its .lock file) for as
// long as the process lives. The lock goes with the process however it
// ends, so the folders of dead processes are told from live ones without
// trusting pids that the system may reuse.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onnxconvert::service {

class ProcessWorkDir {
 public:
  // Removes the folders of dead server processes under `parent`, then
  // creates and locks this process's own. `removed`, when given, receives
  // the folders removed. An error names the folder at fault.
  static absl::StatusOr<std::unique_ptr<ProcessWorkDir>> Create(
      const std::string& parent, std::vector<std::string>* removed = nullptr);
  // Removes the folder and what is in it.
  ~ProcessWorkDir();
  ProcessWorkDir(const ProcessWorkDir&) = delete;
  ProcessWorkDir& operator=(const ProcessWorkDir&) = delete;

  // The folder.
  const std::string& path() const { return path_; }
  // Removes the folder now (e.g. before leaving with _Exit); idempotent.
  void Remove();

 private:
  ProcessWorkDir(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}

  const std::string path_;
  int lock_fd_;
  bool removed_ = false;
};

// True when `name` is the name of a server process's work folder
// (onnx-convert-<pid>-<start time>).
bool IsProcessWorkDirName(absl::string_view name);

// Removes the process work folders under `parent` whose process is gone;
// the paths removed.
std::vector<std::string> RemoveStaleWorkDirs(const std::string& parent);

}  // namespace onnxconvert::service

#endif  // ONNX_CONVERT_SERVICE_WORK_DIR_H_
