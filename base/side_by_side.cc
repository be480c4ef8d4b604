#include "base/side_by_side.h"

#include <exception>
#include <system_error>
#include <thread>

namespace onnxconvert {

void RunSideBySide(const std::function<void()>& a, const std::function<void()>& b,
                   bool parallel) {
  if (parallel) {
    // An exception of either (out of memory) waits for the other, then
    // goes on from here.
    std::exception_ptr a_failed;
    std::thread thread;
    try {
      thread = std::thread([&a, &a_failed] {
        try {
          a();
        } catch (...) {
          a_failed = std::current_exception();
        }
      });
    } catch (const std::system_error&) {
      // No thread to be had: one after the other.
    }
    if (thread.joinable()) {
      try {
        b();
      } catch (...) {
        thread.join();
        throw;
      }
      thread.join();
      if (a_failed) std::rethrow_exception(a_failed);
      return;
    }
  }
  a();
  b();
}

}  // namespace onnxconvert
