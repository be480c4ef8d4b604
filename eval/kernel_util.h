#ifndef ONNX_CONVERT_EVAL_KERNEL_UTIL_H_
#define ONNX_CONVERT_EVAL_KERNEL_UTIL_H_

// Helpers the kernel files share: output lists, element access in the type
// an element computes in, index arithmetic over row-major dims, and the
// reading of axes and integer parameters. Internal to the evaluator.

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "eval/broadcast.h"
#include "eval/kernel.h"
#include "eval/tensor.h"

namespace onnxconvert::eval {

// The most elements a kernel makes.
constexpr int64_t kMaxElements = int64_t{1} << 31;

// What a kernel returns.
using Outputs = absl::StatusOr<std::vector<Tensor>>;

// A one-output result.
Outputs One(Tensor tensor);
// A one-output result, or the error computing it.
Outputs One(absl::StatusOr<Tensor> tensor);

// Storage types other than bool.
template <typename T>
constexpr bool kIsNumber = !std::is_same_v<T, bool>;
// Signed integer storage types.
template <typename T>
constexpr bool kIsSignedInt = std::is_integral_v<T> && std::is_signed_v<T>;
// Storage types that compute as floating point (float16 and bfloat16 too).
template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<Compute<T>>;

// A computed value stored as `T` (float16 and bfloat16 rounded to nearest
// even).
template <typename T>
T Store(Compute<T> value) {
  if constexpr (std::is_same_v<T, Half>) {
    return FloatToHalf(value);
  } else if constexpr (std::is_same_v<T, BHalf>) {
    return FloatToBHalf(value);
  } else {
    return static_cast<T>(value);
  }
}

// `value` as integer storage type T: truncated toward zero; sets `status`
// (and gives 0) when it is NaN or out of T's range, never UB.
template <typename T>
T TruncateTo(double value, absl::Status& status) {
  double t = std::trunc(value);
  // T's range is [lowest, 2^digits), both ends exact in double.
  constexpr double kEnd =
      2.0 * static_cast<double>(uint64_t{1} << (std::numeric_limits<T>::digits - 1));
  if (!(t >= static_cast<double>(std::numeric_limits<T>::lowest()) && t < kEnd)) {
    status = absl::InvalidArgumentError(
        absl::StrCat("the value ", value, " does not fit ", sizeof(T) * 8, "-bit integers"));
    return T{};
  }
  return static_cast<T>(t);
}

// A tensor of `src`'s type and `dims` whose element i is src's element
// offsets[i].
Tensor Pick(const Tensor& src, std::vector<int64_t> dims, absl::Span<const int64_t> offsets);

// A tensor of `src`'s type and `dims` whose element at index (i0, i1, ...)
// is src's element base + i0 * strides[0] + i1 * strides[1] + ...: Pick
// over a strided walk, copying contiguous rows whole.
Tensor PickStrided(const Tensor& src, std::vector<int64_t> dims,
                   absl::Span<const int64_t> strides, int64_t base);

// Copies element `from` of `src` to element `to` of `dst` (same type).
void CopyElement(const Tensor& src, int64_t from, Tensor& dst, int64_t to);

// Inputs 0 to n - 1, or an error when one is absent.
template <int n>
absl::StatusOr<std::array<const Tensor*, n>> RequiredInputs(const KernelCall& call) {
  std::array<const Tensor*, n> inputs;
  for (int i = 0; i < n; ++i) {
    inputs[i] = call.input(i);
    if (inputs[i] == nullptr) return call.Error("an input is absent");
  }
  return inputs;
}

// Row-major strides of `dims`.
std::vector<int64_t> Strides(absl::Span<const int64_t> dims);

// Number of elements of `dims`, or an error past kMaxElements or for a
// negative dim.
absl::StatusOr<int64_t> Count(const KernelCall& call, absl::Span<const int64_t> dims);

// `axis` in [0, rank) after counting a negative one from the end, or an
// error naming it.
absl::StatusOr<int64_t> Axis(const KernelCall& call, int64_t axis, int64_t rank);

// The INTS attribute `name` or, when the node has none, the integer input
// `input` (nullopt when neither is given).
absl::StatusOr<std::optional<std::vector<int64_t>>> IntsOf(const KernelCall& call,
                                                           absl::string_view name, int input);

// Whether `elem_type` computes as floating point (float16, bfloat16,
// float, double).
bool IsFloatElement(int32_t elem_type);

// Whether `elem_type` is a narrow integer type (int4, uint4, int2, uint2).
bool IsNarrowInteger(int32_t elem_type);

// Element `index` of a tensor of a narrow type (tensor.h: IsNarrow) as
// double: the float8/float4 value, or the narrow integer.
double NarrowValue(const Tensor& tensor, int64_t index);

// "no kernel for elements of <type>", for kernels refusing a type.
std::string NoKernel(int32_t elem_type);

// Type sets for ForTypes: floating point (float16 and bfloat16 too),
// numbers (all but bool), integers, unsigned integers.
template <typename T>
struct FloatTypes : std::bool_constant<kIsFloat<T>> {};
template <typename T>
struct NumberTypes : std::bool_constant<kIsNumber<T>> {};
template <typename T>
struct IntegerTypes : std::bool_constant<std::is_integral_v<T> && kIsNumber<T>> {};
template <typename T>
struct UnsignedTypes : std::bool_constant<std::is_unsigned_v<T> && kIsNumber<T>> {};

// `body(T{})` (returning Outputs) for the storage type T of `elem_type`
// when `Allowed<T>` holds; else an error naming the type.
template <template <typename> class Allowed, typename Body>
Outputs ForTypes(const KernelCall& call, int32_t elem_type, Body body) {
  Outputs out = call.Error(NoKernel(elem_type));
  VisitElementType(elem_type, [&](auto v) {
    using T = decltype(v);
    if constexpr (Allowed<T>::value) out = body(T{});
  });
  return out;
}

// What T accumulates in: double for floating point, else a 64-bit integer
// of T's signedness (which wraps as T does when stored back).
template <typename T>
using Wide = std::conditional_t<kIsFloat<T>, double,
                                std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

// The elements of an integer tensor as int64, or an error naming the node.
absl::StatusOr<std::vector<int64_t>> Int64s(const KernelCall& call, const Tensor& tensor);

// The elements of a numeric tensor as double, or an error naming the node.
absl::StatusOr<std::vector<double>> Doubles(const KernelCall& call, const Tensor& tensor);

// a + b, a - b and a * b, wrapping for integers (through uint64, never UB).
template <typename A>
A WrapAdd(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename A>
A WrapSub(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  } else {
    return a - b;
  }
}
template <typename A>
A WrapMul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

// The outer, axis and inner extents of `dims` around `axis`: the products
// of the dims before it, the dim itself, and the dims after it.
struct AxisSplit {
  int64_t outer;
  int64_t dim;
  int64_t inner;
};
AxisSplit SplitAt(absl::Span<const int64_t> dims, int64_t axis);

// The dims of the inputs as broadcast; before opset 7 (`legacy`), B aligns
// with A at `axis` when `broadcast` = 1, else the shapes must be equal.
absl::StatusOr<std::vector<std::vector<int64_t>>> AlignedDims(const KernelCall& call,
                                                              bool legacy);

// Applies `fn(a, b, status)` to the broadcast elements of inputs 0 and 1
// (storage A and B, given in their compute types), giving a tensor of
// `out_type` whose storage is R (fn returns a Compute<R>, or R for bool).
// `fn` fails by setting `status`, which ends the map.
template <typename A, typename B, typename R, typename F>
absl::StatusOr<Tensor> MapBinary(const KernelCall& call, bool legacy, int32_t out_type, F fn) {
  absl::StatusOr<std::vector<std::vector<int64_t>>> dims = AlignedDims(call, legacy);
  if (!dims.ok()) return dims.status();
  if (dims->size() != 2) return call.Error("expects 2 inputs");
  absl::StatusOr<std::vector<int64_t>> out_dims = BroadcastDims(*dims);
  if (!out_dims.ok()) return call.Error(out_dims.status().message());
  Tensor out(out_type, *out_dims);
  BroadcastCursor ca(*out_dims, (*dims)[0]), cb(*out_dims, (*dims)[1]);
  absl::Span<const A> a = call.inputs[0]->template data<A>();
  absl::Span<const B> b = call.inputs[1]->template data<B>();
  absl::Span<R> o = out.data<R>();
  absl::Status status;
  for (int64_t i = 0; i < out.size(); ++i) {
    auto value = fn(Load(a[ca.offset()]), Load(b[cb.offset()]), status);
    if (!status.ok()) return call.Error(status.message());
    o[i] = Store<R>(value);
    ca.Next();
    cb.Next();
  }
  return out;
}

// Applies `fn(x, status)` to each element of `x` (storage T, given in its
// compute type), giving a tensor of `out_type` and x's dims whose storage
// is R. `fn` fails by setting `status`, which ends the map.
template <typename T, typename R, typename F>
absl::StatusOr<Tensor> MapUnary(const KernelCall& call, const Tensor& x, int32_t out_type, F fn) {
  Tensor out(out_type, x.dims());
  absl::Span<const T> in = x.data<T>();
  absl::Span<R> o = out.data<R>();
  absl::Status status;
  for (int64_t i = 0; i < x.size(); ++i) {
    auto value = fn(Load(in[i]), status);
    if (!status.ok()) return call.Error(status.message());
    o[i] = Store<R>(value);
  }
  return out;
}

// Applies `fn(x)`, which cannot fail, to each element of `x` (storage T,
// given in its compute type), giving a tensor of x's type and dims: one
// loop over contiguous storage with `fn` inlined (MapUnary's values, without
// its status per element).
template <typename T, typename F>
Tensor MapElements(const Tensor& x, F fn) {
  Tensor out(x.elem_type(), x.dims());
  const T* in = x.data<T>().data();
  T* o = out.data<T>().data();
  const int64_t n = x.size();
  for (int64_t i = 0; i < n; ++i) o[i] = Store<T>(fn(Load(in[i])));
  return out;
}

// Applies `fn` to the `n` elements of float or double storage `in` into
// `out`, 16 bytes at a time on GCC's vectors of T, then the tail one by
// one: `fn` takes and gives either T or such a vector (arithmetic,
// comparisons and ?: work on both) and must give per lane what it gives
// per element. IEEE operations lane by lane round as they do one by one.
template <typename T, typename F>
void MapLanes(const T* in, T* out, int64_t n, F fn) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  typedef T Lanes __attribute__((vector_size(16)));
  constexpr int64_t kLanes = 16 / sizeof(T);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Lanes v;
    std::memcpy(&v, in + i, sizeof v);
    Lanes r = fn(v);
    std::memcpy(out + i, &r, sizeof r);
  }
  for (; i < n; ++i) out[i] = fn(in[i]);
}

