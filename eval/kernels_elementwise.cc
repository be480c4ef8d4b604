// Elementwise kernels: arithmetic, comparison, logic, unary math, variadic
// Max/Min/Sum/Mean and Where, with numpy broadcasting (from opset 7; the
// `broadcast`/`axis` attributes before).

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/broadcast.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::elementwise_ops {

// Applies `fn` to the broadcast elements of the inputs (storage type T),
// giving elements of `out_type` (storage R).
template <typename T, typename R, typename F>
absl::StatusOr<Tensor> Map(const KernelCall& call, bool legacy, int32_t out_type, F fn) {
  OC_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> dims, AlignedDims(call, legacy));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> out_dims, BroadcastDims(dims));
  Tensor out(out_type, out_dims);
  std::vector<BroadcastCursor> cursors;
  std::vector<absl::Span<const T>> data;
  for (size_t i = 0; i < dims.size(); ++i) {
    cursors.emplace_back(out_dims, dims[i]);
    data.push_back(call.inputs[i]->template data<T>());
  }
  absl::Span<R> o = out.data<R>();
  std::vector<Compute<T>> args(dims.size());
  // Inputs of the output's own shape (a unary op, equal shapes) are read
  // in step, without cursors.
  bool aligned = true;
  for (const std::vector<int64_t>& d : dims) aligned = aligned && d == out_dims;
  for (int64_t i = 0; i < out.size(); ++i) {
    for (size_t k = 0; k < cursors.size(); ++k) {
      if (aligned) {
        args[k] = Load(data[k][i]);
        continue;
      }
      args[k] = Load(data[k][cursors[k].offset()]);
      cursors[k].Next();
    }
    OC_ASSIGN_OR_RETURN(auto value, fn(args));
    if constexpr (std::is_same_v<R, bool>) {
      o[i] = value;
    } else {
      o[i] = Store<R>(value);
    }
  }
  return out;
}

absl::Status SameTypes(const KernelCall& call) {
  for (const Tensor* input : call.inputs) {
    if (input == nullptr) return call.Error("an input is absent");
    if (input->elem_type() != call.inputs[0]->elem_type()) {
      return call.Error("the inputs' element types differ");
    }
  }
  if (call.inputs.empty()) return call.Error("no inputs");
  return absl::OkStatus();
}

// SameTypes, and exactly two inputs.
absl::Status TwoOfOneType(const KernelCall& call) {
  OC_RETURN_IF_ERROR(SameTypes(call));
  if (call.inputs.size() != 2) return call.Error("expects 2 inputs");
  return absl::OkStatus();
}

// The kernel's one output, made by `fill(T{}, out)` for the storage type T
// of `type`; where `fill` leaves `out` unset, the type has no kernel.
template <typename Fill>
Outputs ForElementType(const KernelCall& call, int32_t type, Fill fill) {
  absl::StatusOr<Tensor> out = call.Error(absl::StrCat("no kernel for ", ElementTypeName(type)));
  VisitElementType(type, [&](auto v) { fill(v, out); });
  return One(std::move(out));
}

template <typename C>
absl::StatusOr<C> Apply(Arith op, C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    // Wrapping (never UB); only a division by zero fails.
    switch (op) {
      case Arith::kAdd: return WrapAdd(a, b);
      case Arith::kSub: return WrapSub(a, b);
      case Arith::kMul: return WrapMul(a, b);
      case Arith::kDiv:
        if (b == 0) return absl::InvalidArgumentError("integer division by zero");
        if constexpr (kIsSignedInt<C>) {
          if (a == std::numeric_limits<C>::min() && b == -1) return a;  // wraps
        }
        return static_cast<C>(a / b);
    }
  } else {
    switch (op) {
      case Arith::kAdd: return a + b;
      case Arith::kSub: return a - b;
      case Arith::kMul: return a * b;
      case Arith::kDiv: return a / b;
    }
  }
  return a;
}

