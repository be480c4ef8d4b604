// Dense linear algebra on Eigen: MatMul (batched, numpy broadcasting),
// Gemm (all versions), MatMulInteger, QLinearMatMul, Einsum and Det.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <type_traits>

#include "Eigen/LU"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "eval/broadcast.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/nn_util.h"

namespace onnxconvert::eval::linalg_ops {

using nn::ConstMatrixMap;
using nn::Outputs;
using nn::RealView;

// Integers multiply in the unsigned type of their width's double (wrapping,
// never UB); floats in their compute type.
template <typename T>
using Accumulate =
    std::conditional_t<std::is_integral_v<T>,
                       std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>, nn::Real<T>>;

// The shapes of a batched matrix product A[..., M, K] x B[..., K, N].
struct MatMulShape {
  std::vector<int64_t> out_dims;  // as the op reports it (1-D inputs' axes dropped)
  std::vector<int64_t> batch;     // broadcast batch dims
  std::vector<int64_t> a_batch, b_batch;
  int64_t m = 0, k = 0, n = 0;
};

// numpy matmul shapes: a 1-D A gains a leading 1, a 1-D B a trailing 1,
// both dropped from the output.
absl::StatusOr<MatMulShape> MatMulShapeOf(const KernelCall& call, std::vector<int64_t> a,
                                          std::vector<int64_t> b) {
  if (a.empty() || b.empty()) return call.Error("MatMul inputs must have rank 1 or more");
  bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  MatMulShape s;
  s.m = a[a.size() - 2];
  s.k = a.back();
  s.n = b.back();
  if (b[b.size() - 2] != s.k) {
    return call.Error(absl::StrCat("the inner dims differ (", s.k, " and ", b[b.size() - 2],
                                   ")"));
  }
  s.a_batch.assign(a.begin(), a.end() - 2);
  s.b_batch.assign(b.begin(), b.end() - 2);
  absl::StatusOr<std::vector<int64_t>> batch = BroadcastDims({s.a_batch, s.b_batch});
  if (!batch.ok()) return call.Error(batch.status().message());
  s.batch = *batch;
  s.out_dims = s.batch;
  if (!a_vector) s.out_dims.push_back(s.m);
  if (!b_vector) s.out_dims.push_back(s.n);
  return s;
}

// out[batch] = a[batch] x b[batch] over contiguous row-major matrices of
// compute type C.
template <typename C>
void BatchedProduct(const MatMulShape& s, const C* a, const C* b, C* out) {
  int64_t batches = nn::Product(s.batch, 0, s.batch.size());
  BroadcastCursor ca(s.batch, s.a_batch), cb(s.batch, s.b_batch);
  for (int64_t i = 0; i < batches; ++i) {
    nn::Multiply(a + ca.offset() * s.m * s.k, b + cb.offset() * s.k * s.n, out + i * s.m * s.n, s.m,
                 s.k, s.n);
    ca.Next();
    cb.Next();
  }
}

// The elements of `t` (storage T) as C: integers by their bit pattern in
// the wider unsigned type, so that products wrap as the storage would.
template <typename C, typename T>
std::vector<C> Widen(const Tensor& t) {
  std::vector<C> out;
  out.reserve(t.size());
  for (T x : t.data<T>()) {
    if constexpr (std::is_integral_v<T>) {
      out.push_back(static_cast<C>(static_cast<std::make_signed_t<C>>(x)));
    } else {
      out.push_back(nn::LoadAs<C>(x));
    }
  }
  return out;
}

Outputs MatMulKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* a, nn::Required(call, 0, "A"));
  OC_ASSIGN_OR_RETURN(const Tensor* b, nn::Required(call, 1, "B"));
  if (a->elem_type() != b->elem_type()) return call.Error("A and B differ in element type");
  OC_ASSIGN_OR_RETURN(MatMulShape s, MatMulShapeOf(call, a->dims(), b->dims()));
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, s.out_dims).status());
  int32_t type = a->elem_type();
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, type);
  VisitElementType(type, [&](auto v) {
    using T = decltype(v);
    if constexpr (!std::is_same_v<T, bool> && sizeof(T) >= 2) {
      using C = Accumulate<T>;
      std::vector<int64_t> dims = s.out_dims;
      std::vector<C> result(nn::Product(dims, 0, dims.size()));
      if constexpr (std::is_same_v<T, C>) {
        BatchedProduct<C>(s, a->data<T>().data(), b->data<T>().data(), result.data());
      } else {
        std::vector<C> wa = Widen<C, T>(*a), wb = Widen<C, T>(*b);
        BatchedProduct<C>(s, wa.data(), wb.data(), result.data());
      }
      out = nn::StoreTensor<T, C>(type, dims, result);
    }
  });
  return nn::One(std::move(out));
}

