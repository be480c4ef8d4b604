#include "eval/tensor.h"

#include <cmath>
#include <cstring>
#include <algorithm>
#include <limits>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnxconvert::eval {
namespace {

uint32_t FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

float BitsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Number of elements `dims` describe, or -1 when a dim is negative or the
// product passes `limit`.
int64_t CountWithin(absl::Span<const int64_t> dims, int64_t limit) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) return -1;
    if (dim == 0) return 0;
  }
  for (int64_t dim : dims) {
    if (count > limit / dim) return -1;
    count *= dim;
  }
  return count;
}

// How the float8/float4 kinds spend their codes on infinities and NaN.
enum class Specials {
  kIeee,              // float8e5m2: all-ones exponent for inf and NaN
  kAllOnesNan,        // float8e4m3fn: S.1111.111 is NaN, no infinities
  kUnsignedZeroNan,   // the fnuz kinds: 0x80 is NaN, no -0, no infinities
  kNone,              // float4e2m1: every code a finite number
};

struct FloatFormat {
  int32_t elem_type;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
};

constexpr FloatFormat kFloatFormats[] = {
    {onnx::TensorProto::FLOAT8E4M3FN, 4, 3, 7, Specials::kAllOnesNan},
    {onnx::TensorProto::FLOAT8E4M3FNUZ, 4, 3, 8, Specials::kUnsignedZeroNan},
    {onnx::TensorProto::FLOAT8E5M2, 5, 2, 15, Specials::kIeee},
    {onnx::TensorProto::FLOAT8E5M2FNUZ, 5, 2, 16, Specials::kUnsignedZeroNan},
    {onnx::TensorProto::FLOAT4E2M1, 2, 1, 1, Specials::kNone},
};

const FloatFormat* FindFloatFormat(int32_t elem_type) {
  for (const FloatFormat& f : kFloatFormats) {
    if (f.elem_type == elem_type) return &f;
  }
  return nullptr;
}

// The code of the largest finite value of `f`.
uint8_t MaxCode(const FloatFormat& f) {
  int total = 1 + f.exponent_bits + f.mantissa_bits;
  uint32_t all = (1u << (total - 1)) - 1;  // every bit but the sign
  switch (f.specials) {
    case Specials::kIeee: return static_cast<uint8_t>(all - (1u << f.mantissa_bits));
    case Specials::kAllOnesNan: return static_cast<uint8_t>(all - 1);
    default: return static_cast<uint8_t>(all);
  }
}

// Bits one element of a narrow type takes in a TensorProto (8 otherwise).
int BitsPerElement(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::INT4:
    case onnx::TensorProto::UINT4:
    case onnx::TensorProto::FLOAT4E2M1: return 4;
    case onnx::TensorProto::INT2:
    case onnx::TensorProto::UINT2: return 2;
    default: return 8;
  }
}

template <typename T, typename Field>
absl::Status CopyTyped(const Field& field, Tensor& tensor) {
  absl::Span<T> out = tensor.data<T>();
  for (size_t i = 0; i < out.size(); ++i) {
    if constexpr (std::is_same_v<T, Half>) {
      out[i] = Half{static_cast<uint16_t>(field.Get(i))};
    } else if constexpr (std::is_same_v<T, BHalf>) {
      out[i] = BHalf{static_cast<uint16_t>(field.Get(i))};
    } else if constexpr (std::is_same_v<T, bool>) {
      out[i] = field.Get(i) != 0;
    } else {
      out[i] = static_cast<T>(field.Get(i));
    }
  }
  return absl::OkStatus();
}

}  // namespace

float HalfToFloat(Half h) {
  uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000) << 16;
  uint32_t exponent = (h.bits >> 10) & 0x1f;
  uint32_t mantissa = h.bits & 0x3ff;
  if (exponent == 0x1f) return BitsFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -value : value;
  }
  return BitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

Half FloatToHalf(float f) {
  uint32_t bits = FloatBits(f);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) return Half{static_cast<uint16_t>(sign | 0x7e00)};  // NaN
  if (magnitude >= 0x477ff000) return Half{static_cast<uint16_t>(sign | 0x7c00)};  // overflow
  if (magnitude < 0x38800000) {
    // Subnormal or zero: round |f| * 2^24 to nearest even.
    float scaled = std::ldexp(BitsFloat(magnitude), 24);
    return Half{static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)))};
  }
  uint32_t rounded = magnitude + 0xfff + ((magnitude >> 13) & 1);
  return Half{static_cast<uint16_t>(sign | ((rounded - 0x38000000) >> 13))};
}

