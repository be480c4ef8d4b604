// MultiplyInto's AVX2+FMA implementation (gemm_internal.h). This file alone
// is compiled with -mavx2 -mfma; Eigen is included under another namespace
// name so that none of its templates, instantiated here for AVX2, can stand
// in at link time for the portable instantiations elsewhere (one-definition
// rule). Include nothing else that has inline code.

#include <cstdint>

#include "eval/gemm_internal.h"

#define Eigen EigenAvx2Fma
#include "Eigen/Core"

#include "eval/gemm_eigen.inc"

namespace onnxconvert::eval::gemm_internal {

void MultiplyAvx2Fma(const float* a, const float* b, float* out, int64_t m, int64_t k,
                     int64_t n, bool transpose_a, bool transpose_b, float scale) {
  EigenMultiply(a, b, out, m, k, n, transpose_a, transpose_b, scale);
}

void MultiplyAvx2Fma(const double* a, const double* b, double* out, int64_t m, int64_t k,
                     int64_t n, bool transpose_a, bool transpose_b, double scale) {
  EigenMultiply(a, b, out, m, k, n, transpose_a, transpose_b, scale);
}

}  // namespace onnxconvert::eval::gemm_internal
