#ifndef ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_
#define ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_

#include <cstddef>
#include <functional>

namespace onnxconvert::converter {

// Work on fewer nodes than this is not worth a second thread: a model
// converted whole with at least this many nodes has its input checked
// beside its inference, each step's rewrites in place validated as they
// come and the rest in two halves, on two threads. Measured on 2 cores, a
// second thread cost ~50% more CPU for no gain in time at 10 k nodes, and
// saved ~25% of the time at 1 M. Windows (4,096 nodes) stay on one thread.
inline constexpr size_t kSideBySideNodes = 65536;

// Runs `a` and `b`: on two threads when `parallel` and a thread can be had,
// else one after the other. Returns once both have finished.
void RunSideBySide(const std::function<void()>& a, const std::function<void()>& b,
                   bool parallel);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_
