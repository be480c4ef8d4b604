// Convolutions kernels.

#include "eval/kernel.h"
#include "eval/nn_util.h"

namespace onnxconvert::eval {
namespace {

constexpr KernelRow kRows[] = {
    {"", "", 0, -1, nullptr},
};

}  // namespace

absl::Span<const KernelRow> ConvKernels() { return absl::Span<const KernelRow>(kRows, 0); }

}  // namespace onnxconvert::eval