// Gemm: Y = alpha * A' B' + beta * C with A', B' optionally transposed; C
// broadcasts to Y unidirectionally (from 7; before, with broadcast = 1, or
// equal shapes).
Outputs GemmKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* a, nn::Required(call, 0, "A"));
  OC_ASSIGN_OR_RETURN(const Tensor* b, nn::Required(call, 1, "B"));
  const Tensor* c = call.input(2);
  if (c == nullptr && call.since_version() < 11) return call.Error("input C is absent");
  if (a->rank() != 2 || b->rank() != 2) return call.Error("A and B must be matrices");
  bool trans_a = call.Int("transA", 0) != 0, trans_b = call.Int("transB", 0) != 0;
  int64_t m = a->dims()[trans_a ? 1 : 0], k = a->dims()[trans_a ? 0 : 1];
  int64_t kb = b->dims()[trans_b ? 1 : 0], n = b->dims()[trans_b ? 0 : 1];
  if (k != kb) return call.Error(absl::StrCat("the inner dims differ (", k, " and ", kb, ")"));
  std::vector<int64_t> dims = {m, n};
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, dims).status());
  if (c != nullptr) {
    bool broadcasts = call.since_version() >= 7 || call.Int("broadcast", 0) != 0;
    if (!broadcasts && c->dims() != dims) {
      return call.Error("C's shape differs from the output's and broadcast is 0");
    }
    absl::StatusOr<std::vector<int64_t>> to = BroadcastDims({dims, c->dims()});
    if (!to.ok() || *to != dims || c->rank() > 2) {
      return call.Error("C does not broadcast to the output's shape");
    }
  }
  float alpha = call.Float("alpha", 1), beta = call.Float("beta", 1);
  int32_t type = a->elem_type();
  if (b->elem_type() != type || (c != nullptr && c->elem_type() != type)) {
    return call.Error("the inputs differ in element type");
  }
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, type);
  VisitElementType(type, [&](auto v) {
    using T = decltype(v);
    if constexpr (!std::is_same_v<T, bool> && sizeof(T) >= 2) {
      using C = Accumulate<T>;
      std::vector<C> wa = Widen<C, T>(*a), wb = Widen<C, T>(*b);
      nn::Matrix<C> y(m, n);
      nn::Multiply(wa.data(), wb.data(), y.data(), m, k, n,
                   {.transpose_a = trans_a, .transpose_b = trans_b});
      if constexpr (std::is_floating_point_v<C>) {
        y *= static_cast<C>(alpha);
        if (c != nullptr && beta != 0) {
          std::vector<C> wc = Widen<C, T>(*c);
          BroadcastCursor cursor(dims, c->dims());
          C* yd = y.data();
          for (int64_t i = 0; i < m * n; ++i, cursor.Next()) {
            yd[i] += static_cast<C>(beta) * wc[cursor.offset()];
          }
        }
        out = nn::StoreTensor<T, C>(type, dims, absl::Span<const C>(y.data(), m * n));
      } else {
        // Integer Gemm: alpha and beta must be whole numbers.
        if (alpha != std::trunc(alpha) || beta != std::trunc(beta) || std::fabs(alpha) > 1e9 ||
            std::fabs(beta) > 1e9) {
          out = call.Error("integer Gemm with a fractional alpha or beta");
          return;
        }
        C ca = static_cast<C>(static_cast<int64_t>(alpha));
        C cb = static_cast<C>(static_cast<int64_t>(beta));
        C* yd = y.data();
        std::vector<C> wc = c != nullptr ? Widen<C, T>(*c) : std::vector<C>();
        BroadcastCursor cursor(dims, c != nullptr ? c->dims() : dims);
        for (int64_t i = 0; i < m * n; ++i, cursor.Next()) {
          yd[i] = static_cast<C>(yd[i] * ca);
          if (c != nullptr) yd[i] = static_cast<C>(yd[i] + cb * wc[cursor.offset()]);
        }
        out = nn::StoreTensor<T, C>(type, dims, absl::Span<const C>(y.data(), m * n));
      }
    }
  });
  return nn::One(std::move(out));
}

