// Math kernels: the unary functions and activations of floating-point
// tensors (computed in double), Sign, Round, IsNaN, IsInf, Shrink, Clip,
// PRelu, Pow, Mod, BitShift, the bitwise ops, and Softmax, LogSoftmax and
// Hardmax.

#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::math_ops {

// The attributes a function reads, with its op's defaults.
struct Params {
  double alpha = 0;
  double beta = 0;
  double gamma = 0;
  bool tanh_approximation = false;
};

// The defaults of the attributes of the functions that have some.
struct FnDefaults {
  Fn fn;
  float alpha;
  float beta;
  float gamma;
};

constexpr FnDefaults kDefaults[] = {
    {Fn::kHardSigmoid, 0.2f, 0.5f, 0},
    {Fn::kElu, 1, 0, 0},
    {Fn::kSelu, 1.67326319217681884765625f, 0, 1.05070102214813232421875f},
    {Fn::kLeakyRelu, 0.01f, 0, 0},
    {Fn::kCelu, 1, 0, 0},
    {Fn::kThresholdedRelu, 1, 0, 0},
    {Fn::kSwish, 1, 0, 0},
};

absl::StatusOr<Params> ReadParams(Fn fn, const KernelCall& call) {
  Params p;
  for (const FnDefaults& d : kDefaults) {
    if (d.fn != fn) continue;
    float alpha = d.alpha, gamma = d.gamma;
    if (fn == Fn::kSelu && call.since_version() < 6) {
      alpha = 1.6732f;  // Selu-1's defaults
      gamma = 1.0507f;
    }
    p.alpha = call.Float("alpha", alpha);
    p.beta = call.Float("beta", d.beta);
    p.gamma = call.Float("gamma", gamma);
  }
  if (fn == Fn::kCelu && p.alpha == 0) return call.Error("alpha is 0");
  if (fn == Fn::kGelu) {
    const onnx::AttributeProto* a = call.attribute("approximate");
    std::string approximate = a == nullptr ? "none" : a->s();
    if (approximate != "none" && approximate != "tanh") {
      return call.Error(absl::StrCat("approximate is \"", approximate, "\""));
    }
    p.tanh_approximation = approximate == "tanh";
  }
  return p;
}

inline double Sigmoid(double x) {
  if (x >= 0) return 1 / (1 + std::exp(-x));
  double e = std::exp(x);  // once: the same value as computing it twice
  return e / (1 + e);
}

// log(1 + e^x) without overflow.
inline double Softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// x clamped to [0, 1], NaN kept.
inline double Clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

