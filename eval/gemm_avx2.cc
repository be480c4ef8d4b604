// MultiplyInto's AVX2+FMA implementation (gemm_internal.h). This file alone
// is compiled with -mavx2 -mfma; Eigen is included under another namespace
// name so that none of its templates, instantiated here for AVX2, can stand
// in at link time for the portable instantiations elsewhere (one-definition
// rule). Include nothing else that has inline code.

#include <cstdint>

#include "eval/gemm_internal.h"

#define Eigen EigenAvx2Fma
#include "Eigen/Core"

#define ONNX_CONVERT_GEMM_ENTRY MultiplyAvx2Fma
#include "eval/gemm_eigen.inc"