// The 8-bit integers of `t` (int8 or uint8) as int32, less `zero_point`
// (a scalar, or one per row (`per_row`) or per column of the matrix view).
absl::StatusOr<std::vector<int32_t>> Offset(const KernelCall& call, const Tensor& t,
                                            const Tensor* zero_point, bool per_row) {
  OC_ASSIGN_OR_RETURN(auto elements, nn::Int8Elements(call, t, zero_point));
  if (zero_point != nullptr && zero_point->elem_type() != t.elem_type()) {
    return call.Error("a zero point's type differs from its input's");
  }
  auto& [values, zp] = elements;
  if (zero_point == nullptr) return std::move(values);
  if (zp.size() == 1) {
    for (int32_t& v : values) v -= zp[0];
    return std::move(values);
  }
  if (t.rank() < 2) return call.Error("a per-axis zero point needs a matrix input");
  int64_t rows = t.dims()[t.rank() - 2], cols = t.dims().back();
  int64_t want = per_row ? rows : cols;
  if (static_cast<int64_t>(zp.size()) != want) {
    return call.Error(absl::StrCat("a zero point holds ", zp.size(), " values, not ", want));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t within = static_cast<int64_t>(i) % (rows * cols);
    values[i] -= zp[per_row ? within / cols : within % cols];
  }
  return std::move(values);
}

// The int32 product of the offset 8-bit inputs (wrapping, never UB).
absl::StatusOr<std::pair<std::vector<int32_t>, MatMulShape>> IntegerProduct(
    const KernelCall& call, const Tensor& a, const Tensor* a_zp, const Tensor& b,
    const Tensor* b_zp) {
  OC_ASSIGN_OR_RETURN(MatMulShape s, MatMulShapeOf(call, a.dims(), b.dims()));
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, s.out_dims).status());
  OC_ASSIGN_OR_RETURN(std::vector<int32_t> va, Offset(call, a, a_zp, true));
  OC_ASSIGN_OR_RETURN(std::vector<int32_t> vb, Offset(call, b, b_zp, false));
  std::vector<uint32_t> ua(va.begin(), va.end()), ub(vb.begin(), vb.end());
  std::vector<uint32_t> product(nn::Product(s.out_dims, 0, s.out_dims.size()));
  BatchedProduct<uint32_t>(s, ua.data(), ub.data(), product.data());
  return std::make_pair(std::vector<int32_t>(product.begin(), product.end()), s);
}

Outputs MatMulIntegerKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* a, nn::Required(call, 0, "A"));
  OC_ASSIGN_OR_RETURN(const Tensor* b, nn::Required(call, 1, "B"));
  OC_ASSIGN_OR_RETURN(auto product, IntegerProduct(call, *a, call.input(2), *b, call.input(3)));
  Tensor out(onnx::TensorProto::INT32, product.second.out_dims);
  std::copy(product.first.begin(), product.first.end(), out.data<int32_t>().begin());
  return nn::One(std::move(out));
}

// A scale input's single value, rounded as its storage type computes.
absl::StatusOr<float> ScalarScale(const KernelCall& call, const Tensor* t, const char* name) {
  if (t == nullptr) return call.Error(absl::StrCat("input ", name, " is absent"));
  if (t->size() != 1) {
    return call.Error(absl::StrCat(name, " must hold one value (per-axis scales are not "
                                         "supported by this kernel)"));
  }
  OC_ASSIGN_OR_RETURN(RealView<float> v, RealView<float>::Of(*t));
  return v[0];
}

