// Reduction kernels: the Reduce* family (axes by attribute or, from 18 and
// for ReduceSum from 13, by input; keepdims; noop_with_empty_axes),
// ArgMax/ArgMin, TopK and CumSum/CumProd. Floating-point values
// accumulate in double; integers wrap as their type does.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::reduce_ops {

// The first version of each reduction that takes its axes as an input.
struct AxesInputSince {
  Reduction op;
  int since;
};
constexpr AxesInputSince kAxesInputSince[] = {
    {Reduction::kSum, 13}, {Reduction::kMean, 18}, {Reduction::kProd, 18},
    {Reduction::kMax, 18}, {Reduction::kMin, 18},  {Reduction::kL1, 18},
    {Reduction::kL2, 18},  {Reduction::kSumSquare, 18}, {Reduction::kLogSum, 18},
    {Reduction::kLogSumExp, 18},
};

bool AxesFromInput(Reduction op, int since_version) {
  for (const AxesInputSince& row : kAxesInputSince) {
    if (row.op == op) return since_version >= row.since;
  }
  return false;
}

// Which axes of a rank-`rank` input a Reduce node reduces; nullopt when it
// is a no-op (empty axes with noop_with_empty_axes = 1). No axes means all.
absl::StatusOr<std::optional<std::vector<bool>>> ReducedAxes(const KernelCall& call,
                                                             int64_t rank, bool axes_input) {
  std::vector<int64_t> axes;
  if (axes_input) {
    if (const Tensor* given = call.input(1)) {
      OC_ASSIGN_OR_RETURN(axes, Int64s(call, *given));
    }
    if (axes.empty() && call.Int("noop_with_empty_axes", 0) != 0) {
      return std::optional<std::vector<bool>>();
    }
  } else if (std::optional<std::vector<int64_t>> given = call.Ints("axes")) {
    axes = *std::move(given);
  }
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    OC_ASSIGN_OR_RETURN(int64_t a, Axis(call, axis, rank));
    if (reduced[a]) return call.Error(absl::StrCat("axis ", axis, " repeats"));
    reduced[a] = true;
  }
  return std::optional<std::vector<bool>>(std::move(reduced));
}