// The function `kFn` of x, in double (a template so that each op's loop
// inlines its own function).
template <Fn kFn>
inline double Apply(double x, const Params& p) {
  if constexpr (kFn == Fn::kSin) return std::sin(x);
  if constexpr (kFn == Fn::kCos) return std::cos(x);
  if constexpr (kFn == Fn::kTan) return std::tan(x);
  if constexpr (kFn == Fn::kAsin) return std::asin(x);
  if constexpr (kFn == Fn::kAcos) return std::acos(x);
  if constexpr (kFn == Fn::kAtan) return std::atan(x);
  if constexpr (kFn == Fn::kSinh) return std::sinh(x);
  if constexpr (kFn == Fn::kCosh) return std::cosh(x);
  if constexpr (kFn == Fn::kTanh) return std::tanh(x);
  if constexpr (kFn == Fn::kAsinh) return std::asinh(x);
  if constexpr (kFn == Fn::kAcosh) return std::acosh(x);
  if constexpr (kFn == Fn::kAtanh) return std::atanh(x);
  if constexpr (kFn == Fn::kSigmoid) return Sigmoid(x);
  if constexpr (kFn == Fn::kErf) return std::erf(x);
  if constexpr (kFn == Fn::kSoftplus) return Softplus(x);
  if constexpr (kFn == Fn::kSoftsign) return x / (1 + std::fabs(x));
  if constexpr (kFn == Fn::kHardSigmoid) return Clamp01(p.alpha * x + p.beta);
  if constexpr (kFn == Fn::kHardSwish) return x * Clamp01(x / 6 + 0.5);
  if constexpr (kFn == Fn::kElu) return x < 0 ? p.alpha * std::expm1(x) : x;
  if constexpr (kFn == Fn::kSelu) return x > 0 ? p.gamma * x : p.gamma * p.alpha * std::expm1(x);
  if constexpr (kFn == Fn::kLeakyRelu) return x < 0 ? p.alpha * x : x;
  if constexpr (kFn == Fn::kCelu) return x > 0 ? x : p.alpha * std::expm1(x / p.alpha);
  if constexpr (kFn == Fn::kGelu) {
    if (p.tanh_approximation) {
      constexpr double kScale = 0.79788456080286535588;  // sqrt(2 / pi)
      return 0.5 * x * (1 + std::tanh(kScale * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  }
  if constexpr (kFn == Fn::kMish) return x * std::tanh(Softplus(x));
  if constexpr (kFn == Fn::kThresholdedRelu) return x > p.alpha ? x : 0;
  if constexpr (kFn == Fn::kSwish) return x * Sigmoid(p.alpha * x);
  return x;
}

const Tensor* First(const KernelCall& call) { return call.input(0); }

// A function of one floating-point input (Erf also of integers, truncated).
template <Fn kFn>
Outputs FloatUnary(const KernelCall& call) {
  const Tensor* x = First(call);
  if (x == nullptr) return call.Error("input is absent");
  OC_ASSIGN_OR_RETURN(Params p, ReadParams(kFn, call));
  auto body = [&](auto v) -> Outputs {
    using T = decltype(v);
    if constexpr (kIsFloat<T>) {
      // One loop over the elements, the function inlined.
      return One(MapElements<T>(*x, [&](Compute<T> a) {
        return static_cast<Compute<T>>(Apply<kFn>(a, p));
      }));
    } else {
      OC_ASSIGN_OR_RETURN(Tensor out, (MapUnary<T, T>(call, *x, x->elem_type(),
                                                      [&](Compute<T> a, absl::Status& status) {
                                                        return TruncateTo<T>(
                                                            Apply<kFn>(a, p), status);
                                                      })));
      return One(std::move(out));
    }
  };
  if constexpr (kFn == Fn::kErf) return ForTypes<NumberTypes>(call, x->elem_type(), body);
  return ForTypes<FloatTypes>(call, x->elem_type(), body);
}

// numpy's round: halves to even.
double RoundHalfEven(double x) {
  double r = std::round(x);
  if (std::fabs(x - std::trunc(x)) == 0.5) r = 2 * std::round(x / 2);
  return r;
}

Outputs RoundKernel(const KernelCall& call) {
  const Tensor* x = First(call);
  if (x == nullptr) return call.Error("input is absent");
  return ForTypes<FloatTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    OC_ASSIGN_OR_RETURN(Tensor out, (MapUnary<T, T>(call, *x, x->elem_type(),
                                                    [](Compute<T> a, absl::Status&) {
                                                      return static_cast<Compute<T>>(
                                                          RoundHalfEven(a));
                                                    })));
    return One(std::move(out));
  });
}

Outputs SignKernel(const KernelCall& call) {
  const Tensor* x = First(call);
  if (x == nullptr) return call.Error("input is absent");
  return ForTypes<NumberTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    using C = Compute<T>;
    OC_ASSIGN_OR_RETURN(Tensor out, (MapUnary<T, T>(call, *x, x->elem_type(),
                                                    [](C a, absl::Status&) -> C {
                                                      if constexpr (kIsFloat<T>) {
                                                        if (std::isnan(a)) return a;
                                                      }
                                                      return static_cast<C>((C{0} < a) -
                                                                            (a < C{0}));
                                                    })));
    return One(std::move(out));
  });
}

