#ifndef ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_
#define ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_

#include <cstddef>
#include <functional>

namespace onnxconvert::converter {

// Work on fewer nodes than this is not worth a second thread.
inline constexpr size_t kSideBySideNodes = 1024;

// Runs `a` and `b`: on two threads when `parallel` and a thread can be had,
// else one after the other. Returns once both have finished.
void RunSideBySide(const std::function<void()>& a, const std::function<void()>& b,
                   bool parallel);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_