// The dims a reduction gives: reduced axes kept as 1 or dropped.
std::vector<int64_t> ReducedDims(absl::Span<const int64_t> dims, const std::vector<bool>& reduced,
                                 bool keepdims) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!reduced[i]) {
      out.push_back(dims[i]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

// For each element of an input of `dims`, in row-major order, the offset
// of the output element it reduces into.
std::vector<int64_t> OutputOffsets(absl::Span<const int64_t> dims,
                                   const std::vector<bool>& reduced) {
  std::vector<int64_t> kept(dims.begin(), dims.end());
  for (size_t i = 0; i < kept.size(); ++i) {
    if (reduced[i]) kept[i] = 1;
  }
  std::vector<int64_t> strides = Strides(kept);
  for (size_t i = 0; i < strides.size(); ++i) {
    if (reduced[i]) strides[i] = 0;
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> offsets(count);
  ForEachIndex(dims, strides, 0, [&](int64_t i, int64_t offset) { offsets[i] = offset; });
  return offsets;
}

// What a reduction of T accumulates in: double for floating point and for
// the reductions that leave the integers (L2, LogSum, LogSumExp), else a
// 64-bit integer that wraps as T does.
template <Reduction kOp, typename T>
using Acc = std::conditional_t<kOp == Reduction::kL2 || kOp == Reduction::kLogSum ||
                                   kOp == Reduction::kLogSumExp,
                               double, Wide<T>>;

template <Reduction kOp, typename T>
Acc<kOp, T> Identity() {
  using A = Acc<kOp, T>;
  constexpr bool kFloatAcc = std::is_floating_point_v<A>;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if constexpr (kOp == Reduction::kProd) return A{1};
  if constexpr (kOp == Reduction::kMax && kFloatAcc) return -kInf;
  if constexpr (kOp == Reduction::kMin && kFloatAcc) return kInf;
  if constexpr (kOp == Reduction::kMax && !kFloatAcc) {
    return static_cast<A>(std::numeric_limits<T>::lowest());
  }
  if constexpr (kOp == Reduction::kMin && !kFloatAcc) {
    return static_cast<A>(std::numeric_limits<T>::max());
  }
  return A{0};
}

template <Reduction kOp, typename A>
A Combine(A acc, A x, double shift) {
  switch (kOp) {
    case Reduction::kSum:
    case Reduction::kMean:
    case Reduction::kLogSum: return WrapAdd(acc, x);
    case Reduction::kProd: return WrapMul(acc, x);
    case Reduction::kMax:
      if constexpr (std::is_floating_point_v<A>) {
        if (std::isnan(x)) return x;
      }
      return x > acc ? x : acc;
    case Reduction::kMin:
      if constexpr (std::is_floating_point_v<A>) {
        if (std::isnan(x)) return x;
      }
      return x < acc ? x : acc;
    case Reduction::kL1:
      if constexpr (std::is_floating_point_v<A>) {
        return acc + std::fabs(x);
      } else if constexpr (std::is_signed_v<A>) {
        return WrapAdd(acc, x < 0 ? static_cast<A>(uint64_t{0} - static_cast<uint64_t>(x)) : x);
      } else {
        return WrapAdd(acc, x);
      }
    case Reduction::kL2:
    case Reduction::kSumSquare: return WrapAdd(acc, WrapMul(x, x));
    case Reduction::kLogSumExp:
      if constexpr (std::is_floating_point_v<A>) return acc + std::exp(x - shift);
      return acc;
  }
  return acc;
}

// The reduction of `x` over the `reduced` axes, as T.
template <Reduction kOp, typename T>
absl::StatusOr<Tensor> ReduceAs(const KernelCall& call, const Tensor& x,
                                const std::vector<bool>& reduced, std::vector<int64_t> out_dims) {
  using A = Acc<kOp, T>;
  Tensor out(x.elem_type(), std::move(out_dims));
  std::vector<int64_t> offsets = OutputOffsets(x.dims(), reduced);
  absl::Span<const T> in = x.data<T>();
  std::vector<A> acc(out.size(), Identity<kOp, T>());
  std::vector<int64_t> count(out.size(), 0);
  std::vector<double> shift(out.size(), 0);
  if constexpr (kOp == Reduction::kLogSumExp) {
    // Shift by the largest finite value (0 when none) to keep exp in range.
    std::vector<bool> seen(out.size(), false);
    for (size_t i = 0; i < offsets.size(); ++i) {
      double v = static_cast<double>(Load(in[i]));
      int64_t o = offsets[i];
      if (std::isfinite(v) && (!seen[o] || v > shift[o])) {
        shift[o] = v;
        seen[o] = true;
      }
    }
  }
  for (size_t i = 0; i < offsets.size(); ++i) {
    int64_t o = offsets[i];
    acc[o] = Combine<kOp, A>(acc[o], static_cast<A>(Load(in[i])), shift[o]);
    ++count[o];
  }
  absl::Span<T> o = out.data<T>();
  absl::Status status;
  for (int64_t i = 0; i < out.size(); ++i) {
    A a = acc[i];
    if constexpr (std::is_floating_point_v<A>) {
      double r = a;
      switch (kOp) {
        case Reduction::kMean: r = a / static_cast<double>(count[i]); break;
        case Reduction::kL2: r = std::sqrt(a); break;
        case Reduction::kLogSum: r = std::log(a); break;
        case Reduction::kLogSumExp: r = std::log(a) + shift[i]; break;
        default: break;
      }
      if constexpr (kIsFloat<T>) {
        o[i] = Store<T>(static_cast<Compute<T>>(r));
      } else {
        o[i] = TruncateTo<T>(r, status);
      }
    } else if constexpr (kOp == Reduction::kMean) {
      if (count[i] == 0) return call.Error("the mean of no integers");
      // The sum wraps as T, then divides truncating.
      o[i] = static_cast<T>(static_cast<A>(static_cast<T>(a)) / static_cast<A>(count[i]));
    } else {
      o[i] = static_cast<T>(a);
    }
    if (!status.ok()) return call.Error(status.message());
  }
  return out;
}

// The types a reduction takes: numbers, and bool for ReduceMax/Min.
template <Reduction kOp>
struct Reducible {
  template <typename T>
  struct Types : std::bool_constant<kIsNumber<T> || kOp == Reduction::kMax ||
                                    kOp == Reduction::kMin> {};
};

template <Reduction kOp>
Outputs ReduceKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("data is absent");
  OC_ASSIGN_OR_RETURN(std::optional<std::vector<bool>> reduced,
                      ReducedAxes(call, x->rank(), AxesFromInput(kOp, call.since_version())));
  if (!reduced) return One(*x);
  std::vector<int64_t> dims = ReducedDims(x->dims(), *reduced, call.Int("keepdims", 1) != 0);
  return ForTypes<Reducible<kOp>::template Types>(call, x->elem_type(), [&](auto v) -> Outputs {
    OC_ASSIGN_OR_RETURN(Tensor out, (ReduceAs<kOp, decltype(v)>(call, *x, *reduced, dims)));
    return One(std::move(out));
  });
}

// Whether `a` ranks before `b` as the larger (`largest`) or the smaller
// value, NaN ranking above every number (numpy's sort order).
template <typename C>
bool RanksBefore(C a, C b, bool largest) {
  if constexpr (std::is_floating_point_v<C>) {
    bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return largest ? na && !nb : nb && !na;
  }
  return largest ? a > b : a < b;
}

// Whether `a` beats `b` for ArgMax (`max`) or ArgMin: NaN beats every
// number for both, as numpy's argmax and argmin take the first NaN.
template <typename C>
bool Beats(C a, C b, bool max) {
  if constexpr (std::is_floating_point_v<C>) {
    bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na && !nb;
  }
  return max ? a > b : a < b;
}

// ArgMax and ArgMin: the index of the first (or with select_last_index the
// last) largest or smallest element along the axis.
template <bool kMax>
Outputs ArgKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("data is absent");
  if (x->rank() == 0) return call.Error("the input is a scalar");
  OC_ASSIGN_OR_RETURN(int64_t axis, Axis(call, call.Int("axis", 0), x->rank()));
  AxisSplit s = SplitAt(x->dims(), axis);
  if (s.dim == 0) return call.Error("the axis is empty");
  bool last = call.Int("select_last_index", 0) != 0;
  std::vector<bool> reduced(x->rank(), false);
  reduced[axis] = true;
  Tensor out(onnx::TensorProto::INT64,
             ReducedDims(x->dims(), reduced, call.Int("keepdims", 1) != 0));
  absl::Span<int64_t> o = out.data<int64_t>();
  return ForTypes<NumberTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    absl::Span<const T> in = x->data<T>();
    for (int64_t outer = 0; outer < s.outer; ++outer) {
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        int64_t base = outer * s.dim * s.inner + inner;
        int64_t best = 0;
        Compute<T> best_value = Load(in[base]);
        for (int64_t k = 1; k < s.dim; ++k) {
          Compute<T> value = Load(in[base + k * s.inner]);
          bool tie = !Beats(value, best_value, kMax) && !Beats(best_value, value, kMax);
          if (Beats(value, best_value, kMax) || (last && tie)) {
            best = k;
            best_value = value;
          }
        }
        o[outer * s.inner + inner] = best;
      }
    }
    return One(std::move(out));
  });
}

