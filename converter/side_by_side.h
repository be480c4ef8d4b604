#ifndef ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_
#define ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_

// Running two pieces of the converter's work on two threads when the model is
// large enough to gain from it.

#include <cstddef>
#include <functional>

namespace onnxconvert::converter {

// Work on fewer nodes than this is not worth a second thread: a model
// converted whole with at least this many nodes has its input checked
// beside its inference, each step's rewrites in place validated as they
// come and the rest in two halves, on two threads. On 2 cores a second
// thread costs more CPU than it saves time on models of some 10 k nodes,
// and saves time on those of a million. Windows (1,024 nodes) stay on one
// thread.
inline constexpr size_t kSideBySideNodes = 65536;

// Runs `a` and `b`: on two threads when `parallel` and a thread can be had,
// else one after the other. Returns once both have finished.
void RunSideBySide(const std::function<void()>& a, const std::function<void()>& b,
                   bool parallel);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_