float BHalfToFloat(BHalf h) { return BitsFloat(static_cast<uint32_t>(h.bits) << 16); }

BHalf FloatToBHalf(float f) {
  uint32_t bits = FloatBits(f);
  if ((bits & 0x7fffffff) > 0x7f800000) return BHalf{static_cast<uint16_t>((bits >> 16) | 0x40)};
  bits += 0x7fff + ((bits >> 16) & 1);
  return BHalf{static_cast<uint16_t>(bits >> 16)};
}

int ElementSize(int32_t elem_type) {
  if (IsNarrow(elem_type)) return 1;
  int size = 0;
  VisitElementType(elem_type, [&](auto v) { size = sizeof(v); });
  return size;
}

bool IsNarrowFloat(int32_t elem_type) {
  return FindFloatFormat(elem_type) != nullptr;
}

bool IsNarrow(int32_t elem_type) {
  return IsNarrowFloat(elem_type) || elem_type == onnx::TensorProto::FLOAT8E8M0 ||
         BitsPerElement(elem_type) < 8;
}

std::pair<int32_t, int32_t> NarrowIntRange(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::INT4: return {-8, 7};
    case onnx::TensorProto::UINT4: return {0, 15};
    case onnx::TensorProto::INT2: return {-2, 1};
    case onnx::TensorProto::UINT2: return {0, 3};
    default: return {0, 0};
  }
}

float NarrowFloatToFloat(int32_t elem_type, uint8_t bits) {
  if (elem_type == onnx::TensorProto::FLOAT8E8M0) {
    if (bits == 0xFF) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, static_cast<int>(bits) - 127);
  }
  const FloatFormat* f = FindFloatFormat(elem_type);
  if (f == nullptr) return std::numeric_limits<float>::quiet_NaN();
  int total = 1 + f->exponent_bits + f->mantissa_bits;
  bits &= static_cast<uint8_t>((1u << total) - 1);
  bool negative = (bits >> (total - 1)) & 1;
  uint32_t magnitude = bits & ((1u << (total - 1)) - 1);
  uint32_t exponent = magnitude >> f->mantissa_bits;
  uint32_t mantissa = magnitude & ((1u << f->mantissa_bits) - 1);
  uint32_t top = (1u << f->exponent_bits) - 1;
  float nan = std::numeric_limits<float>::quiet_NaN();
  switch (f->specials) {
    case Specials::kUnsignedZeroNan:
      if (negative && magnitude == 0) return nan;
      break;
    case Specials::kAllOnesNan:
      if (magnitude == (1u << (total - 1)) - 1) return nan;
      break;
    case Specials::kIeee:
      if (exponent == top) {
        if (mantissa != 0) return nan;
        return negative ? -std::numeric_limits<float>::infinity()
                        : std::numeric_limits<float>::infinity();
      }
      break;
    case Specials::kNone:
      break;
  }
  int min_exponent = 1 - f->bias;
  float value = exponent == 0
                    ? std::ldexp(static_cast<float>(mantissa), min_exponent - f->mantissa_bits)
                    : std::ldexp(static_cast<float>(mantissa + (1u << f->mantissa_bits)),
                                 static_cast<int>(exponent) - f->bias - f->mantissa_bits);
  return negative ? -value : value;
}