// QLinearMatMul: the int32 product of the offset inputs times
// a_scale * b_scale / y_scale (rounded as the scales' type computes), plus
// y_zero_point, rounded half to even and saturated.
Outputs QLinearMatMulKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* a, nn::Required(call, 0, "a"));
  OC_ASSIGN_OR_RETURN(const Tensor* b, nn::Required(call, 3, "b"));
  OC_ASSIGN_OR_RETURN(float a_scale, ScalarScale(call, call.input(1), "a_scale"));
  OC_ASSIGN_OR_RETURN(float b_scale, ScalarScale(call, call.input(4), "b_scale"));
  OC_ASSIGN_OR_RETURN(float y_scale, ScalarScale(call, call.input(6), "y_scale"));
  const Tensor* y_zp = call.input(7);
  int32_t scale_type = call.input(1)->elem_type();
  auto round_to_scale_type = [&](float x) {
    if (scale_type == onnx::TensorProto::FLOAT16) return HalfToFloat(FloatToHalf(x));
    if (scale_type == onnx::TensorProto::BFLOAT16) return BHalfToFloat(FloatToBHalf(x));
    return x;
  };
  float multiplier = round_to_scale_type(round_to_scale_type(a_scale * b_scale) / y_scale);
  OC_ASSIGN_OR_RETURN(auto product, IntegerProduct(call, *a, call.input(2), *b, call.input(5)));
  int32_t out_type = y_zp != nullptr ? y_zp->elem_type() : a->elem_type();
  double zp = 0;
  if (y_zp != nullptr) {
    if (y_zp->size() != 1) return call.Error("y_zero_point must hold one value");
    zp = y_zp->elem_type() == onnx::TensorProto::INT8 ? y_zp->data<int8_t>()[0]
                                                      : y_zp->data<uint8_t>()[0];
  }
  double low = out_type == onnx::TensorProto::INT8 ? -128 : 0;
  double high = out_type == onnx::TensorProto::INT8 ? 127 : 255;
  Tensor out(out_type, product.second.out_dims);
  for (size_t i = 0; i < product.first.size(); ++i) {
    double y = std::nearbyint(static_cast<double>(product.first[i]) * multiplier + zp);
    y = std::clamp(y, low, high);
    if (out_type == onnx::TensorProto::INT8) {
      out.data<int8_t>()[i] = static_cast<int8_t>(y);
    } else {
      out.data<uint8_t>()[i] = static_cast<uint8_t>(y);
    }
  }
  return nn::One(std::move(out));
}

// Det of the trailing square matrices, by LU with partial pivoting.
Outputs DetKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  if (x->rank() < 2 || x->dims()[x->rank() - 1] != x->dims()[x->rank() - 2]) {
    return call.Error("X must end in square matrices");
  }
  int64_t n = x->dims().back();
  std::vector<int64_t> dims(x->dims().begin(), x->dims().end() - 2);
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, x->elem_type());
  nn::VisitFloatType(x->elem_type(), [&](auto v) {
    using T = decltype(v);
    using C = nn::Real<T>;
    absl::StatusOr<RealView<C>> values = RealView<C>::Of(*x);
    if (!values.ok()) return;
    int64_t count = nn::Product(dims, 0, dims.size());
    std::vector<C> dets(count);
    for (int64_t i = 0; i < count; ++i) {
      ConstMatrixMap<C> m(values->data() + i * n * n, n, n);
      dets[i] = n == 0 ? C{1} : Eigen::PartialPivLU<nn::Matrix<C>>(m).determinant();
    }
    out = nn::StoreTensor<T, C>(x->elem_type(), dims, dets);
  });
  return nn::One(std::move(out));
}

// ---- Einsum ----

