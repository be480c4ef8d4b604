#ifndef ONNX_CONVERT_EVAL_GEMM_H_
#define ONNX_CONVERT_EVAL_GEMM_H_

// Dense matrix products of float and double row-major matrices, run on the
// widest kernels the CPU supports: AVX2 with FMA when it has them (chosen
// once, at the first product), else the portable build's instruction set.
// Results of the two differ in the last bits (fused multiply-adds, another
// summation order).

#include <cstdint>

namespace onnxconvert::eval {

// How the operands of a product are stored, and a factor on the product.
struct ProductOptions {
  // `a` holds op(a)'s transpose: k x m instead of m x k.
  bool transpose_a = false;
  // `b` holds op(b)'s transpose: n x k instead of k x n.
  bool transpose_b = false;
  // Multiplies every element of the product.
  double scale = 1;
};

// out (m x n) = scale * op(a) (m x k) * op(b) (k x n), all dense row-major
// over contiguous storage; `out` overlaps neither operand. k = 0 gives zeros.
void MultiplyInto(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n,
                  const ProductOptions& options = {});
void MultiplyInto(const double* a, const double* b, double* out, int64_t m, int64_t k,
                  int64_t n, const ProductOptions& options = {});

// Whether MultiplyInto runs the AVX2+FMA kernels: the CPU has both and the
// environment variable ONNX_CONVERT_EVAL_NO_AVX2 is unset, empty or "0".
bool MultiplyUsesAvx2Fma();

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_GEMM_H_
