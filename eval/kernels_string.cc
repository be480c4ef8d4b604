#include "eval/kernel.h"

namespace onnxconvert::eval {

absl::Span<const KernelRow> StringKernels() { return {}; }

}  // namespace onnxconvert::eval