// TopK: the k largest (or smallest) elements along the axis, sorted, equal
// values in index order; NaN ranks above every number. k is an attribute
// before 10, then input K.
Outputs TopKKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("X is absent");
  int64_t k = call.Int("k", -1);
  if (call.since_version() >= 10) {
    const Tensor* given = call.input(1);
    if (given == nullptr || given->size() != 1) return call.Error("K is not one integer");
    OC_ASSIGN_OR_RETURN(std::vector<int64_t> values, Int64s(call, *given));
    k = values[0];
  }
  OC_ASSIGN_OR_RETURN(int64_t axis, Axis(call, call.Int("axis", -1), x->rank()));
  AxisSplit s = SplitAt(x->dims(), axis);
  if (k < 0 || k > s.dim) return call.Error(absl::StrCat("k = ", k, " is outside [0, ", s.dim, "]"));
  bool largest = call.Int("largest", 1) != 0;
  std::vector<int64_t> dims = x->dims();
  dims[axis] = k;
  Tensor indices(onnx::TensorProto::INT64, dims);
  std::vector<int64_t> picked;
  picked.reserve(indices.size());
  return ForTypes<NumberTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    absl::Span<const T> in = x->data<T>();
    std::vector<int64_t> order(s.dim);
    std::vector<std::vector<int64_t>> rows;
    for (int64_t outer = 0; outer < s.outer; ++outer) {
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        int64_t base = outer * s.dim * s.inner + inner;
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          return RanksBefore(Load(in[base + a * s.inner]), Load(in[base + b * s.inner]),
                             largest);
        });
        rows.emplace_back(order.begin(), order.begin() + k);
      }
    }
    // Lay the picks out as the output: [outer, k, inner].
    absl::Span<int64_t> idx = indices.data<int64_t>();
    std::vector<int64_t> offsets(indices.size());
    for (int64_t outer = 0; outer < s.outer; ++outer) {
      for (int64_t j = 0; j < k; ++j) {
        for (int64_t inner = 0; inner < s.inner; ++inner) {
          int64_t at = (outer * k + j) * s.inner + inner;
          int64_t pick = rows[outer * s.inner + inner][j];
          idx[at] = pick;
          offsets[at] = (outer * s.dim + pick) * s.inner + inner;
        }
      }
    }
    std::vector<Tensor> outputs;
    outputs.push_back(Pick(*x, dims, offsets));
    outputs.push_back(std::move(indices));
    return outputs;
  });
}