// MapLanes of `fn(a, b)` over two inputs of `n` elements each.
template <typename T, typename F>
void MapLanes2(const T* a, const T* b, T* out, int64_t n, F fn) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  typedef T Lanes __attribute__((vector_size(16)));
  constexpr int64_t kLanes = 16 / sizeof(T);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Lanes va, vb;
    std::memcpy(&va, a + i, sizeof va);
    std::memcpy(&vb, b + i, sizeof vb);
    Lanes r = fn(va, vb);
    std::memcpy(out + i, &r, sizeof r);
  }
  for (; i < n; ++i) out[i] = fn(a[i], b[i]);
}

// MapElements of a `fn` written for MapLanes: on lanes for float and
// double, one by one for the other types.
template <typename T, typename F>
Tensor MapElementsLanes(const Tensor& x, F fn) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    Tensor out(x.elem_type(), x.dims());
    MapLanes(x.data<T>().data(), out.data<T>().data(), x.size(), fn);
    return out;
  } else {
    return MapElements<T>(x, fn);
  }
}

// A tensor of floating-point `type` and `dims` holding `values`, rounded
// to the type.
Tensor FloatTensor(int32_t type, std::vector<int64_t> dims, const std::vector<double>& values);

}  // namespace onnxconvert::eval

#endif  // ONNX_CONVERT_EVAL_KERNEL_UTIL_H_