// Parses `equation` for operands of `ranks`: each operand's subscripts
// and the output's, "..." expanded to digits standing in for the
// broadcast dims (right-aligned); an implicit output is the ellipsis dims
// then the letters used once, sorted.
absl::Status ParseEquation(const KernelCall& call, std::string equation,
                           const std::vector<int64_t>& ranks, std::vector<std::string>& inputs,
                           std::string& output) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms = absl::StrSplit(lhs, ',');
  if (terms.size() != ranks.size()) {
    return call.Error(absl::StrCat("the equation names ", terms.size(), " operands, not ",
                                   ranks.size()));
  }
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    size_t dots = terms[i].find("...");
    int64_t named = static_cast<int64_t>(terms[i].size()) - (dots == std::string::npos ? 0 : 3);
    if (dots == std::string::npos ? named != ranks[i] : named > ranks[i]) {
      return call.Error("an operand's subscripts do not match its rank");
    }
    if (dots != std::string::npos) ellipsis_rank = std::max(ellipsis_rank, ranks[i] - named);
  }
  if (ellipsis_rank > 10) return call.Error("'...' stands for more than 10 dims");
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string& t = terms[i];
    size_t dots = t.find("...");
    if (dots != std::string::npos) {
      int64_t e = ranks[i] - (static_cast<int64_t>(t.size()) - 3);
      std::string stand_in;
      for (int64_t j = ellipsis_rank - e; j < ellipsis_rank; ++j) {
        stand_in.push_back(static_cast<char>('0' + j));
      }
      t = t.substr(0, dots) + stand_in + t.substr(dots + 3);
    }
    for (char ch : t) {
      if (!std::isalpha(static_cast<unsigned char>(ch)) &&
          !(std::isdigit(static_cast<unsigned char>(ch)) && ch - '0' < ellipsis_rank)) {
        return call.Error(absl::StrCat("the equation holds '", std::string(1, ch), "'"));
      }
    }
  }
  inputs = terms;
  std::string ellipsis;
  for (int64_t j = 0; j < ellipsis_rank; ++j) ellipsis.push_back(static_cast<char>('0' + j));
  if (arrow == std::string::npos) {
    std::map<char, int> uses;
    for (const std::string& t : terms) {
      for (char ch : t) ++uses[ch];
    }
    output = ellipsis;
    for (const auto& [ch, n] : uses) {
      if (n == 1 && std::isalpha(static_cast<unsigned char>(ch))) output.push_back(ch);
    }
  } else {
    std::string rhs = equation.substr(arrow + 2);
    size_t dots = rhs.find("...");
    if (dots != std::string::npos) rhs = rhs.substr(0, dots) + ellipsis + rhs.substr(dots + 3);
    output = rhs;
  }
  return absl::OkStatus();
}

// Einsum by direct summation over every index the equation names: the
// output element at each output index is the sum, over the other indices,
// of the products of the operands' elements (broadcast dims of size 1
// repeat).
template <typename C>
absl::StatusOr<std::vector<C>> EinsumSum(const KernelCall& call,
                                         const std::vector<std::string>& inputs,
                                         const std::string& output,
                                         const std::vector<const Tensor*>& tensors,
                                         const std::vector<absl::Span<const C>>& views,
                                         std::vector<int64_t>& out_dims) {
  std::map<char, int64_t> extent;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t d = 0; d < inputs[i].size(); ++d) {
      char ch = inputs[i][d];
      int64_t dim = tensors[i]->dims()[d];
      auto [it, added] = extent.emplace(ch, dim);
      if (!added && it->second != dim) {
        if (it->second == 1 && std::isdigit(static_cast<unsigned char>(ch))) {
          it->second = dim;
        } else if (!(dim == 1 && std::isdigit(static_cast<unsigned char>(ch)))) {
          return call.Error(absl::StrCat("subscript ", std::string(1, ch), " has dims ",
                                         it->second, " and ", dim));
        }
      }
    }
  }
  for (char ch : output) {
    if (!extent.contains(ch)) return call.Error("the output names a subscript no input has");
  }
  std::string order = output;
  for (const auto& [ch, dim] : extent) {
    if (output.find(ch) == std::string::npos) order.push_back(ch);
  }
  std::vector<int64_t> dims;
  for (char ch : order) dims.push_back(extent[ch]);
  out_dims.assign(dims.begin(), dims.begin() + output.size());
  OC_ASSIGN_OR_RETURN(int64_t out_count, nn::CheckedCount(call, out_dims));
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d != 0 && total > (int64_t{1} << 34) / d) return call.Error("the einsum is too large");
    total *= d;
  }
  // strides[i][k]: operand i's stride along order[k] (0 when absent or 1).
  std::vector<std::vector<int64_t>> strides(inputs.size(), std::vector<int64_t>(order.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    int64_t stride = 1;
    for (size_t d = inputs[i].size(); d-- > 0;) {
      size_t k = order.find(inputs[i][d]);
      if (tensors[i]->dims()[d] != 1) strides[i][k] += stride;
      stride *= tensors[i]->dims()[d];
    }
  }
  std::vector<C> out(out_count, C{0});
  if (total == 0) return out;
  std::vector<int64_t> index(order.size(), 0), offsets(inputs.size(), 0);
  int64_t inner = total / std::max<int64_t>(out_count, 1);
  for (int64_t o = 0; o < out_count; ++o) {
    C sum{0};
    for (int64_t r = 0; r < inner; ++r) {
      C product{1};
      for (size_t i = 0; i < inputs.size(); ++i) product *= views[i][offsets[i]];
      sum += product;
      for (size_t k = order.size(); k-- > 0;) {
        for (size_t i = 0; i < inputs.size(); ++i) offsets[i] += strides[i][k];
        if (++index[k] < dims[k]) break;
        for (size_t i = 0; i < inputs.size(); ++i) offsets[i] -= strides[i][k] * dims[k];
        index[k] = 0;
      }
    }
    out[o] = sum;
  }
  return out;
}

