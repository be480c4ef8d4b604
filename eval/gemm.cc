#include "eval/gemm.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "Eigen/Core"
#include "eval/gemm_internal.h"

#define ONNX_CONVERT_GEMM_ENTRY MultiplyPortable
#include "eval/gemm_eigen.inc"

namespace onnxconvert::eval {
namespace gemm_internal {

bool CpuHasAvx2Fma() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace gemm_internal

namespace {

// Whether ONNX_CONVERT_EVAL_NO_AVX2 asks for the portable kernels.
bool Avx2Disabled() {
  const char* value = std::getenv("ONNX_CONVERT_EVAL_NO_AVX2");
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

// The implementation for this CPU and environment, chosen once.
bool ChooseAvx2Fma() {
  static const bool chosen = gemm_internal::CpuHasAvx2Fma() && !Avx2Disabled();
  return chosen;
}

template <typename C>
void Multiply(const C* a, const C* b, C* out, int64_t m, int64_t k, int64_t n,
              const ProductOptions& options) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    std::fill(out, out + m * n, C{0});
    return;
  }
  C scale = static_cast<C>(options.scale);
  if (ChooseAvx2Fma()) {
    gemm_internal::MultiplyAvx2Fma(a, b, out, m, k, n, options.transpose_a, options.transpose_b,
                                   scale);
  } else {
    gemm_internal::MultiplyPortable(a, b, out, m, k, n, options.transpose_a,
                                    options.transpose_b, scale);
  }
}

}  // namespace

void MultiplyInto(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n,
                  const ProductOptions& options) {
  Multiply(a, b, out, m, k, n, options);
}

void MultiplyInto(const double* a, const double* b, double* out, int64_t m, int64_t k,
                  int64_t n, const ProductOptions& options) {
  Multiply(a, b, out, m, k, n, options);
}

bool MultiplyUsesAvx2Fma() { return ChooseAvx2Fma(); }

}  // namespace onnxconvert::eval
