#include "eval/narrow.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::eval {
namespace {

// How a narrow float type encodes its values.
enum class Special {
  kNone,      // float4e2m1: no infinities, no NaN
  kFn,        // float8e4m3fn: NaN is S.1111.111, no infinities
  kFnuz,      // float8e4m3fnuz, float8e5m2fnuz: NaN is 0x80, no -0
  kIeee,      // float8e5m2: infinities and NaNs as IEEE
};

struct FloatFormat {
  int32_t type;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Special special;
  double max;  // largest finite value
};

constexpr FloatFormat kFormats[] = {
    {onnx::TensorProto::FLOAT8E4M3FN, 4, 3, 7, Special::kFn, 448},
    {onnx::TensorProto::FLOAT8E4M3FNUZ, 4, 3, 8, Special::kFnuz, 240},
    {onnx::TensorProto::FLOAT8E5M2, 5, 2, 15, Special::kIeee, 57344},
    {onnx::TensorProto::FLOAT8E5M2FNUZ, 5, 2, 16, Special::kFnuz, 57344},
    {onnx::TensorProto::FLOAT4E2M1, 2, 1, 1, Special::kNone, 6},
};

const FloatFormat* FormatOf(int32_t type) {
  for (const FloatFormat& f : kFormats) {
    if (f.type == type) return &f;
  }
  return nullptr;
}

struct IntegerFormat {
  int32_t type;
  int bits;
  bool is_signed;
};

constexpr IntegerFormat kIntegers[] = {
    {onnx::TensorProto::INT4, 4, true},
    {onnx::TensorProto::UINT4, 4, false},
    {onnx::TensorProto::INT2, 2, true},
    {onnx::TensorProto::UINT2, 2, false},
};

const IntegerFormat* IntegerOf(int32_t type) {
  for (const IntegerFormat& f : kIntegers) {
    if (f.type == type) return &f;
  }
  return nullptr;
}

// The bits of NaN (sign `negative`) in format `f`.
uint8_t NaNBits(const FloatFormat& f, bool negative) {
  int bits = 1 + f.exponent_bits + f.mantissa_bits;
  uint8_t sign = static_cast<uint8_t>(negative ? 1u << (bits - 1) : 0);
  switch (f.special) {
    case Special::kFn: return static_cast<uint8_t>(sign | ((1u << (bits - 1)) - 1));
    case Special::kFnuz: return 0x80;
    case Special::kIeee:  // a quiet NaN: exponent all ones, top mantissa bit
      return static_cast<uint8_t>(sign | (((1u << f.exponent_bits) - 1) << f.mantissa_bits) |
                                  (1u << (f.mantissa_bits - 1)));
    case Special::kNone: return 0x8;  // as the reference implementation gives
  }
  return 0;
}

// The bits of the finite magnitude `a` (already a value of the format, or
// zero) with sign `negative`.
uint8_t EncodeFinite(const FloatFormat& f, double a, bool negative) {
  int bits = 1 + f.exponent_bits + f.mantissa_bits;
  bool signed_zero_ok = f.special != Special::kFnuz;
  uint8_t sign = static_cast<uint8_t>(negative && (a != 0 || signed_zero_ok) ? 1u << (bits - 1) : 0);
  if (a == 0) return sign;
  int exponent;
  std::frexp(a, &exponent);  // a = m * 2^exponent, m in [0.5, 1)
  int unbiased = exponent - 1;
  int min_normal = 1 - f.bias;
  uint32_t e, m;
  if (unbiased < min_normal) {
    e = 0;
    m = static_cast<uint32_t>(std::ldexp(a, -(min_normal - f.mantissa_bits)));
  } else {
    e = static_cast<uint32_t>(unbiased + f.bias);
    m = static_cast<uint32_t>(std::ldexp(a, f.mantissa_bits - unbiased)) - (1u << f.mantissa_bits);
  }
  return static_cast<uint8_t>(sign | (e << f.mantissa_bits) | m);
}

}  // namespace

bool IsNarrow(int32_t elem_type) {
  return FormatOf(elem_type) != nullptr || IntegerOf(elem_type) != nullptr ||
         elem_type == onnx::TensorProto::FLOAT8E8M0;
}

int NarrowProtoBits(int32_t elem_type) {
  if (const IntegerFormat* f = IntegerOf(elem_type)) return f->bits;
  if (elem_type == onnx::TensorProto::FLOAT4E2M1) return 4;
  return 8;
}

bool IsNarrowInteger(int32_t elem_type) { return IntegerOf(elem_type) != nullptr; }