// Einsum of two operands without repeated subscripts within one operand:
// batch (in both and the output), free (in one operand and the output) and
// contracted (in both, not the output) subscripts, each operand permuted to
// [batch, free, contracted] and multiplied as batched matrices on Eigen.
// Returns nullopt when the equation is not of that form.
template <typename C>
std::optional<std::vector<C>> EinsumContraction(const std::vector<std::string>& inputs,
                                                const std::string& output,
                                                const std::vector<const Tensor*>& tensors,
                                                const std::vector<absl::Span<const C>>& views,
                                                std::vector<int64_t>& out_dims) {
  if (inputs.size() != 2) return std::nullopt;
  const std::string &x = inputs[0], &y = inputs[1];
  std::map<char, int64_t> extent;
  for (int i = 0; i < 2; ++i) {
    std::string seen;
    for (size_t d = 0; d < inputs[i].size(); ++d) {
      char ch = inputs[i][d];
      if (seen.find(ch) != std::string::npos) return std::nullopt;
      seen.push_back(ch);
      auto [it, added] = extent.emplace(ch, tensors[i]->dims()[d]);
      if (!added && it->second != tensors[i]->dims()[d]) return std::nullopt;
    }
  }
  std::string batch, free_x, free_y, contracted;
  for (char ch : output) {
    bool in_x = x.find(ch) != std::string::npos, in_y = y.find(ch) != std::string::npos;
    if (in_x && in_y) {
      batch.push_back(ch);
    } else if (in_x) {
      free_x.push_back(ch);
    } else if (in_y) {
      free_y.push_back(ch);
    } else {
      return std::nullopt;
    }
  }
  for (char ch : x) {
    if (output.find(ch) == std::string::npos) {
      if (y.find(ch) == std::string::npos) return std::nullopt;  // summed away alone
      contracted.push_back(ch);
    }
  }
  for (char ch : y) {
    if (output.find(ch) == std::string::npos && x.find(ch) == std::string::npos) {
      return std::nullopt;
    }
  }
  auto size = [&](const std::string& s) {
    int64_t p = 1;
    for (char ch : s) p *= extent[ch];
    return p;
  };
  // Operand `i` permuted to the subscripts `to`.
  auto permute = [&](int i, const std::string& to) {
    const std::string& from = inputs[i];
    std::vector<int64_t> from_strides(from.size(), 1);
    for (size_t d = from.size(); d-- > 1;) {
      from_strides[d - 1] = from_strides[d] * tensors[i]->dims()[d];
    }
    std::vector<int64_t> dims, strides;
    for (char ch : to) {
      size_t d = from.find(ch);
      dims.push_back(tensors[i]->dims()[d]);
      strides.push_back(from_strides[d]);
    }
    int64_t count = nn::Product(dims, 0, dims.size());
    std::vector<C> out(count);
    std::vector<int64_t> index(dims.size(), 0);
    int64_t offset = 0;
    for (int64_t e = 0; e < count; ++e) {
      out[e] = views[i][offset];
      for (size_t k = dims.size(); k-- > 0;) {
        offset += strides[k];
        if (++index[k] < dims[k]) break;
        offset -= strides[k] * dims[k];
        index[k] = 0;
      }
    }
    return out;
  };
  std::vector<C> px = permute(0, batch + free_x + contracted);
  std::vector<C> py = permute(1, batch + contracted + free_y);
  int64_t nb = size(batch), m = size(free_x), k = size(contracted), n = size(free_y);
  std::vector<C> product(nb * m * n);
  for (int64_t b = 0; b < nb; ++b) {
    nn::Multiply(px.data() + b * m * k, py.data() + b * k * n, product.data() + b * m * n, m, k, n);
  }
  // `product` is laid out as batch + free_x + free_y: permute to `output`.
  std::string laid = batch + free_x + free_y;
  std::vector<int64_t> laid_dims;
  for (char ch : laid) laid_dims.push_back(extent[ch]);
  std::vector<int64_t> laid_strides(laid.size(), 1);
  for (size_t d = laid.size(); d-- > 1;) laid_strides[d - 1] = laid_strides[d] * laid_dims[d];
  out_dims.clear();
  std::vector<int64_t> strides;
  for (char ch : output) {
    out_dims.push_back(extent[ch]);
    strides.push_back(laid_strides[laid.find(ch)]);
  }
  std::vector<C> out(product.size());
  ForEachIndex(out_dims, strides, 0,
               [&](int64_t e, int64_t offset) { out[e] = product[offset]; });
  return out;
}