// `op` on floating-point values, which cannot fail.
template <Arith kOp, typename C>
inline C ApplyFloat(C a, C b) {
  if constexpr (kOp == Arith::kAdd) return a + b;
  if constexpr (kOp == Arith::kSub) return a - b;
  if constexpr (kOp == Arith::kMul) return a * b;
  if constexpr (kOp == Arith::kDiv) return a / b;
}

// Where one input's elements lie along a row of the output's innermost
// axis: the row's first element for each output row, and the step along
// the row (0 where the input broadcasts on that axis, else 1).
struct RowWalk {
  BroadcastCursor rows;
  int64_t row_elements;  // elements of the input per step of `rows`
  int64_t step;
};

RowWalk WalkRows(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& in_dims) {
  auto outer = [](const std::vector<int64_t>& d) {
    return absl::MakeConstSpan(d).first(d.empty() ? 0 : d.size() - 1);
  };
  // An input of lower rank still aligns at the innermost axis.
  int64_t last = in_dims.empty() ? 1 : in_dims.back();
  return RowWalk{BroadcastCursor(outer(out_dims), outer(in_dims)), last, last == 1 ? 0 : 1};
}

// The output's dims and the two inputs' dims (aligned at the last axis)
// with the output's axes of extent 1 dropped and neighbouring axes merged
// where each input either holds both or broadcasts both: the same
// elements in the same row-major order, in as few rows as can be.
void Coalesce(std::vector<int64_t>& out, std::vector<int64_t>& a, std::vector<int64_t>& b) {
  const size_t rank = out.size();
  auto aligned = [rank](const std::vector<int64_t>& d) {
    std::vector<int64_t> r(rank - d.size(), 1);
    r.insert(r.end(), d.begin(), d.end());
    return r;
  };
  std::vector<int64_t> pa = aligned(a), pb = aligned(b);
  std::vector<int64_t> o2, a2, b2;
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;
    bool full_a = pa[i] != 1, full_b = pb[i] != 1;
    if (!o2.empty() && full_a == (a2.back() != 1) && full_b == (b2.back() != 1)) {
      o2.back() *= out[i];
      a2.back() *= pa[i];
      b2.back() *= pb[i];
    } else {
      o2.push_back(out[i]);
      a2.push_back(pa[i]);
      b2.push_back(pb[i]);
    }
  }
  out = std::move(o2);
  a = std::move(a2);
  b = std::move(b2);
}

// Binary arithmetic on floating-point storage type T, a row of the
// output's innermost axis at a time (the same values as Map's), after
// merging the axes that can be (Coalesce); a row whose inputs step by 1 or
// stay put runs in a loop of its own.
template <Arith kOp, typename T>
absl::StatusOr<Tensor> ArithmeticRows(const KernelCall& call, bool legacy, int32_t type) {
  OC_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> dims, AlignedDims(call, legacy));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> out_dims, BroadcastDims(dims));
  Tensor out(type, out_dims);
  if (out.size() == 0) return out;
  Coalesce(out_dims, dims[0], dims[1]);
  int64_t inner = out_dims.empty() ? 1 : out_dims.back();
  RowWalk wa = WalkRows(out_dims, dims[0]), wb = WalkRows(out_dims, dims[1]);
  absl::Span<const T> a = call.inputs[0]->template data<T>();
  absl::Span<const T> b = call.inputs[1]->template data<T>();
  T* o = out.data<T>().data();
  for (int64_t row = 0; row < out.size(); row += inner) {
    const T* pa = a.data() + wa.rows.offset() * wa.row_elements;
    const T* pb = b.data() + wb.rows.offset() * wb.row_elements;
    T* po = o + row;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      // The same per element, on lanes.
      auto op = [](auto x, auto y) {
        if constexpr (kOp == Arith::kAdd) return x + y;
        if constexpr (kOp == Arith::kSub) return x - y;
        if constexpr (kOp == Arith::kMul) return x * y;
        if constexpr (kOp == Arith::kDiv) return x / y;
      };
      if (wa.step == 1 && wb.step == 1) {
        MapLanes2(pa, pb, po, inner, op);
      } else if (wa.step == 1) {
        const T vb = pb[0];
        MapLanes(pa, po, inner, [&op, vb](auto x) { return op(x, vb); });
      } else if (wb.step == 1) {
        const T va = pa[0];
        MapLanes(pb, po, inner, [&op, va](auto y) { return op(va, y); });
      } else {
        std::fill(po, po + inner, static_cast<T>(op(pa[0], pb[0])));
      }
    } else if (wa.step == 1 && wb.step == 1) {
      for (int64_t j = 0; j < inner; ++j) {
        po[j] = Store<T>(ApplyFloat<kOp>(Load(pa[j]), Load(pb[j])));
      }
    } else if (wa.step == 1) {
      const auto vb = Load(pb[0]);
      for (int64_t j = 0; j < inner; ++j) po[j] = Store<T>(ApplyFloat<kOp>(Load(pa[j]), vb));
    } else if (wb.step == 1) {
      const auto va = Load(pa[0]);
      for (int64_t j = 0; j < inner; ++j) po[j] = Store<T>(ApplyFloat<kOp>(va, Load(pb[j])));
    } else {
      const T v = Store<T>(ApplyFloat<kOp>(Load(pa[0]), Load(pb[0])));
      for (int64_t j = 0; j < inner; ++j) po[j] = v;
    }
    wa.rows.Next();
    wb.rows.Next();
  }
  return out;
}