Outputs IsNaNKernel(const KernelCall& call) {
  const Tensor* x = First(call);
  if (x == nullptr) return call.Error("input is absent");
  return ForTypes<FloatTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    OC_ASSIGN_OR_RETURN(Tensor out, (MapUnary<T, bool>(call, *x, onnx::TensorProto::BOOL,
                                                       [](Compute<T> a, absl::Status&) {
                                                         return std::isnan(a);
                                                       })));
    return One(std::move(out));
  });
}

Outputs IsInfKernel(const KernelCall& call) {
  const Tensor* x = First(call);
  if (x == nullptr) return call.Error("input is absent");
  bool negative = call.Int("detect_negative", 1) != 0;
  bool positive = call.Int("detect_positive", 1) != 0;
  return ForTypes<FloatTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    OC_ASSIGN_OR_RETURN(Tensor out,
                        (MapUnary<T, bool>(call, *x, onnx::TensorProto::BOOL,
                                           [&](Compute<T> a, absl::Status&) {
                                             return std::isinf(a) &&
                                                    (a > 0 ? positive : negative);
                                           })));
    return One(std::move(out));
  });
}

// Shrink: x + bias below -lambd, x - bias above lambd, else 0; integers
// compute in double and truncate back.
Outputs ShrinkKernel(const KernelCall& call) {
  const Tensor* x = First(call);
  if (x == nullptr) return call.Error("input is absent");
  double bias = call.Float("bias", 0);
  double lambd = call.Float("lambd", 0.5);
  return ForTypes<NumberTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    OC_ASSIGN_OR_RETURN(Tensor out, (MapUnary<T, T>(call, *x, x->elem_type(),
                                                    [&](Compute<T> a, absl::Status& status) {
                                                      double d = static_cast<double>(a);
                                                      double r = d < -lambd  ? d + bias
                                                                 : d > lambd ? d - bias
                                                                             : 0.0;
                                                      if constexpr (kIsFloat<T>) {
                                                        (void)status;
                                                        return static_cast<Compute<T>>(r);
                                                      } else {
                                                        return TruncateTo<T>(r, status);
                                                      }
                                                    })));
    return One(std::move(out));
  });
}

// The bound of Clip given by input `i` (11+) or attribute `name` (before),
// or nullopt when unbounded. Clip-6 bounds by +-FLT_MAX by default.
template <typename C>
absl::StatusOr<std::optional<C>> ClipBound(const KernelCall& call, int i, const char* name,
                                           float legacy_default) {
  if (call.since_version() < 11) {
    const onnx::AttributeProto* a = call.attribute(name);
    if (a != nullptr && a->has_f()) return std::optional<C>(static_cast<C>(a->f()));
    if (call.since_version() >= 6) return std::optional<C>(static_cast<C>(legacy_default));
    return std::optional<C>();
  }
  const Tensor* bound = call.input(i);
  if (bound == nullptr) return std::optional<C>();
  if (bound->size() != 1 || bound->elem_type() != call.input(0)->elem_type()) {
    return call.Error(absl::StrCat(name, " is not one element of the input's type"));
  }
  bool got = false;
  C value{};
  VisitElementType(bound->elem_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<Compute<T>, C>) {
      value = Load(bound->data<T>()[0]);
      got = true;
    }
  });
  if (!got) return call.Error(absl::StrCat(name, " has the wrong type"));
  return std::optional<C>(value);
}