Outputs EinsumKernel(const KernelCall& call) {
  const onnx::AttributeProto* equation = call.attribute("equation");
  if (equation == nullptr) return call.Error("attribute 'equation' is unset");
  if (call.inputs.empty()) return call.Error("Einsum needs an input");
  std::vector<int64_t> ranks;
  for (const Tensor* t : call.inputs) {
    if (t == nullptr) return call.Error("an input is absent");
    if (t->elem_type() != call.inputs[0]->elem_type()) {
      return call.Error("the inputs differ in element type");
    }
    ranks.push_back(t->rank());
  }
  std::vector<std::string> inputs;
  std::string output;
  OC_RETURN_IF_ERROR(ParseEquation(call, equation->s(), ranks, inputs, output));
  int32_t type = call.inputs[0]->elem_type();
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, type);
  VisitElementType(type, [&](auto v) {
    using T = decltype(v);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = std::conditional_t<std::is_integral_v<T>, Accumulate<T>, nn::Real<T>>;
      // Every operand as C (integers widened to wrap), viewed without a
      // copy where the storage is C already.
      std::vector<std::vector<C>> held;
      held.reserve(call.inputs.size());
      std::vector<absl::Span<const C>> views;
      for (const Tensor* t : call.inputs) {
        if constexpr (std::is_same_v<T, C>) {
          views.push_back(t->data<T>());
        } else {
          held.push_back(Widen<C, T>(*t));
          views.push_back(held.back());
        }
      }
      std::vector<int64_t> dims;
      std::optional<std::vector<C>> fast =
          EinsumContraction<C>(inputs, output, call.inputs, views, dims);
      if (fast.has_value()) {
        out = nn::StoreTensor<T, C>(type, dims, *fast);
        return;
      }
      absl::StatusOr<std::vector<C>> sum =
          EinsumSum<C>(call, inputs, output, call.inputs, views, dims);
      if (!sum.ok()) {
        out = sum.status();
        return;
      }
      out = nn::StoreTensor<T, C>(type, dims, *sum);
    }
  });
  return nn::One(std::move(out));
}

}  // namespace onnxconvert::eval::linalg_ops