uint8_t FloatToNarrowFloat(int32_t elem_type, float value, bool saturate) {
  const FloatFormat* f = FindFloatFormat(elem_type);
  if (f == nullptr) return 0;
  int total = 1 + f->exponent_bits + f->mantissa_bits;
  uint8_t sign = std::signbit(value) ? static_cast<uint8_t>(1u << (total - 1)) : 0;
  uint8_t max_code = MaxCode(*f);
  auto nan_code = [&]() -> uint8_t {
    switch (f->specials) {
      case Specials::kUnsignedZeroNan: return 0x80;
      case Specials::kAllOnesNan: return static_cast<uint8_t>(sign | 0x7f);
      case Specials::kIeee: return static_cast<uint8_t>(sign | 0x7f);
      case Specials::kNone: return static_cast<uint8_t>(1u << (total - 1));  // as the reference: -0
    }
    return 0;
  };
  auto overflow = [&]() -> uint8_t {
    if (saturate || f->specials == Specials::kNone) return static_cast<uint8_t>(sign | max_code);
    if (f->specials == Specials::kIeee) {
      return static_cast<uint8_t>(sign | (((1u << f->exponent_bits) - 1) << f->mantissa_bits));
    }
    return nan_code();
  };
  if (std::isnan(value)) return nan_code();
  if (std::isinf(value)) return overflow();
  double magnitude = std::fabs(static_cast<double>(value));
  int min_exponent = 1 - f->bias;
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = m * 2^exponent, m in [0.5, 1)
  int unbiased = std::max(exponent - 1, min_exponent);
  double quantum = std::ldexp(1.0, unbiased - f->mantissa_bits);
  double rounded = std::nearbyint(magnitude / quantum) * quantum;
  if (rounded > static_cast<double>(NarrowFloatToFloat(elem_type, max_code))) return overflow();
  if (rounded == 0) return f->specials == Specials::kUnsignedZeroNan ? 0 : sign;
  std::frexp(rounded, &exponent);
  unbiased = exponent - 1;
  uint32_t code;
  if (unbiased < min_exponent) {
    code = static_cast<uint32_t>(std::ldexp(rounded, f->mantissa_bits - min_exponent));
  } else {
    uint32_t mantissa = static_cast<uint32_t>(
        std::ldexp(rounded, f->mantissa_bits - unbiased) - std::ldexp(1.0, f->mantissa_bits));
    code = (static_cast<uint32_t>(unbiased + f->bias) << f->mantissa_bits) | mantissa;
  }
  return static_cast<uint8_t>(sign | code);
}

absl::StatusOr<uint8_t> FloatToE8M0(float value, bool saturate, E8M0Rounding rounding) {
  uint32_t bits = FloatBits(value);
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
      // The reference's guard, round and sticky bits.
      bool g = (bits & 0x400000) != 0, r = (bits & 0x200000) != 0, s = (bits & 0x1FFFFF) != 0;
      up = g && (r || s || exponent > 0);
      break;
    }
  }
  if (up && exponent == 0xFE && saturate) up = false;
  return static_cast<uint8_t>(exponent + (up ? 1 : 0));
}

bool Holds(int32_t elem_type) {
  return elem_type == onnx::TensorProto::STRING || ElementSize(elem_type) > 0;
}

namespace {

// Unpacks `packed` (elements of `bits` bits, lowest first in each byte) into
// one byte per element of `tensor`, sign-extending signed types.
void Unpack(absl::Span<const uint8_t> packed, int bits, Tensor& tensor) {
  bool is_signed = NarrowIntRange(tensor.elem_type()).first < 0;
  int per_byte = 8 / bits;
  uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  absl::Span<uint8_t> out = tensor.data<uint8_t>();
  for (size_t i = 0; i < out.size(); ++i) {
    uint8_t v = (packed[i / per_byte] >> ((i % per_byte) * bits)) & mask;
    if (is_signed && (v >> (bits - 1)) != 0) v = static_cast<uint8_t>(v | ~mask);
    out[i] = v;
  }
}

// The elements of `tensor` packed `bits` bits each, lowest first.
std::string Pack(const Tensor& tensor, int bits) {
  int per_byte = 8 / bits;
  uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  absl::Span<const uint8_t> in = tensor.data<uint8_t>();
  std::string packed((in.size() + per_byte - 1) / per_byte, '\0');
  for (size_t i = 0; i < in.size(); ++i) {
    packed[i / per_byte] = static_cast<char>(static_cast<uint8_t>(packed[i / per_byte]) |
                                             ((in[i] & mask) << ((i % per_byte) * bits)));
  }
  return packed;
}

// FromProto for the narrow types: bytes packed `bits` per element, in
// raw_data or one byte per int32_data entry.
absl::StatusOr<Tensor> NarrowFromProto(const onnx::TensorProto& proto, int64_t count,
                                       absl::FunctionRef<absl::Status(absl::string_view)> error) {
  Tensor tensor(proto.data_type(), {proto.dims().begin(), proto.dims().end()});
  int bits = BitsPerElement(proto.data_type());
  int64_t bytes = (count * bits + 7) / 8;
  std::string packed;
  if (proto.has_raw_data()) {
    packed = proto.raw_data();
  } else {
    for (int32_t v : proto.int32_data()) packed.push_back(static_cast<char>(v & 0xff));
  }
  if (static_cast<int64_t>(packed.size()) != bytes) {
    return error(absl::StrCat("holds ", packed.size(), " bytes for ", count, " elements of ",
                              bits, " bits"));
  }
  absl::Span<const uint8_t> span(reinterpret_cast<const uint8_t*>(packed.data()), packed.size());
  if (bits == 8) {
    std::copy(span.begin(), span.end(), tensor.data<uint8_t>().begin());
  } else {
    Unpack(span, bits, tensor);
  }
  return tensor;
}

}  // namespace

