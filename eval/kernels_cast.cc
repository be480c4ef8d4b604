// BitCast, and Cast and CastLike between every element type the evaluator
// holds: numbers, bool, strings and the narrow types (float8, float4,
// int4, int2; tensor.h, with Cast's saturate and round_mode).
//
// Each element is read exactly as an integer, a floating-point value or a
// string, then written as the target type: integers wrap (two's
// complement), floating-point values round to nearest even, a float
// becomes an integer by truncation when in range (else an error, never
// UB), strings parse as numbers (INF, -INF and NaN in any case) and
// numbers print in their shortest round-trip form.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::cast_ops {

// One element read exactly.
struct Value {
  enum Kind { kSigned, kUnsigned, kFloat, kString } kind = kSigned;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  const std::string* s = nullptr;
};

// How Cast writes the types that need it.
struct CastOptions {
  bool saturate = true;
  E8M0Rounding rounding = E8M0Rounding::kUp;
};

// Element `index` of `t` (of a type the evaluator holds).
Value Read(const Tensor& t, int64_t index) {
  Value v;
  int32_t type = t.elem_type();
  if (type == onnx::TensorProto::STRING) {
    v.kind = Value::kString;
    v.s = &t.strings()[index];
  } else if (IsNarrow(type)) {
    double value = NarrowValue(t, index);
    if (IsNarrowInteger(type)) {
      v.kind = Value::kSigned;
      v.i = static_cast<int64_t>(value);
    } else {
      v.kind = Value::kFloat;
      v.f = value;
    }
  }
  VisitElementType(type, [&](auto x) {
    using T = decltype(x);
    T e = t.data<T>()[index];
    if constexpr (kIsFloat<T>) {
      v.kind = Value::kFloat;
      v.f = static_cast<double>(Load(e));
    } else if constexpr (std::is_signed_v<T>) {
      v.kind = Value::kSigned;
      v.i = e;
    } else {
      v.kind = Value::kUnsigned;
      v.u = e;
    }
  });
  return v;
}

// A string as a number: an integer when it is one (for integer targets),
// else a float; INF, +INF, -INF and NaN in any case.
absl::StatusOr<Value> Parse(const std::string& s, bool want_integer) {
  std::string upper = absl::AsciiStrToUpper(s);
  Value v;
  v.kind = Value::kFloat;
  if (upper == "INF" || upper == "+INF") {
    v.f = std::numeric_limits<double>::infinity();
    return v;
  }
  if (upper == "-INF") {
    v.f = -std::numeric_limits<double>::infinity();
    return v;
  }
  if (upper == "NAN") {
    v.f = std::numeric_limits<double>::quiet_NaN();
    return v;
  }
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  if (want_integer) {
    int64_t i;
    auto [ptr, ec] = std::from_chars(begin, end, i);
    if (ec == std::errc() && ptr == end) {
      v.kind = Value::kSigned;
      v.i = i;
      return v;
    }
  }
  double f;
  auto [ptr, ec] = std::from_chars(begin, end, f);
  if (ec != std::errc() || ptr != end || begin == end) {
    return absl::InvalidArgumentError(absl::StrCat("\"", s, "\" is not a number"));
  }
  v.f = f;
  return v;
}

// `v` as the integer storage type T: integers wrap, floats truncate and
// must be in range.
template <typename T>
absl::StatusOr<T> ToInteger(const Value& v) {
  switch (v.kind) {
    case Value::kSigned: return static_cast<T>(v.i);
    case Value::kUnsigned: return static_cast<T>(v.u);
    case Value::kFloat: {
      absl::Status status;
      T result = TruncateTo<T>(v.f, status);
      if (!status.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("the value ", v.f, " is outside ",
                                                       "the target type's range"));
      }
      return result;
    }
    case Value::kString: break;
  }
  return absl::InvalidArgumentError("internal: a string to convert");
}

double ToFloating(const Value& v) {
  return v.kind == Value::kSigned ? static_cast<double>(v.i)
         : v.kind == Value::kUnsigned ? static_cast<double>(v.u)
                                      : v.f;
}

