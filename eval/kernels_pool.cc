// Pooling: MaxPool (Indices output, storage_order, ceil_mode, dilations),
// AveragePool (count_include_pad), LpPool, GlobalMaxPool,
// GlobalAveragePool, GlobalLpPool and MaxUnpool.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "eval/kernel.h"
#include "eval/nn_util.h"
#include "ir/status_macros.h"

namespace onnxconvert::eval {
namespace {

using nn::Outputs;
using nn::RealView;
using nn::Window;

enum class Pool { kMax, kAverage, kLp };

// One window's elements: the input offsets (within a plane) it covers and
// how many window positions fall on the explicit pads.
struct WindowCells {
  std::vector<int64_t> offsets;  // row-major offsets within the plane
  std::vector<int64_t> spatial;  // per offset, its position flattened column-major
  int64_t with_pads = 0;         // cells inside the input or its pads
};

// Fills `cells` for the window at output position `o`.
void CellsAt(const Window& w, absl::Span<const int64_t> o, bool column_major, WindowCells& cells) {
  int64_t rank = w.rank();
  cells.offsets.assign(1, 0);
  cells.spatial.assign(1, 0);
  cells.with_pads = 1;
  int64_t row_stride = 1, col_stride = 1;
  std::vector<int64_t> row_strides(rank), col_strides(rank);
  for (int64_t d = rank - 1; d >= 0; --d) {
    row_strides[d] = row_stride;
    row_stride *= w.input[d];
  }
  for (int64_t d = 0; d < rank; ++d) {
    col_strides[d] = col_stride;
    col_stride *= w.input[d];
  }
  for (int64_t d = 0; d < rank; ++d) {
    std::vector<int64_t> along;
    int64_t padded = 0;
    for (int64_t k = 0; k < w.kernel[d]; ++k) {
      int64_t i = o[d] * w.strides[d] - w.pads[d] + k * w.dilations[d];
      if (i >= -w.pads[d] && i < w.input[d] + w.pads[rank + d]) ++padded;
      if (i >= 0 && i < w.input[d]) along.push_back(i);
    }
    cells.with_pads *= padded;
    std::vector<int64_t> offsets, spatial;
    for (size_t c = 0; c < cells.offsets.size(); ++c) {
      for (int64_t i : along) {
        offsets.push_back(cells.offsets[c] + i * row_strides[d]);
        spatial.push_back(cells.spatial[c] + i * (column_major ? col_strides[d] : row_strides[d]));
      }
    }
    cells.offsets = std::move(offsets);
    cells.spatial = std::move(spatial);
  }
}

// Pools every [N, C] plane of `x` over window `w`; `indices` (when not
// null) receives MaxPool's argmax positions.
template <typename C>
std::vector<C> PoolPlanes(const Window& w, int64_t planes, const C* x, Pool kind,
                          bool count_include_pad, double p, bool column_major,
                          std::vector<int64_t>* indices, bool& empty_window) {
  int64_t rank = w.rank();
  int64_t image = nn::Product(w.input, 0, rank);
  int64_t positions = nn::Product(w.output, 0, rank);
  std::vector<C> y(planes * positions);
  if (indices != nullptr) indices->assign(y.size(), 0);
  std::vector<int64_t> o(rank, 0);
  WindowCells cells;
  for (int64_t q = 0; q < positions; ++q) {
    CellsAt(w, o, column_major, cells);
    for (int64_t plane = 0; plane < planes; ++plane) {
      const C* xp = x + plane * image;
      C value{0};
      if (kind == Pool::kMax) {
        value = -std::numeric_limits<C>::infinity();
        int64_t best = -1;
        for (size_t c = 0; c < cells.offsets.size(); ++c) {
          C e = xp[cells.offsets[c]];
          if (best < 0 || e > value) {
            value = e;
            best = static_cast<int64_t>(c);
          }
        }
        if (best < 0) {
          empty_window = true;
          value = C{0};
        }
        if (indices != nullptr && best >= 0) {
          (*indices)[plane * positions + q] = plane * image + cells.spatial[best];
        }
      } else if (kind == Pool::kAverage) {
        C sum{0};
        for (int64_t offset : cells.offsets) sum += xp[offset];
        int64_t count = count_include_pad ? cells.with_pads
                                          : static_cast<int64_t>(cells.offsets.size());
        value = count == 0 ? std::numeric_limits<C>::quiet_NaN() : sum / static_cast<C>(count);
      } else {
        C sum{0};
        for (int64_t offset : cells.offsets) {
          sum += static_cast<C>(std::pow(std::fabs(xp[offset]), p));
        }
        value = static_cast<C>(std::pow(sum, 1.0 / p));
      }
      y[plane * positions + q] = value;
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++o[d] < w.output[d]) break;
      o[d] = 0;
    }
  }
  return y;
}

// The window of a pool over `x` (kernel_shape required; global pools
// cover the whole plane).
absl::StatusOr<Window> PoolWindow(const KernelCall& call, const Tensor& x, bool global) {
  if (x.rank() < 3) return call.Error("X must have rank 3 or more");
  absl::Span<const int64_t> spatial = absl::MakeConstSpan(x.dims()).subspan(2);
  if (global) {
    Window w;
    w.input.assign(spatial.begin(), spatial.end());
    w.kernel = w.input;
    w.strides.assign(spatial.size(), 1);
    w.dilations.assign(spatial.size(), 1);
    w.pads.assign(2 * spatial.size(), 0);
    w.output.assign(spatial.size(), 1);
    return w;
  }
  std::optional<std::vector<int64_t>> kernel = call.Ints("kernel_shape");
  if (!kernel) return call.Error("attribute 'kernel_shape' is unset");
  bool ceil = call.Int("ceil_mode", 0) != 0;
  return nn::MakeWindow(call, spatial, *kernel, ceil ? nn::Rounding::kCeil : nn::Rounding::kFloor);
}

template <Pool kKind, bool kGlobal>
Outputs PoolKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  OC_ASSIGN_OR_RETURN(Window w, PoolWindow(call, *x, kGlobal));
  std::vector<int64_t> dims = {x->dims()[0], x->dims()[1]};
  dims.insert(dims.end(), w.output.begin(), w.output.end());
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, dims).status());
  bool count_include_pad = call.Int("count_include_pad", 0) != 0;
  double p = 2;
  if (const onnx::AttributeProto* attr = call.attribute("p")) {
    p = attr->has_i() ? static_cast<double>(attr->i()) : attr->f();
  }
  if (kKind == Pool::kLp && !(p > 0)) return call.Error("p must be positive");
  bool column_major = call.Int("storage_order", 0) != 0;
  bool want_indices = kKind == Pool::kMax && call.node.output_size() > 1 &&
                      !call.node.output(1).empty();
  std::vector<int64_t> indices;
  int64_t planes = x->dims()[0] * x->dims()[1];
  int32_t type = x->elem_type();
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, type);
  auto run = [&](auto v) {
    using T = decltype(v);
    using C = std::conditional_t<std::is_integral_v<T>, float, nn::Real<T>>;
    absl::StatusOr<RealView<C>> vx = RealView<C>::Of(*x);
    if (!vx.ok()) return;
    bool empty_window = false;
    std::vector<C> y = PoolPlanes<C>(w, planes, vx->data(), kKind, count_include_pad, p,
                                     column_major, want_indices ? &indices : nullptr,
                                     empty_window);
    if (empty_window) {
      out = call.Error("a window covers only pads");
      return;
    }
    out = nn::StoreTensor<T, C>(type, dims, y);
  };
  if (!nn::VisitFloatType(type, run) && kKind == Pool::kMax) {
    if (type == onnx::TensorProto::INT8) run(int8_t{});
    if (type == onnx::TensorProto::UINT8) run(uint8_t{});
  }
  if (!out.ok()) return out.status();
  std::vector<Tensor> outputs;
  outputs.push_back(*std::move(out));
  if (want_indices) {
    Tensor index(onnx::TensorProto::INT64, dims);
    std::copy(indices.begin(), indices.end(), index.data<int64_t>().begin());
    outputs.push_back(std::move(index));
  }
  return outputs;
}

