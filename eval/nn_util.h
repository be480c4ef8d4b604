#ifndef ONNX_CONVERT_EVAL_NN_UTIL_H_
#define ONNX_CONVERT_EVAL_NN_UTIL_H_

// Helpers shared by the neural-network kernel families (linear algebra,
// convolution, pooling, normalization, recurrent, quantization): reading
// elements as the type they compute in, storing results, Eigen maps over
// tensor storage and spatial window arithmetic.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "eval/kernel.h"
#include "eval/tensor.h"

namespace onnxconvert::eval::nn {

// What a kernel returns.
using Outputs = absl::StatusOr<std::vector<Tensor>>;

// The most elements one output of these kernels may hold.
inline constexpr int64_t kMaxOutputElements = int64_t{1} << 31;

// Outputs of one tensor, or of several.
inline Outputs One(Tensor tensor) {
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(tensor));
  return outputs;
}

// The type float16, bfloat16 and float compute in (float), and double in.
template <typename T>
using Real = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Row-major dynamic matrices and maps over contiguous storage.
template <typename C>
using Matrix = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename C>
using MatrixMap = Eigen::Map<Matrix<C>>;
template <typename C>
using ConstMatrixMap = Eigen::Map<const Matrix<C>>;

// Calls `f(T{})` for the floating storage types (float, double, float16 as
// Half, bfloat16 as BHalf); false for the others.
template <typename F>
bool VisitFloatType(int32_t elem_type, F&& f) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT: f(float{}); return true;
    case onnx::TensorProto::DOUBLE: f(double{}); return true;
    case onnx::TensorProto::FLOAT16: f(Half{}); return true;
    case onnx::TensorProto::BFLOAT16: f(BHalf{}); return true;
    default: return false;
  }
}

// A storage element as C and back (float16/bfloat16 rounded to nearest
// even).
template <typename C, typename T>
C LoadAs(T value) {
  if constexpr (std::is_same_v<T, Half>) {
    return static_cast<C>(HalfToFloat(value));
  } else if constexpr (std::is_same_v<T, BHalf>) {
    return static_cast<C>(BHalfToFloat(value));
  } else {
    return static_cast<C>(value);
  }
}
template <typename T, typename C>
T StoreAs(C value) {
  if constexpr (std::is_same_v<T, Half>) {
    return FloatToHalf(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, BHalf>) {
    return FloatToBHalf(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

// The elements of `tensor` as C: a view of its storage when that is C
// already, else a converted copy. Narrow types read by value. Fails for
// strings and unheld types.
template <typename C>
class RealView {
 public:
  static absl::StatusOr<RealView> Of(const Tensor& tensor) {
    RealView view;
    int32_t type = tensor.elem_type();
    if (tensor.elem_type() == ElementTypeOf()) {
      view.span_ = tensor.data<C>();
      return view;
    }
    if (IsNarrowFloat(type)) {
      for (uint8_t bits : tensor.data<uint8_t>()) {
        view.owned_.push_back(static_cast<C>(NarrowFloatToFloat(type, bits)));
      }
    } else if (IsNarrow(type)) {
      bool is_signed = NarrowIntRange(type).first < 0;
      for (uint8_t bits : tensor.data<uint8_t>()) {
        view.owned_.push_back(is_signed ? static_cast<C>(static_cast<int8_t>(bits))
                                        : static_cast<C>(bits));
      }
    } else {
      bool held = VisitElementType(type, [&](auto v) {
        using T = decltype(v);
        view.owned_.reserve(tensor.size());
        for (T x : tensor.data<T>()) view.owned_.push_back(LoadAs<C>(x));
      });
      if (!held) {
        return absl::InvalidArgumentError(
            absl::StrCat("elements of ", ElementTypeName(type), " are not numbers"));
      }
    }
    view.span_ = view.owned_;
    return view;
  }
  RealView() = default;
  RealView(RealView&& other) noexcept { *this = std::move(other); }
  RealView& operator=(RealView&& other) noexcept {
    bool owned = other.span_.data() == other.owned_.data();
    owned_ = std::move(other.owned_);
    span_ = owned ? absl::Span<const C>(owned_) : other.span_;
    return *this;
  }
  absl::Span<const C> span() const { return span_; }
  const C* data() const { return span_.data(); }
  C operator[](size_t i) const { return span_[i]; }
  size_t size() const { return span_.size(); }

 private:
  static int32_t ElementTypeOf() {
    return std::is_same_v<C, double> ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT;
  }
  std::vector<C> owned_;
  absl::Span<const C> span_;
};

// A tensor of `elem_type` (storage T) and `dims` holding `values`.
template <typename T, typename C>
Tensor StoreTensor(int32_t elem_type, std::vector<int64_t> dims, absl::Span<const C> values) {
  Tensor out(elem_type, std::move(dims));
  absl::Span<T> o = out.data<T>();
  for (size_t i = 0; i < o.size(); ++i) o[i] = StoreAs<T>(values[i]);
  return out;
}

// The number of elements of `dims`, or an error naming the call when a dim
// is negative or the count passes kMaxOutputElements.
inline absl::StatusOr<int64_t> CheckedCount(const KernelCall& call,
                                            absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) return call.Error(absl::StrCat("an output dim is negative (", dim, ")"));
    if (dim != 0 && count > kMaxOutputElements / dim) {
      return call.Error("the output holds too many elements");
    }
    count *= dim;
  }
  return count;
}

// Input `i`, or an error naming it when absent.
inline absl::StatusOr<const Tensor*> Required(const KernelCall& call, int i,
                                              absl::string_view name) {
  const Tensor* t = call.input(i);
  if (t == nullptr) return call.Error(absl::StrCat("input ", name, " is absent"));
  return t;
}

// An error for an element type the kernel does not compute.
inline absl::Status UnsupportedType(const KernelCall& call, int32_t elem_type) {
  return call.Error(
      absl::StrCat("elements of ", ElementTypeName(elem_type), " are not supported"));
}

// `axis` (negative counts from the end) within [0, rank), or an error.
inline absl::StatusOr<int64_t> NormalizeAxis(const KernelCall& call, int64_t axis,
                                             int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return call.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

// The product of dims [from, to).
inline int64_t Product(absl::Span<const int64_t> dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < dims.size(); ++i) p *= dims[i];
  return p;
}

}  // namespace onnxconvert::eval::nn

#endif  // ONNX_CONVERT_EVAL_NN_UTIL_H_