// `v` as the storage type T of a held type other than the narrow ones.
template <typename T>
absl::StatusOr<T> Convert(const Value& v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (v.kind == Value::kString) return absl::InvalidArgumentError("strings do not cast to bool");
    return v.kind == Value::kSigned ? v.i != 0 : v.kind == Value::kUnsigned ? v.u != 0 : v.f != 0;
  } else if constexpr (kIsFloat<T>) {
    using C = Compute<T>;
    // From integers, convert the integer itself (one rounding).
    C value = v.kind == Value::kSigned   ? static_cast<C>(v.i)
              : v.kind == Value::kUnsigned ? static_cast<C>(v.u)
                                           : static_cast<C>(v.f);
    return Store<T>(value);
  } else {
    return ToInteger<T>(v);
  }
}

// `v` as the held byte of narrow type `to`: integers wrapped to its bits
// (floats truncated first), floats through float32 (as the reference).
absl::StatusOr<uint8_t> ConvertNarrow(const Value& v, int32_t to, const CastOptions& options) {
  if (IsNarrowInteger(to)) {
    OC_ASSIGN_OR_RETURN(int64_t i, ToInteger<int64_t>(v));
    auto [lowest, highest] = NarrowIntRange(to);
    uint64_t mask = static_cast<uint64_t>(highest) - static_cast<uint64_t>(lowest);  // 2^bits - 1
    uint64_t bits = static_cast<uint64_t>(i) & mask;
    if (lowest < 0 && bits > static_cast<uint64_t>(highest)) bits |= ~mask;  // sign-extend
    return static_cast<uint8_t>(bits);
  }
  float value = static_cast<float>(ToFloating(v));
  if (to == onnx::TensorProto::FLOAT8E8M0) {
    return FloatToE8M0(value, options.saturate, options.rounding);
  }
  return FloatToNarrowFloat(to, value, options.saturate);
}

// `v` printed: integers in decimal, floats in their shortest round-trip
// form as `from` (float16 and bfloat16 as float), INF/-INF/NaN.
absl::StatusOr<std::string> Print(const Value& v, int32_t from) {
  switch (v.kind) {
    case Value::kSigned: return absl::StrCat(v.i);
    case Value::kUnsigned:
      if (from == onnx::TensorProto::BOOL) {
        return absl::InvalidArgumentError("bool does not cast to string");
      }
      return absl::StrCat(v.u);
    case Value::kString: return *v.s;
    case Value::kFloat: break;
  }
  if (std::isnan(v.f)) return std::string("NaN");
  if (std::isinf(v.f)) return std::string(v.f > 0 ? "INF" : "-INF");
  char buffer[64];
  std::to_chars_result r = from == onnx::TensorProto::DOUBLE
                               ? std::to_chars(buffer, buffer + sizeof buffer, v.f)
                               : std::to_chars(buffer, buffer + sizeof buffer,
                                               static_cast<float>(v.f));
  return std::string(buffer, r.ptr);
}