std::string ElementTypeName(int32_t elem_type) {
  if (!onnx::TensorProto::DataType_IsValid(elem_type)) return absl::StrCat("type ", elem_type);
  std::string name =
      onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

Tensor::Tensor(int32_t elem_type, std::vector<int64_t> dims)
    : elem_type_(elem_type), dims_(std::move(dims)) {
  size_ = 1;
  for (int64_t dim : dims_) size_ *= dim;
  if (elem_type == onnx::TensorProto::STRING) {
    strings_.resize(size_);
  } else {
    bytes_.resize(static_cast<size_t>(size_) * ElementSize(elem_type));
  }
}

Tensor Tensor::FromRaw(int32_t elem_type, std::vector<int64_t> dims, const void* raw) {
  Tensor tensor;
  tensor.elem_type_ = elem_type;
  tensor.dims_ = std::move(dims);
  tensor.size_ = 1;
  for (int64_t dim : tensor.dims_) tensor.size_ *= dim;
  const std::byte* from = static_cast<const std::byte*>(raw);
  tensor.bytes_.assign(from, from + static_cast<size_t>(tensor.size_) * ElementSize(elem_type));
  return tensor;
}

void Tensor::Reshape(std::vector<int64_t> dims) { dims_ = std::move(dims); }

int64_t Tensor::ByteSize() const {
  int64_t bytes = static_cast<int64_t>(bytes_.size());
  for (const std::string& s : strings_) bytes += static_cast<int64_t>(s.size());
  return bytes;
}

absl::StatusOr<Tensor> FromProto(const onnx::TensorProto& proto, int64_t max_elements) {
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(), "': ", why));
  };
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return error("its data is external, which the evaluator does not read");
  }
  if (!Holds(proto.data_type())) {
    return error(absl::StrCat("elements of ", ElementTypeName(proto.data_type()),
                              " are not supported by the evaluator"));
  }
  int64_t count = CountWithin(proto.dims(), max_elements);
  if (count < 0) {
    return error(absl::StrCat("its dims are negative or hold more than ", max_elements,
                              " elements"));
  }
  if (proto.data_type() != onnx::TensorProto::STRING && !IsNarrow(proto.data_type()) &&
      proto.has_raw_data() &&
      static_cast<int64_t>(proto.raw_data().size()) ==
          count * ElementSize(proto.data_type())) {
    // The common case: the elements as raw bytes, copied once.
    Tensor tensor = Tensor::FromRaw(proto.data_type(), {proto.dims().begin(), proto.dims().end()},
                                    proto.raw_data().data());
    if (proto.data_type() == onnx::TensorProto::BOOL) {
      // Any nonzero byte is true; a bool object must hold 0 or 1.
      absl::Span<uint8_t> bytes{tensor.data<uint8_t>().data(), static_cast<size_t>(count)};
      for (uint8_t& b : bytes) b = b != 0;
    }
    return tensor;
  }
  Tensor tensor(proto.data_type(), {proto.dims().begin(), proto.dims().end()});
  if (proto.data_type() == onnx::TensorProto::STRING) {
    if (proto.string_data_size() != count) {
      return error(absl::StrCat("holds ", proto.string_data_size(), " strings for ", count,
                                " elements"));
    }
    for (int64_t i = 0; i < count; ++i) tensor.strings()[i] = proto.string_data(i);
    return tensor;
  }
  if (IsNarrow(proto.data_type())) {
    return NarrowFromProto(proto, count, [&](absl::string_view why) { return error(why); });
  }
  int size = ElementSize(proto.data_type());
  if (proto.has_raw_data()) {
    if (static_cast<int64_t>(proto.raw_data().size()) != count * size) {
      return error(absl::StrCat("raw_data has ", proto.raw_data().size(), " bytes for ", count,
                                " elements of ", size));
    }
    if (count > 0) std::memcpy(tensor.data<uint8_t>().data(), proto.raw_data().data(),
                               static_cast<size_t>(count * size));
    if (proto.data_type() == onnx::TensorProto::BOOL) {
      // Any nonzero byte is true; a bool object must hold 0 or 1.
      absl::Span<uint8_t> bytes{tensor.data<uint8_t>().data(), static_cast<size_t>(count)};
      for (uint8_t& b : bytes) b = b != 0;
    }
    return tensor;
  }
  int64_t held = 0;
  absl::Status status;
  VisitElementType(proto.data_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<T, float>) {
      held = proto.float_data_size();
      if (held == count) status = CopyTyped<T>(proto.float_data(), tensor);
    } else if constexpr (std::is_same_v<T, double>) {
      held = proto.double_data_size();
      if (held == count) status = CopyTyped<T>(proto.double_data(), tensor);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      held = proto.int64_data_size();
      if (held == count) status = CopyTyped<T>(proto.int64_data(), tensor);
    } else if constexpr (std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>) {
      held = proto.uint64_data_size();
      if (held == count) status = CopyTyped<T>(proto.uint64_data(), tensor);
    } else {
      held = proto.int32_data_size();
      if (held == count) status = CopyTyped<T>(proto.int32_data(), tensor);
    }
  });
  if (held != count) {
    return error(absl::StrCat("holds ", held, " values for ", count, " elements"));
  }
  if (!status.ok()) return status;
  return tensor;
}

