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
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/nn_util.h"

namespace onnxconvert::eval::pool_ops {

using nn::Outputs;
using nn::RealView;
using nn::Window;

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

// One bilinear sample of RoiAlign: four plane offsets and their weights
// (all zero where the sample falls outside the plane by more than a pixel).
struct Sample {
  int64_t at[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

Sample BilinearSample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (!(y >= -1.0 && y <= static_cast<double>(height) && x >= -1.0 &&
        x <= static_cast<double>(width))) {
    return s;  // outside, or NaN
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  double hy = 1 - ly, hx = 1 - lx;
  s.at[0] = y_low * width + x_low;
  s.at[1] = y_low * width + x_high;
  s.at[2] = y_high * width + x_low;
  s.at[3] = y_high * width + x_high;
  s.weight[0] = hy * hx;
  s.weight[1] = hy * lx;
  s.weight[2] = ly * hx;
  s.weight[3] = ly * lx;
  return s;
}

// RoiAlign: each region of interest (x1, y1, x2, y2, scaled by
// spatial_scale, shifted half a pixel in half_pixel mode) split into
// output_height x output_width bins, each the average (or max of the
// weighted corners) of a grid of bilinear samples (sampling_ratio per
// side, else ceil(bin size)).
Outputs RoiAlignKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  OC_ASSIGN_OR_RETURN(const Tensor* rois, nn::Required(call, 1, "rois"));
  OC_ASSIGN_OR_RETURN(const Tensor* batch_indices, nn::Required(call, 2, "batch_indices"));
  if (x->rank() != 4 || rois->rank() != 2 || rois->dims()[1] != 4 ||
      batch_indices->rank() != 1 || batch_indices->dims()[0] != rois->dims()[0]) {
    return call.Error("X must be [N, C, H, W], rois [R, 4] and batch_indices [R]");
  }
  const onnx::AttributeProto* mode_attr = call.attribute("mode");
  std::string mode = mode_attr != nullptr ? mode_attr->s() : "avg";
  if (mode != "avg" && mode != "max") return call.Error("mode must be avg or max");
  const onnx::AttributeProto* transform = call.attribute("coordinate_transformation_mode");
  bool half_pixel = call.since_version() >= 16 &&
                    (transform == nullptr || transform->s() == "half_pixel");
  int64_t out_h = call.Int("output_height", 1), out_w = call.Int("output_width", 1);
  int64_t sampling = call.Int("sampling_ratio", 0);
  double scale = call.Float("spatial_scale", 1.0f);
  if (out_h < 1 || out_w < 1 || sampling < 0 || sampling > 1024) {
    return call.Error("output_height, output_width or sampling_ratio out of range");
  }
  int64_t count_rois = rois->dims()[0], channels = x->dims()[1];
  int64_t height = x->dims()[2], width = x->dims()[3];
  std::vector<int64_t> dims = {count_rois, channels, out_h, out_w};
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, dims).status());
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> batch, ToInt64s(*batch_indices));
  OC_ASSIGN_OR_RETURN(RealView<double> vx, RealView<double>::Of(*x));
  OC_ASSIGN_OR_RETURN(RealView<double> vr, RealView<double>::Of(*rois));
  double offset = half_pixel ? 0.5 : 0.0;
  std::vector<double> y(nn::Product(dims, 0, 4));
  for (int64_t r = 0; r < count_rois; ++r) {
    if (batch[r] < 0 || batch[r] >= x->dims()[0]) {
      return call.Error(absl::StrCat("batch index ", batch[r], " is out of range"));
    }
    double start_w = vr[r * 4] * scale - offset, start_h = vr[r * 4 + 1] * scale - offset;
    double end_w = vr[r * 4 + 2] * scale - offset, end_h = vr[r * 4 + 3] * scale - offset;
    double roi_w = end_w - start_w, roi_h = end_h - start_h;
    if (!half_pixel) {
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    double bin_h = roi_h / static_cast<double>(out_h), bin_w = roi_w / static_cast<double>(out_w);
    double grid_h_real = sampling > 0 ? sampling : std::ceil(bin_h);
    double grid_w_real = sampling > 0 ? sampling : std::ceil(bin_w);
    if (!(grid_h_real >= 0 && grid_h_real <= 4096 && grid_w_real >= 0 && grid_w_real <= 4096)) {
      return call.Error("a region's sampling grid is too large");
    }
    int64_t grid_h = static_cast<int64_t>(grid_h_real), grid_w = static_cast<int64_t>(grid_w_real);
    double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
    for (int64_t ph = 0; ph < out_h; ++ph) {
      for (int64_t pw = 0; pw < out_w; ++pw) {
        std::vector<Sample> samples;
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          double yy = start_h + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            double xx = start_w + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(grid_w);
            samples.push_back(BilinearSample(yy, xx, height, width));
          }
        }
        for (int64_t c = 0; c < channels; ++c) {
          const double* plane = vx.data() + (batch[r] * channels + c) * height * width;
          double value = 0;
          bool first = true;
          for (const Sample& s : samples) {
            if (mode == "avg") {
              for (int k = 0; k < 4; ++k) value += s.weight[k] * plane[s.at[k]];
            } else {
              double v = s.weight[0] * plane[s.at[0]];
              for (int k = 1; k < 4; ++k) v = std::max(v, s.weight[k] * plane[s.at[k]]);
              value = first ? v : std::max(value, v);
              first = false;
            }
          }
          if (mode == "avg") value /= count;
          y[((r * channels + c) * out_h + ph) * out_w + pw] = value;
        }
      }
    }
  }
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, x->elem_type());
  nn::VisitFloatType(x->elem_type(), [&](auto v) {
    out = nn::StoreTensor<decltype(v), double>(x->elem_type(), dims, y);
  });
  return nn::One(std::move(out));
}

constinit const FlagInstances<Pool, 3> kPool =
    FlagInstancesOf<Pool, 3>([](auto kind, auto global) -> KernelFn {
      return PoolKernel<decltype(kind)::value, decltype(global)::value>;
    });

}  // namespace onnxconvert::eval::pool_ops