template <Arith kOp, bool kLegacy>
absl::StatusOr<std::vector<Tensor>> Arithmetic(const KernelCall& call) {
  OC_RETURN_IF_ERROR(TwoOfOneType(call));
  int32_t type = call.inputs[0]->elem_type();
  return ForElementType(call, type, [&](auto v, absl::StatusOr<Tensor>& out) {
    using T = decltype(v);
    if constexpr (std::is_floating_point_v<Compute<T>>) {
      out = ArithmeticRows<kOp, T>(call, kLegacy, type);
    } else if constexpr (kIsNumber<T>) {
      out = Map<T, T>(call, kLegacy, type, [&](const std::vector<Compute<T>>& x) {
        absl::StatusOr<Compute<T>> r = Apply(kOp, x[0], x[1]);
        if (!r.ok()) return absl::StatusOr<Compute<T>>(call.Error(r.status().message()));
        return r;
      });
    }
  });
}

// Equal of two string tensors, broadcast.
absl::StatusOr<Tensor> StringsEqual(const KernelCall& call) {
  const Tensor& a = *call.inputs[0];
  const Tensor& b = *call.inputs[1];
  absl::StatusOr<std::vector<int64_t>> dims = BroadcastDims({a.dims(), b.dims()});
  if (!dims.ok()) return call.Error(dims.status().message());
  Tensor out(onnx::TensorProto::BOOL, *dims);
  BroadcastCursor ca(*dims, a.dims()), cb(*dims, b.dims());
  for (int64_t i = 0; i < out.size(); ++i, ca.Next(), cb.Next()) {
    out.data<bool>()[i] = a.strings()[ca.offset()] == b.strings()[cb.offset()];
  }
  return out;
}

template <Compare kOp, bool kLegacy>
absl::StatusOr<std::vector<Tensor>> Comparison(const KernelCall& call) {
  OC_RETURN_IF_ERROR(TwoOfOneType(call));
  int32_t type = call.inputs[0]->elem_type();
  if (kOp == Compare::kEqual && !kLegacy && type == onnx::TensorProto::STRING) {
    return One(StringsEqual(call));
  }
  return ForElementType(call, type, [&](auto v, absl::StatusOr<Tensor>& out) {
    using T = decltype(v);
    out = Map<T, bool>(call, kLegacy, onnx::TensorProto::BOOL,
                       [](const std::vector<Compute<T>>& x) -> absl::StatusOr<bool> {
                         switch (kOp) {
                           case Compare::kEqual: return x[0] == x[1];
                           case Compare::kLess: return x[0] < x[1];
                           case Compare::kGreater: return x[0] > x[1];
                           case Compare::kLessOrEqual: return x[0] <= x[1];
                           case Compare::kGreaterOrEqual: return x[0] >= x[1];
                         }
                         return false;
                       });
  });
}

