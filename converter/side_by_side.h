#ifndef ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_
#define ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_

// When the converter runs two pieces of its work on two threads
// (base/side_by_side.h): when the model is large enough to gain from it.

#include <cstddef>

#include "base/side_by_side.h"

namespace onnxconvert::converter {

// Work on fewer nodes than this is not worth a second thread: a model
// converted whole with at least this many nodes has its input checked
// beside its inference, each step's rewrites in place validated as they
// come and the rest in two halves, on two threads. On 2 cores a second
// thread costs more CPU than it saves time on models of some 10 k nodes,
// and saves time on those of a million. Windows (1,024 nodes) stay on one
// thread.
inline constexpr size_t kSideBySideNodes = 65536;

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_SIDE_BY_SIDE_H_