uint8_t NarrowFromProtoBits(int32_t elem_type, uint8_t bits) {
  int width = NarrowProtoBits(elem_type);
  if (width == 8) return bits;
  uint8_t mask = static_cast<uint8_t>((1u << width) - 1);
  bits &= mask;
  const IntegerFormat* f = IntegerOf(elem_type);
  if (f != nullptr && f->is_signed && (bits >> (width - 1)) != 0) {
    bits = static_cast<uint8_t>(bits | ~mask);  // sign-extend
  }
  return bits;
}

uint8_t NarrowToProtoBits(int32_t elem_type, uint8_t held) {
  int width = NarrowProtoBits(elem_type);
  if (width == 8) return held;
  return static_cast<uint8_t>(held & ((1u << width) - 1));
}

double NarrowToDouble(int32_t elem_type, uint8_t held) {
  if (const IntegerFormat* f = IntegerOf(elem_type)) {
    return f->is_signed ? static_cast<double>(static_cast<int8_t>(held)) : held;
  }
  if (elem_type == onnx::TensorProto::FLOAT8E8M0) {
    if (held == 0xFF) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, static_cast<int>(held) - 127);
  }
  const FloatFormat* f = FormatOf(elem_type);
  if (f == nullptr) return std::numeric_limits<double>::quiet_NaN();
  int bits = 1 + f->exponent_bits + f->mantissa_bits;
  bool negative = (held >> (bits - 1)) & 1;
  uint32_t e = (held >> f->mantissa_bits) & ((1u << f->exponent_bits) - 1);
  uint32_t m = held & ((1u << f->mantissa_bits) - 1);
  uint32_t e_max = (1u << f->exponent_bits) - 1;
  double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f->special) {
    case Special::kFn:
      if (e == e_max && m == (1u << f->mantissa_bits) - 1) return nan;
      break;
    case Special::kFnuz:
      if (held == 0x80) return nan;
      break;
    case Special::kIeee:
      if (e == e_max) return m != 0 ? nan : (negative ? -1.0 : 1.0) * INFINITY;
      break;
    case Special::kNone: break;
  }
  double magnitude = e == 0 ? std::ldexp(static_cast<double>(m), 1 - f->bias - f->mantissa_bits)
                            : std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -f->mantissa_bits),
                                         static_cast<int>(e) - f->bias);
  return negative ? -magnitude : magnitude;
}

uint8_t WrapToNarrowInteger(int32_t elem_type, int64_t value) {
  return NarrowFromProtoBits(elem_type, static_cast<uint8_t>(static_cast<uint64_t>(value) & 0xFF));
}

uint8_t DoubleToNarrowFloat(int32_t elem_type, double value, bool saturate) {
  const FloatFormat& f = *FormatOf(elem_type);
  if (f.special == Special::kNone) saturate = true;
  bool negative = std::signbit(value);
  if (std::isnan(value)) return NaNBits(f, negative);
  double a = std::fabs(value);
  double rounded = a;
  if (std::isfinite(a) && a != 0) {
    int exponent;
    std::frexp(a, &exponent);
    int unbiased = std::max(exponent - 1, 1 - f.bias);
    double quantum = std::ldexp(1.0, unbiased - f.mantissa_bits);
    rounded = std::nearbyint(a / quantum) * quantum;  // ties to even
  }
  if (rounded > f.max) {
    if (saturate) return EncodeFinite(f, f.max, negative);
    if (f.special == Special::kIeee) {
      return static_cast<uint8_t>((negative ? 0x80 : 0) | 0x7C);  // infinity
    }
    return NaNBits(f, negative);
  }
  return EncodeFinite(f, rounded, negative);
}

absl::StatusOr<uint8_t> FloatToE8M0(float value, bool saturate, E8M0Rounding rounding) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint32_t exponent = (bits >> 23) & 0xFF;
  if (std::isnan(value)) return uint8_t{0xFF};
  if (std::isinf(value)) {
    if (!saturate) return uint8_t{0xFF};
    return absl::InvalidArgumentError("infinity to float8e8m0 while saturating is ambiguous");
  }
  if (std::signbit(value) && value != 0) {
    return absl::InvalidArgumentError("negative values to float8e8m0 are undefined");
  }
  if (exponent == 0 && !saturate) {
    return absl::InvalidArgumentError(
        "values below float8e8m0's smallest without saturation are ambiguous");
  }
  bool up = false;
  switch (rounding) {
    case E8M0Rounding::kUp: up = (bits & 0x7FFFFF) != 0; break;
    case E8M0Rounding::kDown: break;
    case E8M0Rounding::kNearest: {
      bool g = (bits & 0x400000) != 0, r = (bits & 0x200000) != 0, s = (bits & 0x1FFFFF) != 0;
      up = g && (r || s || exponent > 0);
      break;
    }
  }
  if (up && exponent == 0xFE && saturate) up = false;
  return static_cast<uint8_t>(exponent + (up ? 1 : 0));
}

}  // namespace onnxconvert::eval