template <Logic kOp, bool kLegacy>
absl::StatusOr<std::vector<Tensor>> Logical(const KernelCall& call) {
  OC_RETURN_IF_ERROR(SameTypes(call));
  if (call.inputs.size() != 2 || call.inputs[0]->elem_type() != onnx::TensorProto::BOOL) {
    return call.Error("expects 2 bool inputs");
  }
  OC_ASSIGN_OR_RETURN(Tensor out, (Map<bool, bool>(call, kLegacy, onnx::TensorProto::BOOL,
                                                    [](const std::vector<bool>& x)
                                                        -> absl::StatusOr<bool> {
                                                      switch (kOp) {
                                                        case Logic::kAnd: return x[0] && x[1];
                                                        case Logic::kOr: return x[0] || x[1];
                                                        case Logic::kXor: return x[0] != x[1];
                                                      }
                                                      return false;
                                                    })));
  return One(std::move(out));
}

// Max, Min, Sum and Mean of any number of inputs; before opset 8 the
// inputs must have one shape.
template <Variadic kOp>
absl::StatusOr<std::vector<Tensor>> Reduce(const KernelCall& call) {
  OC_RETURN_IF_ERROR(SameTypes(call));
  if (call.since_version() < 8) {
    for (const Tensor* input : call.inputs) {
      if (input->dims() != call.inputs[0]->dims()) {
        return call.Error("the inputs' shapes differ, which this version does not broadcast");
      }
    }
  }
  int32_t type = call.inputs[0]->elem_type();
  return ForElementType(call, type, [&](auto v, absl::StatusOr<Tensor>& out) {
    using T = decltype(v);
    if constexpr (kIsNumber<T>) {
      out = Map<T, T>(call, false, type,
                      [](const std::vector<Compute<T>>& x) -> absl::StatusOr<Compute<T>> {
                        Compute<T> r = x[0];
                        for (size_t i = 1; i < x.size(); ++i) {
                          switch (kOp) {
                            case Variadic::kMax:
                              if constexpr (std::is_floating_point_v<Compute<T>>) {
                                if (std::isnan(x[i])) r = x[i];
                              }
                              r = r < x[i] ? x[i] : r;
                              break;
                            case Variadic::kMin:
                              if constexpr (std::is_floating_point_v<Compute<T>>) {
                                if (std::isnan(x[i])) r = x[i];
                              }
                              r = x[i] < r ? x[i] : r;
                              break;
                            case Variadic::kSum:
                            case Variadic::kMean:
                              r = *Apply(Arith::kAdd, r, x[i]);
                              break;
                          }
                        }
                        if constexpr (kOp == Variadic::kMean) {
                          r = static_cast<Compute<T>>(r / static_cast<Compute<T>>(x.size()));
                        }
                        return r;
                      });
    }
  });
}