// Clip: below min becomes min, then above max becomes max (so max wins when
// min > max); NaN stays NaN, a NaN bound makes NaN.
Outputs ClipKernel(const KernelCall& call) {
  const Tensor* x = First(call);
  if (x == nullptr) return call.Error("input is absent");
  constexpr float kMax = std::numeric_limits<float>::max();
  return ForTypes<NumberTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    using C = Compute<T>;
    if (!kIsFloat<T> && call.since_version() < 12) {
      return call.Error(NoKernel(x->elem_type()));
    }
    OC_ASSIGN_OR_RETURN(std::optional<C> lo, ClipBound<C>(call, 1, "min", -kMax));
    OC_ASSIGN_OR_RETURN(std::optional<C> hi, ClipBound<C>(call, 2, "max", kMax));
    if constexpr (kIsFloat<T>) {
      bool nan_bound = (lo && *lo != *lo) || (hi && *hi != *hi);
      if (!nan_bound) {
        // An absent bound as an infinite one, which no element passes; a
        // NaN element fails both tests and stays NaN. One loop that
        // vectorizes.
        constexpr C kInf = std::numeric_limits<C>::infinity();
        const C low = lo ? *lo : -kInf;
        const C high = hi ? *hi : kInf;
        return One(MapElementsLanes<T>(*x, [low, high](auto a) {
          auto y = a < low ? low : a;
          return y > high ? high : y;
        }));
      }
    }
    OC_ASSIGN_OR_RETURN(Tensor out, (MapUnary<T, T>(call, *x, x->elem_type(),
                                                    [&](C a, absl::Status&) {
                                                      C y = a;
                                                      if (lo && (y < *lo || *lo != *lo)) y = *lo;
                                                      if (hi && (y > *hi || *hi != *hi)) y = *hi;
                                                      return y;
                                                    })));
    return One(std::move(out));
  });
}

// PRelu: slope * x below 0; the slope broadcasts to X (from 7; before, it
// is one element or X's shape).
Outputs PReluKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  // Named variables, not a structured binding: a lambda below captures them,
  // which clang 14 (the fuzzing build) does not allow of one.
  const auto x = inputs[0];
  const auto slope = inputs[1];
  if (slope->elem_type() != x->elem_type()) return call.Error("slope's type differs from X's");
  if (call.since_version() < 7 && slope->size() != 1 && slope->dims() != x->dims()) {
    return call.Error("slope is neither one element nor X's shape");
  }
  return ForTypes<NumberTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    using C = Compute<T>;
    OC_ASSIGN_OR_RETURN(Tensor out, (MapBinary<T, T, T>(call, false, x->elem_type(),
                                                        [](C a, C s, absl::Status&) {
                                                          return a < C{0} ? WrapMul(s, a) : a;
                                                        })));
    if (out.dims() != x->dims()) return call.Error("slope does not broadcast to X");
    return One(std::move(out));
  });
}

// `base` to the power `exponent` >= 0, wrapping as the integers of T do.
template <typename T>
T IntegerPower(int64_t base, uint64_t exponent) {
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(base);
  while (exponent != 0) {
    if (exponent & 1) result *= b;
    b *= b;
    exponent >>= 1;
  }
  return static_cast<T>(result);
}

// Pow: floats in double; an integer base with an integer exponent by
// wrapping multiplication (a negative exponent is refused); an integer base
// with a float exponent in double, truncated.
Outputs PowKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  // Named variables, not a structured binding: a lambda below captures them,
  // which clang 14 (the fuzzing build) does not allow of one.
  const auto x = inputs[0];
  const auto y = inputs[1];
  if (call.since_version() < 12 && x->elem_type() != y->elem_type()) {
    return call.Error("the inputs' types differ, which this version does not allow");
  }
  bool legacy = call.since_version() < 7;
  Outputs out = call.Error(absl::StrCat(NoKernel(x->elem_type()), " and ",
                                        ElementTypeName(y->elem_type())));
  VisitElementType(x->elem_type(), [&](auto xv) {
    using T = decltype(xv);
    VisitElementType(y->elem_type(), [&](auto yv) {
      using E = decltype(yv);
      if constexpr (kIsNumber<T> && kIsNumber<E>) {
        absl::StatusOr<Tensor> t = MapBinary<T, E, T>(
            call, legacy, x->elem_type(), [](Compute<T> a, Compute<E> b, absl::Status& status) {
              if constexpr (kIsFloat<T>) {
                (void)status;
                return static_cast<Compute<T>>(
                    std::pow(static_cast<double>(a), static_cast<double>(b)));
              } else if constexpr (kIsFloat<E>) {
                return TruncateTo<T>(std::pow(static_cast<double>(a), static_cast<double>(b)),
                                     status);
              } else {
                if (b < E{0}) {
                  status = absl::InvalidArgumentError(
                      "an integer to a negative integer power");
                  return T{};
                }
                return IntegerPower<T>(static_cast<int64_t>(a), static_cast<uint64_t>(b));
              }
            });
        out = t.ok() ? One(*std::move(t)) : Outputs(t.status());
      }
    });
  });
  return out;
}

