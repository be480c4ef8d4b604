#ifndef ONNX_CONVERT_BASE_SIDE_BY_SIDE_H_
#define ONNX_CONVERT_BASE_SIDE_BY_SIDE_H_

// Running two pieces of work on two threads: for passes over a large model
// that only read it (and write nothing the other reads), such as checking
// it while it is inferred.

#include <functional>

namespace onnxconvert {

// Runs `a` and `b`: `a` on a second thread when `parallel` and a thread can
// be had, else one after the other. Returns once both have finished; an
// exception of either is rethrown once both have.
void RunSideBySide(const std::function<void()>& a, const std::function<void()>& b,
                   bool parallel);

}  // namespace onnxconvert

#endif  // ONNX_CONVERT_BASE_SIDE_BY_SIDE_H_