// Writes `v` as element `index` of `out`.
absl::Status Write(const Value& read, Tensor& out, int64_t index, int32_t from,
                   const CastOptions& options) {
  int32_t to = out.elem_type();
  if (to == onnx::TensorProto::STRING) {
    OC_ASSIGN_OR_RETURN(out.strings()[index], Print(read, from));
    return absl::OkStatus();
  }
  Value v = read;
  bool parsed = read.kind == Value::kString;
  if (parsed) {
    if (to == onnx::TensorProto::BOOL) return absl::InvalidArgumentError("strings do not cast to bool");
    bool integer = !IsNarrow(to) || IsNarrowInteger(to);
    VisitElementType(to, [&](auto x) { integer = !kIsFloat<decltype(x)>; });
    OC_ASSIGN_OR_RETURN(v, Parse(*read.s, integer));
  }
  if (IsNarrow(to)) {
    OC_ASSIGN_OR_RETURN(out.data<uint8_t>()[index], ConvertNarrow(v, to, options));
  } else {
    absl::Status status;
    VisitElementType(to, [&](auto x) {
      using T = decltype(x);
      absl::StatusOr<T> converted = Convert<T>(v);
      if (converted.ok()) {
        out.data<T>()[index] = *converted;
      } else {
        status = converted.status();
      }
    });
    OC_RETURN_IF_ERROR(status);
  }
  // An integer written from a string must not have wrapped.
  if (parsed && v.kind == Value::kSigned) {
    Value back = Read(out, index);
    bool same = back.kind == Value::kSigned ? back.i == v.i : (v.i >= 0 && back.u == static_cast<uint64_t>(v.i));
    if (!same) return absl::InvalidArgumentError(absl::StrCat("\"", *read.s, "\" is out of range"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CastOptions> ReadOptions(const KernelCall& call) {
  CastOptions options;
  options.saturate = call.Int("saturate", 1) != 0;
  if (const onnx::AttributeProto* mode = call.attribute("round_mode")) {
    if (mode->s() == "up") {
      options.rounding = E8M0Rounding::kUp;
    } else if (mode->s() == "down") {
      options.rounding = E8M0Rounding::kDown;
    } else if (mode->s() == "nearest") {
      options.rounding = E8M0Rounding::kNearest;
    } else {
      return call.Error(absl::StrCat("round_mode \"", mode->s(), "\" is unknown"));
    }
  }
  return options;
}

Outputs CastTo(const KernelCall& call, const Tensor& input, int32_t to) {
  if (!Holds(to) || !Holds(input.elem_type())) {
    return call.Error(absl::StrCat("casts from ", ElementTypeName(input.elem_type()), " to ",
                                   ElementTypeName(to), " are not supported by the evaluator"));
  }
  OC_ASSIGN_OR_RETURN(CastOptions options, ReadOptions(call));
  Tensor out(to, input.dims());
  for (int64_t i = 0; i < input.size(); ++i) {
    absl::Status status = Write(Read(input, i), out, i, input.elem_type(), options);
    if (!status.ok()) return call.Error(status.message());
  }
  return One(std::move(out));
}

Outputs CastKernel(const KernelCall& call) {
  const Tensor* input = call.input(0);
  if (input == nullptr) return call.Error("input is absent");
  const onnx::AttributeProto* to = call.attribute("to");
  if (to == nullptr) return call.Error("attribute 'to' is unset");
  if (to->has_i()) return CastTo(call, *input, static_cast<int32_t>(to->i()));
  // Cast-1 names the type as a string.
  onnx::TensorProto::DataType type;
  if (!onnx::TensorProto::DataType_Parse(absl::AsciiStrToUpper(to->s()), &type)) {
    return call.Error(absl::StrCat("'to' names no type: ", to->s()));
  }
  return CastTo(call, *input, type);
}

Outputs CastLikeKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [input, like] = inputs;
  return CastTo(call, *input, like->elem_type());
}

// Bits one element of a held type takes (4 or 2 for the packed narrow
// types), or 0 for strings.
int ElementBits(int32_t elem_type) {
  if (IsNarrowInteger(elem_type)) {
    auto [lowest, highest] = NarrowIntRange(elem_type);
    return highest - lowest == 15 ? 4 : 2;
  }
  if (elem_type == onnx::TensorProto::FLOAT4E2M1) return 4;
  return ElementSize(elem_type) * 8;
}

// BitCast: the elements' bits (little endian) read as type `to` of the
// same width. A bool must come from bits 0 or 1.
Outputs BitCastKernel(const KernelCall& call) {
  const Tensor* input = call.input(0);
  if (input == nullptr) return call.Error("input is absent");
  int32_t to = static_cast<int32_t>(call.Int("to", 0));
  int bits = ElementBits(input->elem_type());
  if (!Holds(to) || bits == 0 || ElementBits(to) != bits) {
    return call.Error(absl::StrCat("bitcasts from ", ElementTypeName(input->elem_type()), " to ",
                                   ElementTypeName(to), " are not supported (widths differ or a ",
                                   "type is not held)"));
  }
  Tensor out(to, input->dims());
  absl::Span<const uint8_t> from(input->data<uint8_t>().data(),
                                 static_cast<size_t>(input->size() * ElementSize(to)));
  absl::Span<uint8_t> into(out.data<uint8_t>().data(), from.size());
  std::copy(from.begin(), from.end(), into.begin());
  if (bits < 8) {
    // Held one per byte: keep the low bits, sign-extended for signed types.
    auto [lowest, highest] = NarrowIntRange(to);
    uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
    for (uint8_t& b : into) {
      b &= mask;
      if (lowest < 0 && b > highest) b |= static_cast<uint8_t>(~mask);
    }
  }
  if (to == onnx::TensorProto::BOOL) {
    for (uint8_t b : into) {
      if (b > 1) return call.Error("bits other than 0 and 1 are no bool");
    }
  }
  return One(std::move(out));
}

}  // namespace onnxconvert::eval::cast_ops