// Mod: with fmod = 1 the remainder of truncated division (C's fmod and %);
// with fmod = 0 (integers only) the remainder takes the divisor's sign.
// Integer division by zero is refused.
Outputs ModKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  // Named variables, not a structured binding: a lambda below captures them,
  // which clang 14 (the fuzzing build) does not allow of one.
  const auto a = inputs[0];
  const auto b = inputs[1];
  if (a->elem_type() != b->elem_type()) return call.Error("the inputs' types differ");
  bool fmod = call.Int("fmod", 0) != 0;
  return ForTypes<NumberTypes>(call, a->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    using C = Compute<T>;
    if constexpr (kIsFloat<T>) {
      if (!fmod) return call.Error("fmod must be 1 for floating-point inputs");
    }
    OC_ASSIGN_OR_RETURN(
        Tensor out, (MapBinary<T, T, T>(call, false, a->elem_type(), [&](C p, C q,
                                                                        absl::Status& status) {
          if constexpr (kIsFloat<T>) {
            (void)status;
            return static_cast<C>(std::fmod(p, q));
          } else {
            if (q == 0) {
              status = absl::InvalidArgumentError("integer modulo by zero");
              return C{0};
            }
            if constexpr (std::is_signed_v<C>) {
              if (q == -1) return C{0};  // also where p / q overflows
            }
            C r = static_cast<C>(p % q);
            if (!fmod && r != 0 && ((r < 0) != (q < 0))) r = static_cast<C>(r + q);
            return r;
          }
        })));
    return One(std::move(out));
  });
}

// BitShift of unsigned integers; shifting by the width or more gives 0.
Outputs BitShiftKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  // Named variables, not a structured binding: a lambda below captures them,
  // which clang 14 (the fuzzing build) does not allow of one.
  const auto x = inputs[0];
  const auto y = inputs[1];
  if (x->elem_type() != y->elem_type()) return call.Error("the inputs' types differ");
  const onnx::AttributeProto* direction = call.attribute("direction");
  if (direction == nullptr || (direction->s() != "LEFT" && direction->s() != "RIGHT")) {
    return call.Error("direction is not LEFT or RIGHT");
  }
  bool left = direction->s() == "LEFT";
  return ForTypes<UnsignedTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    OC_ASSIGN_OR_RETURN(Tensor out,
                        (MapBinary<T, T, T>(call, false, x->elem_type(),
                                            [&](T a, T s, absl::Status&) {
                                              if (s >= sizeof(T) * 8) return T{0};
                                              uint64_t wide = a;
                                              return static_cast<T>(left ? wide << s : wide >> s);
                                            })));
    return One(std::move(out));
  });
}

template <Bitwise kOp>
Outputs BitwiseKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  // Named variables, not a structured binding: a lambda below captures them,
  // which clang 14 (the fuzzing build) does not allow of one.
  const auto a = inputs[0];
  const auto b = inputs[1];
  if (a->elem_type() != b->elem_type()) return call.Error("the inputs' types differ");
  return ForTypes<IntegerTypes>(call, a->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    OC_ASSIGN_OR_RETURN(Tensor out, (MapBinary<T, T, T>(call, false, a->elem_type(),
                                                        [](T p, T q, absl::Status&) {
                                                          switch (kOp) {
                                                            case Bitwise::kAnd: return T(p & q);
                                                            case Bitwise::kOr: return T(p | q);
                                                            case Bitwise::kXor: return T(p ^ q);
                                                          }
                                                          return T{0};
                                                        })));
    return One(std::move(out));
  });
}

