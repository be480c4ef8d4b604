#ifndef ONNX_CONVERT_EVAL_NARROW_H_
#define ONNX_CONVERT_EVAL_NARROW_H_

// The element types narrower than 16 bits that computing kernels do not
// visit: the 8-bit floats (float8e4m3fn, float8e4m3fnuz, float8e5m2,
// float8e5m2fnuz, float8e8m0) and the 4- and 2-bit types (float4e2m1,
// int4, uint4, int2, uint2). A Tensor holds each element in one byte: the
// floats as their bits, the integers as their value (int8 or uint8), so
// that kernels which only move elements handle them; protos pack the 4-
// and 2-bit types two and four to a byte. Cast converts them.

#include <cstdint>

#include "absl/status/statusor.h"

namespace onnxconvert::eval {

// Whether `elem_type` is one of the narrow types.
bool IsNarrow(int32_t elem_type);

// Bits one element of a narrow type takes in a TensorProto (8, 4 or 2).
int NarrowProtoBits(int32_t elem_type);

// Whether a narrow type is an integer type (int4, uint4, int2, uint2).
bool IsNarrowInteger(int32_t elem_type);

// The byte a Tensor holds for the proto's bits of one element (the 4- and
// 2-bit signed integers sign-extended), and back (masked to the bits).
uint8_t NarrowFromProtoBits(int32_t elem_type, uint8_t bits);
uint8_t NarrowToProtoBits(int32_t elem_type, uint8_t held);

// The value of a held element of a narrow type (NaN, infinities exact).
double NarrowToDouble(int32_t elem_type, uint8_t held);

// `value` wrapped into a narrow integer type (its low bits, two's
// complement), as held.
uint8_t WrapToNarrowInteger(int32_t elem_type, int64_t value);

// `value` as a narrow float type other than float8e8m0, rounded to nearest
// even. Out of range (and infinities): the largest finite value when
// `saturate`, else infinity (float8e5m2) or NaN; float4e2m1 always
// saturates. NaN stays NaN (float4e2m1, which has none: 0b1000, as the
// reference implementation gives).
uint8_t DoubleToNarrowFloat(int32_t elem_type, double value, bool saturate);

// How Cast rounds to float8e8m0.
enum class E8M0Rounding { kUp, kDown, kNearest };

// `value` (a float32) as float8e8m0: its binary exponent, rounded by
// `rounding` and saturated (or NaN past the largest when not `saturate`).
// Negative values (undefined), infinities when saturating, and values
// below the smallest when not saturating (where the specification and the
// reference implementation disagree) are refused.
absl::StatusOr<uint8_t> FloatToE8M0(float value, bool saturate, E8M0Rounding rounding);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_NARROW_H_
