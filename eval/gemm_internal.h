#ifndef ONNX_CONVERT_EVAL_GEMM_INTERNAL_H_
#define ONNX_CONVERT_EVAL_GEMM_INTERNAL_H_

// The two implementations behind MultiplyInto (gemm.h), for its dispatch and
// tests. gemm_avx2.cc, compiled for AVX2+FMA, includes this header: it must
// declare only (no inline code, no other includes than <cstdint>), so that
// nothing compiled for AVX2 can stand in for its portable definition.

#include <cstdint>

namespace onnxconvert::eval::gemm_internal {

// out (m x n) = scale * op(a) * op(b) as MultiplyInto, with Eigen compiled
// for the build's instruction set. m, k, n > 0.
void MultiplyPortable(const float* a, const float* b, float* out, int64_t m, int64_t k,
                      int64_t n, bool transpose_a, bool transpose_b, float scale);
void MultiplyPortable(const double* a, const double* b, double* out, int64_t m, int64_t k,
                      int64_t n, bool transpose_a, bool transpose_b, double scale);

// The same with Eigen compiled for AVX2 and FMA: only for CPUs that have
// both (CpuHasAvx2Fma).
void MultiplyAvx2Fma(const float* a, const float* b, float* out, int64_t m, int64_t k,
                     int64_t n, bool transpose_a, bool transpose_b, float scale);
void MultiplyAvx2Fma(const double* a, const double* b, double* out, int64_t m, int64_t k,
                     int64_t n, bool transpose_a, bool transpose_b, double scale);

// Whether this CPU runs AVX2 and FMA instructions.
bool CpuHasAvx2Fma();

}  // namespace onnxconvert::eval::gemm_internal

#endif  // ONNX_CONVERT_EVAL_GEMM_INTERNAL_H_
