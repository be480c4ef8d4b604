#ifndef ONNX_CONVERT_EVAL_TENSOR_H_
#define ONNX_CONVERT_EVAL_TENSOR_H_

// The dense tensors the reference evaluator computes with.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/onnx.pb.h"

namespace onnxconvert::eval {

// Storage of a float16 or bfloat16 element: its bits.
struct Half {
  uint16_t bits = 0;
};
struct BHalf {
  uint16_t bits = 0;
};

// float16 and bfloat16 to and from float (round to nearest even).
float HalfToFloat(Half h);
Half FloatToHalf(float f);
float BHalfToFloat(BHalf h);
BHalf FloatToBHalf(float f);

// A dense tensor: an element type (TensorProto.DataType), dims and the
// elements in row-major order. Numeric and bool elements live in one byte
// buffer as their C++ type (bool as bool, float16/bfloat16 as their bits);
// strings in a vector of their own.
class Tensor {
 public:
  Tensor() = default;
  // A tensor of `elem_type` and `dims`, every element zero (or "").
  Tensor(int32_t elem_type, std::vector<int64_t> dims);

  int32_t elem_type() const { return elem_type_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  // Number of elements (1 for a scalar).
  int64_t size() const { return size_; }

  // The elements as `T`, which must be the storage type of elem_type().
  template <typename T>
  absl::Span<T> data() {
    return absl::Span<T>(reinterpret_cast<T*>(bytes_.data()), static_cast<size_t>(size_));
  }
  template <typename T>
  absl::Span<const T> data() const {
    return absl::Span<const T>(reinterpret_cast<const T*>(bytes_.data()),
                              static_cast<size_t>(size_));
  }
  std::vector<std::string>& strings() { return strings_; }
  const std::vector<std::string>& strings() const { return strings_; }

  // A tensor of `elem_type` (not STRING) and `dims` whose elements are the
  // bytes `raw` (as many as the elements take), copied without zeroing
  // first.
  static Tensor FromRaw(int32_t elem_type, std::vector<int64_t> dims, const void* raw);

  // Same elements under other dims of the same element count.
  void Reshape(std::vector<int64_t> dims);

  // Bytes the tensor holds (elements only).
  int64_t ByteSize() const;

 private:
  int32_t elem_type_ = onnx::TensorProto::UNDEFINED;
  std::vector<int64_t> dims_;
  int64_t size_ = 0;
  std::vector<std::byte> bytes_;
  std::vector<std::string> strings_;
};

// Bytes one element of `elem_type` takes in a Tensor; 0 for strings and
// for types the evaluator does not hold (complex, ...).
int ElementSize(int32_t elem_type);

// Whether `elem_type` is one of the narrow types a Tensor holds unpacked,
// one byte per element, outside VisitElementType: the float8 kinds
// (float8e8m0 too) and float4e2m1 as their bits (uint8_t), int4/int2 as
// int8_t and uint4/uint2 as uint8_t (TensorProtos pack the 4- and 2-bit
// ones).
bool IsNarrow(int32_t elem_type);

// Whether `elem_type` is a float8 kind other than float8e8m0 (a scale
// type, which only Cast converts) or float4e2m1 (bits in a uint8_t).
bool IsNarrowFloat(int32_t elem_type);

// The value of the float8/float4 `bits` of `elem_type` (NaN for its NaN
// codes, infinities for float8e5m2's; float8e8m0's are 2^(bits - 127)).
float NarrowFloatToFloat(int32_t elem_type, uint8_t bits);

// `value` as float8/float4 bits of `elem_type` (not float8e8m0: see
// FloatToE8M0), rounded to nearest even. Past the largest finite value:
// that value when `saturate`, else infinity (float8e5m2) or NaN (the
// others; float4e2m1 always saturates).
uint8_t FloatToNarrowFloat(int32_t elem_type, float value, bool saturate);

// How Cast rounds to float8e8m0 (its round_mode): up, down, nearest.
enum class E8M0Rounding { kUp, kDown, kNearest };

// `value` as float8e8m0 bits: its binary exponent, rounded by `rounding`,
// saturated at the largest (or NaN past it when not `saturate`), as the
// reference implementation computes. Refused: negative values (undefined),
// and where the specification and the reference disagree (infinities
// when saturating, values below the smallest when not).
absl::StatusOr<uint8_t> FloatToE8M0(float value, bool saturate, E8M0Rounding rounding);

// The range of the narrow integer types (int4, uint4, int2, uint2) as
// {lowest, highest}; {0, 0} for other types.
std::pair<int32_t, int32_t> NarrowIntRange(int32_t elem_type);

// Whether the evaluator holds elements of `elem_type`.
bool Holds(int32_t elem_type);

// The tensor `proto` holds (raw_data or its typed field). Fails, naming the
// tensor, for external data, types the evaluator does not hold, data of the
// wrong size, and more than `max_elements` elements.
absl::StatusOr<Tensor> FromProto(const onnx::TensorProto& proto,
                                 int64_t max_elements = int64_t{1} << 40);

// `tensor` as a TensorProto named `name` (numbers in raw_data).
onnx::TensorProto ToProto(const Tensor& tensor, const std::string& name);

// Calls `f(T{})` with T the storage type of `elem_type` (float16 and
// bfloat16 as Half and BHalf); returns false for strings and types the
// evaluator does not hold.
template <typename F>
bool VisitElementType(int32_t elem_type, F&& f) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT: f(float{}); return true;
    case onnx::TensorProto::DOUBLE: f(double{}); return true;
    case onnx::TensorProto::INT8: f(int8_t{}); return true;
    case onnx::TensorProto::INT16: f(int16_t{}); return true;
    case onnx::TensorProto::INT32: f(int32_t{}); return true;
    case onnx::TensorProto::INT64: f(int64_t{}); return true;
    case onnx::TensorProto::UINT8: f(uint8_t{}); return true;
    case onnx::TensorProto::UINT16: f(uint16_t{}); return true;
    case onnx::TensorProto::UINT32: f(uint32_t{}); return true;
    case onnx::TensorProto::UINT64: f(uint64_t{}); return true;
    case onnx::TensorProto::BOOL: f(bool{}); return true;
    case onnx::TensorProto::FLOAT16: f(Half{}); return true;
    case onnx::TensorProto::BFLOAT16: f(BHalf{}); return true;
    default: return false;
  }
}

// The type a storage type computes in: float for float16 and bfloat16.
template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BHalf>, float, T>;

// A storage element in the type it computes in.
template <typename T>
Compute<T> Load(T value) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(value);
  } else if constexpr (std::is_same_v<T, BHalf>) {
    return BHalfToFloat(value);
  } else {
    return value;
  }
}

// A storage element as double (float16 and bfloat16 by value).
template <typename T>
double ToDouble(T value) {
  return static_cast<double>(Load(value));
}

// The name of `elem_type` ("float", "int64", ...), for messages.
std::string ElementTypeName(int32_t elem_type);

// The elements of an integer tensor as int64 (empty optional-like error for
// other types).
absl::StatusOr<std::vector<int64_t>> ToInt64s(const Tensor& tensor);

// "int64[2] {4, 2}": the type, dims and elements (narrow floats by value),
// for tests and messages.
std::string DebugString(const Tensor& tensor);

// A rank-1 int64 tensor of `values` (rank 0 when `scalar`).
Tensor Int64Tensor(absl::Span<const int64_t> values, bool scalar = false);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_TENSOR_H_