// CumSum and CumProd along the axis input, optionally exclusive (each
// element leaves itself out) and reversed (from the end).
template <bool kProd>
Outputs CumulativeKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  // Named variables, not a structured binding: a lambda below captures them,
  // which clang 14 (the fuzzing build) does not allow of one.
  const auto x = inputs[0];
  const auto axis_input = inputs[1];
  if (axis_input->size() != 1) return call.Error("axis is not one integer");
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> axis_value, Int64s(call, *axis_input));
  OC_ASSIGN_OR_RETURN(int64_t axis, Axis(call, axis_value[0], x->rank()));
  bool exclusive = call.Int("exclusive", 0) != 0;
  bool reverse = call.Int("reverse", 0) != 0;
  AxisSplit s = SplitAt(x->dims(), axis);
  return ForTypes<NumberTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    using A = Wide<T>;
    Tensor out(x->elem_type(), x->dims());
    absl::Span<const T> in = x->data<T>();
    absl::Span<T> o = out.data<T>();
    for (int64_t outer = 0; outer < s.outer; ++outer) {
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        A acc = kProd ? A{1} : A{0};
        for (int64_t step = 0; step < s.dim; ++step) {
          int64_t k = reverse ? s.dim - 1 - step : step;
          int64_t at = (outer * s.dim + k) * s.inner + inner;
          A value = static_cast<A>(Load(in[at]));
          if (!exclusive) acc = kProd ? WrapMul(acc, value) : WrapAdd(acc, value);
          o[at] = Store<T>(static_cast<Compute<T>>(acc));
          if (exclusive) acc = kProd ? WrapMul(acc, value) : WrapAdd(acc, value);
        }
      }
    }
    return One(std::move(out));
  });
}

constinit const Instances<Reduction, 10> kReduce = InstancesOf<Reduction, 10>(
    [](auto op) -> KernelFn { return ReduceKernel<decltype(op)::value>; });
template KernelResult ArgKernel<true>(const KernelCall& call);
template KernelResult ArgKernel<false>(const KernelCall& call);
template KernelResult CumulativeKernel<false>(const KernelCall& call);
template KernelResult CumulativeKernel<true>(const KernelCall& call);

}  // namespace onnxconvert::eval::reduce_ops
