#ifndef ONNX_CONVERT_EVAL_NN_UTIL_H_
#define ONNX_CONVERT_EVAL_NN_UTIL_H_

// Helpers shared by the neural-network kernel families (linear algebra,
// convolution, pooling, normalization, recurrent, quantization): reading
// elements as the type they compute in, storing results, Eigen maps over
// tensor storage and spatial window arithmetic.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
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
#include "eval/gemm.h"
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
// One(tensor), or the error computing it.
inline Outputs One(absl::StatusOr<Tensor> tensor) {
  if (!tensor.ok()) return tensor.status();
  return One(*std::move(tensor));
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

// out (m x n) = scale * op(a) * op(b) over contiguous row-major storage, as
// MultiplyInto (gemm.h) for float and double (AVX2+FMA kernels where the CPU
// has them); on Eigen for the integer compute types, which wrap.
template <typename C>
void Multiply(const C* a, const C* b, C* out, int64_t m, int64_t k, int64_t n,
              const ProductOptions& options = {}) {
  if constexpr (std::is_floating_point_v<C>) {
    MultiplyInto(a, b, out, m, k, n, options);
  } else {
    ConstMatrixMap<C> ma(a, options.transpose_a ? k : m, options.transpose_a ? m : k);
    ConstMatrixMap<C> mb(b, options.transpose_b ? n : k, options.transpose_b ? k : n);
    MatrixMap<C> mo(out, m, n);
    if (options.transpose_a && options.transpose_b) {
      mo.noalias() = ma.transpose() * mb.transpose();
    } else if (options.transpose_a) {
      mo.noalias() = ma.transpose() * mb;
    } else if (options.transpose_b) {
      mo.noalias() = ma * mb.transpose();
    } else {
      mo.noalias() = ma * mb;
    }
    if (options.scale != 1) mo *= static_cast<C>(options.scale);
  }
}

// Calls `f(T{})` for the floating storage types (float, double, float16 as
// Half, bfloat16 as BHalf); false for the others.
template <typename F>
bool VisitFloatType(int32_t elem_type, F&& f) {
  bool floating = false;
  VisitElementType(elem_type, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                  std::is_same_v<T, BHalf>) {
      floating = true;
      f(T{});
    }
  });
  return floating;
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

// An allocator whose elements start uninitialized (a resize default- rather
// than value-initializes them), for buffers written whole before they are
// read.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// The `n` floats of `in` as doubles in `out`, two at a time (cvtps2pd).
inline void WidenFloats(const float* in, double* out, int64_t n) {
  typedef float F2 __attribute__((vector_size(8)));
  typedef double D2 __attribute__((vector_size(16)));
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    F2 v;
    std::memcpy(&v, in + i, sizeof v);
    D2 d = __builtin_convertvector(v, D2);
    std::memcpy(out + i, &d, sizeof d);
  }
  for (; i < n; ++i) out[i] = in[i];
}

// `fn` applied to the `n` elements of float or double storage `in`, each
// read as double, its result rounded back to T, into `out`: two elements
// at a time on GCC's vectors of two doubles. `fn` takes and gives a double
// or such a vector (arithmetic works on both) and must give per lane what
// it gives per element; IEEE operations lane by lane round as one by one.
template <typename T, typename F>
void MapAsDouble(const T* in, T* out, int64_t n, F fn) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  typedef T T2 __attribute__((vector_size(2 * sizeof(T))));
  typedef double D2 __attribute__((vector_size(16)));
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    T2 v;
    std::memcpy(&v, in + i, sizeof v);
    T2 r = __builtin_convertvector(fn(__builtin_convertvector(v, D2)), T2);
    std::memcpy(out + i, &r, sizeof r);
  }
  for (; i < n; ++i) out[i] = static_cast<T>(fn(static_cast<double>(in[i])));
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
        absl::Span<const T> in = tensor.data<T>();
        if constexpr (std::is_same_v<T, float> && std::is_same_v<C, double>) {
          view.owned_.resize(in.size());  // uninitialized
          WidenFloats(in.data(), view.owned_.data(), static_cast<int64_t>(in.size()));
        } else if constexpr (std::is_arithmetic_v<T>) {
          view.owned_.assign(in.begin(), in.end());  // converts, without a zero fill first
        } else {
          view.owned_.resize(in.size());
          for (size_t i = 0; i < in.size(); ++i) view.owned_[i] = LoadAs<C>(in[i]);
        }
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
  std::vector<C, UninitializedAllocator<C>> owned_;
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

// The elements of `t` and of `zero_point` (none when null), int8 or uint8,
// as int32; an error when either is of another type.
inline absl::StatusOr<std::pair<std::vector<int32_t>, std::vector<int32_t>>> Int8Elements(
    const KernelCall& call, const Tensor& t, const Tensor* zero_point) {
  auto ints = [](const Tensor& x) {
    std::vector<int32_t> v;
    if (x.elem_type() == onnx::TensorProto::INT8) {
      for (int8_t e : x.data<int8_t>()) v.push_back(e);
    } else {
      for (uint8_t e : x.data<uint8_t>()) v.push_back(e);
    }
    return v;
  };
  for (const Tensor* x : {&t, zero_point}) {
    if (x != nullptr && x->elem_type() != onnx::TensorProto::INT8 &&
        x->elem_type() != onnx::TensorProto::UINT8) {
      return UnsupportedType(call, x->elem_type());
    }
  }
  return std::pair(ints(t), zero_point != nullptr ? ints(*zero_point) : std::vector<int32_t>{});
}