template <Unary kOp>
absl::StatusOr<std::vector<Tensor>> UnaryMath(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("input X is absent");
  int32_t type = x->elem_type();
  return ForElementType(call, type, [&](auto v, absl::StatusOr<Tensor>& out) {
    using T = decltype(v);
    using C = Compute<T>;
    constexpr bool kFloat = std::is_floating_point_v<C>;
    constexpr bool kBool = std::is_same_v<T, bool>;
    constexpr bool kAllowed = kOp == Unary::kNot
                                  ? kBool
                                  : (kOp == Unary::kNeg || kOp == Unary::kAbs ||
                                     kOp == Unary::kRelu)
                                        ? !kBool
                                        : kFloat;
    if constexpr (kOp == Unary::kRelu && (std::is_same_v<T, float> ||
                                          std::is_same_v<T, double>)) {
      out = MapElementsLanes<T>(*x, [](auto value) { return value < C{0} ? C{0} : value; });
    } else if constexpr (kAllowed) {
      // One loop over the elements, the function inlined (none fails).
      out = MapElements<T>(*x, [](C value) -> C {
                        if constexpr (kOp == Unary::kNot) {
                          return !value;
                        } else if constexpr (kOp == Unary::kNeg) {
                          if constexpr (kIsSignedInt<C>) {
                            using U = std::make_unsigned_t<C>;
                            return static_cast<C>(U{0} - static_cast<U>(value));
                          } else {
                            return static_cast<C>(-value);
                          }
                        } else if constexpr (kOp == Unary::kAbs) {
                          if constexpr (kIsSignedInt<C>) {
                            using U = std::make_unsigned_t<C>;
                            return value < 0 ? static_cast<C>(U{0} - static_cast<U>(value))
                                             : value;
                          } else if constexpr (std::is_unsigned_v<C>) {
                            return value;
                          } else {
                            return std::fabs(value);
                          }
                        } else if constexpr (kOp == Unary::kRelu) {
                          return value < C{0} ? C{0} : value;
                        } else if constexpr (kFloat) {
                          switch (kOp) {
                            case Unary::kSqrt: return std::sqrt(value);
                            case Unary::kExp: return std::exp(value);
                            case Unary::kLog: return std::log(value);
                            case Unary::kFloor: return std::floor(value);
                            case Unary::kCeil: return std::ceil(value);
                            case Unary::kReciprocal: return C{1} / value;
                            default: return value;
                          }
                        } else {
                          return value;
                        }
                      });
    }
  });
}

// Where(condition, X, Y), broadcasting all three.
absl::StatusOr<std::vector<Tensor>> WhereKernel(const KernelCall& call) {
  const Tensor* c = call.input(0);
  const Tensor* x = call.input(1);
  const Tensor* y = call.input(2);
  if (c == nullptr || x == nullptr || y == nullptr) return call.Error("an input is absent");
  if (c->elem_type() != onnx::TensorProto::BOOL || x->elem_type() != y->elem_type()) {
    return call.Error("expects a bool condition and X, Y of one type");
  }
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                      BroadcastDims({c->dims(), x->dims(), y->dims()}));
  Tensor out(x->elem_type(), dims);
  BroadcastCursor cc(dims, c->dims()), cx(dims, x->dims()), cy(dims, y->dims());
  absl::Span<const bool> cond = c->data<bool>();
  for (int64_t i = 0; i < out.size(); ++i) {
    if (cond[cc.offset()]) {
      CopyElement(*x, cx.offset(), out, i);
    } else {
      CopyElement(*y, cy.offset(), out, i);
    }
    cc.Next();
    cx.Next();
    cy.Next();
  }
  return One(std::move(out));
}

constinit const FlagInstances<Arith, 4> kArithmetic =
    FlagInstancesOf<Arith, 4>([](auto op, auto legacy) -> KernelFn {
      return Arithmetic<decltype(op)::value, decltype(legacy)::value>;
    });
constinit const FlagInstances<Compare, 5> kComparison =
    FlagInstancesOf<Compare, 5>([](auto op, auto legacy) -> KernelFn {
      return Comparison<decltype(op)::value, decltype(legacy)::value>;
    });
constinit const FlagInstances<Logic, 3> kLogical =
    FlagInstancesOf<Logic, 3>([](auto op, auto legacy) -> KernelFn {
      return Logical<decltype(op)::value, decltype(legacy)::value>;
    });
constinit const Instances<Variadic, 4> kVariadic =
    InstancesOf<Variadic, 4>([](auto op) -> KernelFn { return Reduce<decltype(op)::value>; });
constinit const Instances<Unary, 10> kUnary =
    InstancesOf<Unary, 10>([](auto op) -> KernelFn { return UnaryMath<decltype(op)::value>; });

}  // namespace onnxconvert::eval::elementwise_ops