onnx::TensorProto ToProto(const Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(tensor.elem_type());
  for (int64_t dim : tensor.dims()) proto.add_dims(dim);
  if (tensor.elem_type() == onnx::TensorProto::STRING) {
    for (const std::string& s : tensor.strings()) proto.add_string_data(s);
    return proto;
  }
  if (IsNarrow(tensor.elem_type())) {
    proto.set_raw_data(Pack(tensor, BitsPerElement(tensor.elem_type())));
    return proto;
  }
  absl::Span<const uint8_t> bytes{tensor.data<uint8_t>().data(),
                                  static_cast<size_t>(tensor.size() *
                                                      ElementSize(tensor.elem_type()))};
  proto.set_raw_data(bytes.data(), bytes.size());
  return proto;
}

absl::StatusOr<std::vector<int64_t>> ToInt64s(const Tensor& tensor) {
  std::vector<int64_t> values;
  bool integral = false;
  VisitElementType(tensor.elem_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                  !std::is_same_v<T, uint64_t>) {
      integral = true;
      for (T x : tensor.data<T>()) values.push_back(static_cast<int64_t>(x));
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      integral = true;
      for (T x : tensor.data<T>()) {
        values.push_back(x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                             ? std::numeric_limits<int64_t>::max()
                             : static_cast<int64_t>(x));
      }
    }
  });
  if (!integral) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected integers, got ", ElementTypeName(tensor.elem_type())));
  }
  return values;
}

std::string DebugString(const Tensor& tensor) {
  std::vector<std::string> values;
  if (tensor.elem_type() == onnx::TensorProto::STRING) {
    for (const std::string& s : tensor.strings()) values.push_back(absl::StrCat("\"", s, "\""));
  }
  if (IsNarrowFloat(tensor.elem_type()) || tensor.elem_type() == onnx::TensorProto::FLOAT8E8M0) {
    for (uint8_t bits : tensor.data<uint8_t>()) {
      values.push_back(absl::StrCat(NarrowFloatToFloat(tensor.elem_type(), bits)));
    }
  } else if (IsNarrow(tensor.elem_type())) {
    bool is_signed = NarrowIntRange(tensor.elem_type()).first < 0;
    for (uint8_t bits : tensor.data<uint8_t>()) {
      values.push_back(absl::StrCat(is_signed ? static_cast<int>(static_cast<int8_t>(bits))
                                              : static_cast<int>(bits)));
    }
  }
  VisitElementType(tensor.elem_type(), [&](auto v) {
    using T = decltype(v);
    for (const T& x : tensor.data<T>()) {
      if constexpr (std::is_same_v<T, bool>) {
        values.push_back(x ? "true" : "false");
      } else if constexpr (std::is_integral_v<T>) {
        values.push_back(absl::StrCat(x));
      } else {
        values.push_back(absl::StrCat(ToDouble(x)));
      }
    }
  });
  return absl::StrCat(ElementTypeName(tensor.elem_type()), "[", absl::StrJoin(tensor.dims(), ","),
                      "] {", absl::StrJoin(values, ", "), "}");
}

Tensor Int64Tensor(absl::Span<const int64_t> values, bool scalar) {
  Tensor tensor(onnx::TensorProto::INT64,
                scalar ? std::vector<int64_t>{} : std::vector<int64_t>{
                                                      static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), tensor.data<int64_t>().begin());
  return tensor;
}

}  // namespace onnxconvert::eval