Outputs BitwiseNotKernel(const KernelCall& call) {
  const Tensor* x = First(call);
  if (x == nullptr) return call.Error("input is absent");
  return ForTypes<IntegerTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    OC_ASSIGN_OR_RETURN(Tensor out, (MapUnary<T, T>(call, *x, x->elem_type(),
                                                    [](T a, absl::Status&) { return T(~a); })));
    return One(std::move(out));
  });
}

// Softmax, LogSoftmax and Hardmax over `axis`: before 13 over the input
// coerced to 2D at axis (default 1), from 13 along the axis (default -1).
// Hardmax marks the first largest element.
template <Softmax kOp>
Outputs SoftmaxKernel(const KernelCall& call) {
  const Tensor* x = First(call);
  if (x == nullptr) return call.Error("input is absent");
  bool coerce = call.since_version() < 13;
  int64_t rank = x->rank();
  int64_t axis = call.Int("axis", coerce ? 1 : -1);
  AxisSplit s{1, 1, 1};
  if (coerce) {
    // Rows of dims [axis, rank) flattened; axis may be the rank itself.
    if (axis < -rank || axis > rank) {
      return call.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    }
    if (axis < 0) axis += rank;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? s.outer : s.dim) *= x->dims()[i];
  } else {
    OC_ASSIGN_OR_RETURN(axis, Axis(call, axis, rank));
    s = SplitAt(x->dims(), axis);
  }
  return ForTypes<FloatTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    Tensor out(x->elem_type(), x->dims());
    absl::Span<const T> in = x->data<T>();
    absl::Span<T> o = out.data<T>();
    std::vector<double> row(s.dim);
    for (int64_t outer = 0; outer < s.outer; ++outer) {
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        int64_t base = outer * s.dim * s.inner + inner;
        double max = -std::numeric_limits<double>::infinity();
        int64_t argmax = -1;
        for (int64_t k = 0; k < s.dim; ++k) {
          row[k] = Load(in[base + k * s.inner]);
          if (argmax < 0 || row[k] > max || (std::isnan(row[k]) && !std::isnan(max))) {
            max = row[k];
            argmax = k;
          }
        }
        double sum = 0;
        if constexpr (kOp != Softmax::kHardmax) {
          for (int64_t k = 0; k < s.dim; ++k) sum += std::exp(row[k] - max);
        }
        for (int64_t k = 0; k < s.dim; ++k) {
          double r = 0;
          switch (kOp) {
            case Softmax::kSoftmax: r = std::exp(row[k] - max) / sum; break;
            case Softmax::kLogSoftmax: r = row[k] - max - std::log(sum); break;
            case Softmax::kHardmax: r = k == argmax ? 1 : 0; break;
          }
          o[base + k * s.inner] = Store<T>(static_cast<Compute<T>>(r));
        }
      }
    }
    return One(std::move(out));
  });
}

constexpr int kFnCount = static_cast<int>(Fn::kSwish) + 1;
constinit const Instances<Fn, kFnCount> kFloatUnary =
    InstancesOf<Fn, kFnCount>([](auto fn) -> KernelFn { return FloatUnary<decltype(fn)::value>; });
constinit const Instances<Bitwise, 3> kBitwise =
    InstancesOf<Bitwise, 3>([](auto op) -> KernelFn { return BitwiseKernel<decltype(op)::value>; });
constinit const Instances<Softmax, 3> kSoftmax =
    InstancesOf<Softmax, 3>([](auto op) -> KernelFn { return SoftmaxKernel<decltype(op)::value>; });

}  // namespace onnxconvert::eval::math_ops