// MaxUnpool: X's values placed at the flat positions I gives in a tensor
// of zeros of the pool's input shape (stride * (in - 1) + kernel - pads),
// which lands at the origin of the output_shape input when given.
Outputs MaxUnpoolKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  OC_ASSIGN_OR_RETURN(const Tensor* index, nn::Required(call, 1, "I"));
  const Tensor* shape = call.input(2);
  if (x->rank() < 3 || index->dims() != x->dims() ||
      index->elem_type() != onnx::TensorProto::INT64) {
    return call.Error("I must be int64 of X's shape, rank 3 or more");
  }
  int64_t rank = x->rank() - 2;
  std::optional<std::vector<int64_t>> kernel = call.Ints("kernel_shape");
  if (!kernel || static_cast<int64_t>(kernel->size()) != rank) {
    return call.Error("kernel_shape must name each spatial dim");
  }
  std::vector<int64_t> strides = call.Ints("strides").value_or(std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads = call.Ints("pads").value_or(std::vector<int64_t>(2 * rank, 0));
  if (static_cast<int64_t>(strides.size()) != rank ||
      static_cast<int64_t>(pads.size()) != 2 * rank) {
    return call.Error("strides or pads do not match the spatial dims");
  }
  std::vector<int64_t> inferred = {x->dims()[0], x->dims()[1]};
  for (int64_t d = 0; d < rank; ++d) {
    if (strides[d] < 1 || strides[d] > (1 << 20) || (*kernel)[d] < 1 ||
        (*kernel)[d] > (1 << 20) || pads[d] < 0 || pads[rank + d] < 0) {
      return call.Error("kernel_shape, strides or pads out of range");
    }
    inferred.push_back(strides[d] * (x->dims()[d + 2] - 1) + (*kernel)[d] - pads[d] -
                       pads[rank + d]);
  }
  std::vector<int64_t> dims = inferred;
  if (shape != nullptr) {
    OC_ASSIGN_OR_RETURN(dims, ToInt64s(*shape));
    if (dims.size() != inferred.size()) return call.Error("output_shape must name every dim");
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] < inferred[d]) {
        return call.Error("output_shape is smaller than the pool's input shape");
      }
    }
  }
  OC_ASSIGN_OR_RETURN(int64_t inferred_count, nn::CheckedCount(call, inferred));
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, dims).status());
  int size = ElementSize(x->elem_type());
  if (size == 0) return nn::UnsupportedType(call, x->elem_type());
  Tensor out(x->elem_type(), dims);
  // The output offset of each element of the inferred shape.
  std::vector<int64_t> out_strides(dims.size(), 1);
  for (size_t d = dims.size() - 1; d > 0; --d) out_strides[d - 1] = out_strides[d] * dims[d];
  absl::Span<const int64_t> at = index->data<int64_t>();
  const uint8_t* from = x->data<uint8_t>().data();
  uint8_t* to = out.data<uint8_t>().data();
  for (int64_t i = 0; i < x->size(); ++i) {
    if (at[i] < 0 || at[i] >= inferred_count) {
      return call.Error(absl::StrCat("index ", at[i], " is outside the output"));
    }
    int64_t rest = at[i], offset = 0;
    for (size_t d = inferred.size(); d-- > 0;) {
      offset += (rest % inferred[d]) * out_strides[d];
      rest /= inferred[d];
    }
    std::memcpy(to + offset * size, from + i * size, size);
  }
  return nn::One(std::move(out));
}

constexpr int kLast = 1 << 20;

constexpr KernelRow kRows[] = {
    {"", "MaxPool", 1, kLast, PoolKernel<Pool::kMax, false>},
    {"", "AveragePool", 1, kLast, PoolKernel<Pool::kAverage, false>},
    {"", "LpPool", 1, kLast, PoolKernel<Pool::kLp, false>},
    {"", "GlobalMaxPool", 1, kLast, PoolKernel<Pool::kMax, true>},
    {"", "GlobalAveragePool", 1, kLast, PoolKernel<Pool::kAverage, true>},
    {"", "GlobalLpPool", 1, kLast, PoolKernel<Pool::kLp, true>},
    {"", "MaxUnpool", 9, kLast, MaxUnpoolKernel},
};

}  // namespace

absl::Span<const KernelRow> PoolKernels() { return kRows; }

}  // namespace onnxconvert::eval
