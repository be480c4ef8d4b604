#include "eval/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/narrow.h"

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

// The elements of a narrow type (narrow.h) that `proto` packs in raw_data
// or int32_data, one per byte of `tensor`.
template <typename Error>
absl::StatusOr<Tensor> NarrowFromProto(const onnx::TensorProto& proto, Tensor tensor,
                                       Error error) {
  int32_t type = proto.data_type();
  int bits = NarrowProtoBits(type);
  int per_byte = 8 / bits;
  int64_t count = tensor.size();
  int64_t packed = (count + per_byte - 1) / per_byte;
  std::vector<uint8_t> bytes;
  if (proto.has_raw_data()) {
    bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else {
    for (int32_t v : proto.int32_data()) bytes.push_back(static_cast<uint8_t>(v));
  }
  if (static_cast<int64_t>(bytes.size()) != packed) {
    return error(absl::StrCat("holds ", bytes.size(), " bytes for ", count, " elements of ",
                              bits, " bits"));
  }
  absl::Span<uint8_t> out = tensor.data<uint8_t>();
  for (int64_t i = 0; i < count; ++i) {
    uint8_t b = static_cast<uint8_t>(bytes[i / per_byte] >> ((i % per_byte) * bits));
    out[i] = NarrowFromProtoBits(type, b);
  }
  return tensor;
}

// The elements of a narrow-typed tensor packed as a proto's raw_data.
std::string PackNarrow(const Tensor& tensor) {
  int bits = NarrowProtoBits(tensor.elem_type());
  int per_byte = 8 / bits;
  std::string packed(static_cast<size_t>((tensor.size() + per_byte - 1) / per_byte), '\0');
  absl::Span<const uint8_t> in = tensor.data<uint8_t>();
  for (int64_t i = 0; i < tensor.size(); ++i) {
    uint8_t b = NarrowToProtoBits(tensor.elem_type(), in[i]);
    packed[i / per_byte] = static_cast<char>(static_cast<uint8_t>(packed[i / per_byte]) |
                                             (b << ((i % per_byte) * bits)));
  }
  return packed;
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

bool Holds(int32_t elem_type) {
  return elem_type == onnx::TensorProto::STRING || ElementSize(elem_type) > 0;
}

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
  Tensor tensor(proto.data_type(), {proto.dims().begin(), proto.dims().end()});
  if (proto.data_type() == onnx::TensorProto::STRING) {
    if (proto.string_data_size() != count) {
      return error(absl::StrCat("holds ", proto.string_data_size(), " strings for ", count,
                                " elements"));
    }
    for (int64_t i = 0; i < count; ++i) tensor.strings()[i] = proto.string_data(i);
    return tensor;
  }
  if (IsNarrow(proto.data_type())) return NarrowFromProto(proto, std::move(tensor), error);
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
    proto.set_raw_data(PackNarrow(tensor));
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
  if (IsNarrow(tensor.elem_type())) {
    for (uint8_t x : tensor.data<uint8_t>()) {
      values.push_back(absl::StrCat(NarrowToDouble(tensor.elem_type(), x)));
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
