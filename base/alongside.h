#ifndef ONNX_CONVERT_BASE_ALONGSIDE_H_
#define ONNX_CONVERT_BASE_ALONGSIDE_H_

// Alongside<T>: one piece of work run on a thread of its own while the
// caller goes on with another, its result taken with Join(). For two
// passes over a large model that only read it (and write nothing the other
// reads), such as building the graph index while inference runs.

#include <functional>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

namespace onnxconvert {

template <typename T>
class Alongside {
 public:
  // Starts `work` on a thread of its own when `on_thread` and a thread can
  // be had; else Join() runs it on the caller's thread.
  Alongside(std::function<T()> work, bool on_thread) : work_(std::move(work)) {
    if (!on_thread) return;
    try {
      thread_ = std::thread([this] { result_.emplace(work_()); });
    } catch (const std::system_error&) {
      // No thread to be had: Join() runs the work.
    }
  }
  // Waits for the work when it is still running (its result is dropped).
  ~Alongside() {
    if (thread_.joinable()) thread_.join();
  }
  Alongside(const Alongside&) = delete;
  Alongside& operator=(const Alongside&) = delete;

  // True if the work runs on a thread of its own.
  bool on_thread() const { return thread_.joinable(); }
  // The work's result, once it is done (run now when it had no thread).
  // Call once.
  T Join() {
    if (thread_.joinable()) {
      thread_.join();
    } else {
      result_.emplace(work_());
    }
    return *std::move(result_);
  }

 private:
  std::function<T()> work_;
  std::optional<T> result_;
  std::thread thread_;
};

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_ALONGSIDE_H_