// An error unless inputs 0 to 2 (`names`: "Q, K and V") are all set and of
// one element type.
inline absl::Status ThreeOfOneType(const KernelCall& call, absl::string_view names) {
  for (int i = 0; i < 3; ++i) {
    if (call.input(i) == nullptr) return call.Error(absl::StrCat(names, " are required"));
    if (call.input(i)->elem_type() != call.input(0)->elem_type()) {
      return call.Error(absl::StrCat(names, " differ in element type"));
    }
  }
  return absl::OkStatus();
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

// The geometry of a sliding window over the spatial dims of an input
// (convolutions and pools): per spatial dim the input extent, kernel,
// stride, dilation, pads (begins then ends) and output extent.
struct Window {
  std::vector<int64_t> input;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // rank begins, then rank ends
  std::vector<int64_t> output;

  int64_t rank() const { return static_cast<int64_t>(input.size()); }
  // The extent of the dilated kernel along `d`.
  int64_t Span(int64_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
};

// How a window's output extent rounds: floor (convolutions, pools), or
// ceil with the last window starting inside the input or its begin pad
// (pools with ceil_mode).
enum class Rounding { kFloor, kCeil };

// The window of `call`'s attributes (strides, dilations, pads, auto_pad)
// over `input` with `kernel`: auto_pad SAME_UPPER/SAME_LOWER pads to an
// output of ceil(input / stride) (the odd pad at the end or the begin),
// VALID pads nothing. Fails for attributes of the wrong length, values out
// of range, or an empty output.
inline absl::StatusOr<Window> MakeWindow(const KernelCall& call,
                                         absl::Span<const int64_t> input,
                                         std::vector<int64_t> kernel, Rounding rounding) {
  Window w;
  int64_t rank = static_cast<int64_t>(input.size());
  w.input.assign(input.begin(), input.end());
  w.kernel = std::move(kernel);
  w.strides = call.Ints("strides").value_or(std::vector<int64_t>(rank, 1));
  w.dilations = call.Ints("dilations").value_or(std::vector<int64_t>(rank, 1));
  w.pads = call.Ints("pads").value_or(std::vector<int64_t>(2 * rank, 0));
  if (static_cast<int64_t>(w.kernel.size()) != rank ||
      static_cast<int64_t>(w.strides.size()) != rank ||
      static_cast<int64_t>(w.dilations.size()) != rank ||
      static_cast<int64_t>(w.pads.size()) != 2 * rank) {
    return call.Error(absl::StrCat("kernel_shape, strides, dilations or pads do not match the ",
                                   rank, " spatial dims"));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (w.kernel[d] < 1 || w.strides[d] < 1 || w.dilations[d] < 1 || w.pads[d] < 0 ||
        w.pads[rank + d] < 0 || w.kernel[d] > (int64_t{1} << 30) ||
        w.strides[d] > (int64_t{1} << 30) || w.dilations[d] > (int64_t{1} << 30) ||
        w.pads[d] > (int64_t{1} << 30) || w.pads[rank + d] > (int64_t{1} << 30)) {
      return call.Error("kernel_shape, strides, dilations or pads hold a value out of range");
    }
  }
  const onnx::AttributeProto* auto_pad = call.attribute("auto_pad");
  std::string mode = auto_pad != nullptr ? auto_pad->s() : "NOTSET";
  w.output.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      w.output[d] = (w.input[d] + w.strides[d] - 1) / w.strides[d];
      int64_t total =
          std::max<int64_t>(0, (w.output[d] - 1) * w.strides[d] + w.Span(d) - w.input[d]);
      w.pads[d] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pads[rank + d] = total - w.pads[d];
      continue;
    }
    if (mode == "VALID") {
      w.pads[d] = w.pads[rank + d] = 0;
    } else if (mode != "NOTSET" && !mode.empty()) {
      return call.Error(absl::StrCat("auto_pad '", mode, "' is not one of NOTSET, SAME_UPPER, "
                                     "SAME_LOWER, VALID"));
    }
    int64_t room = w.input[d] + w.pads[d] + w.pads[rank + d] - w.Span(d);
    if (room < 0) return call.Error("the kernel is larger than the padded input");
    if (rounding == Rounding::kCeil) {
      w.output[d] = (room + w.strides[d] - 1) / w.strides[d] + 1;
      if ((w.output[d] - 1) * w.strides[d] >= w.input[d] + w.pads[d]) --w.output[d];
    } else {
      w.output[d] = room / w.strides[d] + 1;
    }
  }
  return w;
}

// The kernel_shape attribute, or the trailing dims of `weights` when unset.
inline std::vector<int64_t> KernelShape(const KernelCall& call, const Tensor& weights) {
  return call.Ints("kernel_shape")
      .value_or(std::vector<int64_t>(weights.dims().begin() + 2, weights.dims().end()));
}

}  // namespace onnxconvert::eval::nn

#endif  // ONNX_CONVERT_EVAL_NN_UTIL_H_
