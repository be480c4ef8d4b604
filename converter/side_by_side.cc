#include "converter/side_by_side.h"

#include <system_error>
#include <thread>

namespace onnxconvert::converter {

void RunSideBySide(const std::function<void()>& a, const std::function<void()>& b,
                   bool parallel) {
  if (parallel) {
    std::thread thread;
    try {
      thread = std::thread(a);
    } catch (const std::system_error&) {
      // No thread to be had: one after the other.
    }
    if (thread.joinable()) {
      b();
      thread.join();
      return;
    }
  }
  a();
  b();
}

}  // namespace onnxconvert::converter
