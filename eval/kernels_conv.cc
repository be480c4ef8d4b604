// Convolutions on Eigen (im2col then a matrix product per image and group):
// Conv (1-3 and more spatial dims, groups, strides, dilations, pads,
// auto_pad), ConvTranspose (col2im; output_padding, output_shape),
// ConvInteger, QLinearConv and DeformConv.

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <tuple>
#include <cmath>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/nn_util.h"

namespace onnxconvert::eval::conv_ops {

using nn::Outputs;
using nn::RealView;
using nn::Window;

// Calls `visit(row, c, kk, p, first, lo, hi)` for every row of the im2col
// matrix of one channel group of `channels` channels: the matrix is
// [channels * kernel, output] and each of its rows splits into rows of the
// output's last dim, `row` the index of such a row (its elements begin at
// row * output[last]), for channel `c`, kernel offset `kk` and output row
// `p` (the index over the output dims before the last). Element x of the
// row reads element first + x * strides[last] of the [channels, input...]
// image when lo <= x < hi and a pad otherwise; lo == hi == 0 when the
// whole row is on a pad (then `first` is meaningless).
// The steps i in [0, n) whose position start + i * step lies in
// [0, extent), as [lo, hi) (empty: lo == hi): the outputs a kernel offset
// reads inside the input, or the kernel offsets an output does.
std::pair<int64_t, int64_t> StepsInside(int64_t start, int64_t step, int64_t extent,
                                        int64_t n) {
  int64_t lo = start >= 0 ? 0 : (-start + step - 1) / step;
  int64_t hi = extent - start <= 0 ? 0 : (extent - start + step - 1) / step;
  lo = std::min(lo, n);
  hi = std::min(hi, n);
  return {lo, std::max(hi, lo)};
}

template <typename F>
void WalkPatchRows(const Window& w, int64_t channels, F&& visit) {
  int64_t rank = w.rank();
  int64_t kernel_size = nn::Product(w.kernel, 0, rank);
  int64_t positions = nn::Product(w.output, 0, rank);
  int64_t image = nn::Product(w.input, 0, rank);
  int64_t in_strides[8], k[8], o[8];
  std::vector<int64_t> heap;
  int64_t* buf = nullptr;
  if (rank > 8) {
    heap.resize(3 * rank);
    buf = heap.data();
  }
  int64_t* ins = buf ? buf : in_strides;
  int64_t* kv = buf ? buf + rank : k;
  int64_t* ov = buf ? buf + 2 * rank : o;
  ins[rank - 1] = 1;
  for (int64_t d = rank - 1; d > 0; --d) ins[d - 1] = ins[d] * w.input[d];
  int64_t last = rank - 1;
  int64_t width = w.output[last];
  int64_t outer = width > 0 ? positions / width : 0;
  int64_t stride = w.strides[last], in_last = w.input[last];
  int64_t mid = last - 1;
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c) {
    std::fill(kv, kv + rank, 0);
    for (int64_t kk = 0; kk < kernel_size; ++kk) {
      // The last dim's window start and the output range inside the input
      // are the same for every row of this kernel offset.
      int64_t start = kv[last] * w.dilations[last] - w.pads[last];
      auto [lo, hi] = StepsInside(start, stride, in_last, width);
      // The same for the dim before the last (`mid`), whose rows step
      // through the input by a fixed offset; the dims before it are walked
      // per block of `mid_n` rows.
      int64_t mid_start = 0, mid_stride = 0, mid_step = 0, mid_n = 1, rlo = 0, rhi = 1;
      if (mid >= 0) {
        mid_start = kv[mid] * w.dilations[mid] - w.pads[mid];
        mid_stride = w.strides[mid];
        mid_step = ins[mid] * mid_stride;
        mid_n = w.output[mid];
        std::tie(rlo, rhi) = StepsInside(mid_start, mid_stride, w.input[mid], mid_n);
      }
      if (lo == hi) rlo = rhi = 0;
      std::fill(ov, ov + rank, 0);
      for (int64_t p = 0; p < outer;) {
        // The offset of the block's start over the dims before `mid`.
        int64_t base = c * image + start + (mid >= 0 ? mid_start * ins[mid] : 0);
        bool inside = true;
        for (int64_t d = 0; d < mid; ++d) {
          int64_t i = ov[d] * w.strides[d] - w.pads[d] + kv[d] * w.dilations[d];
          inside = inside && i >= 0 && i < w.input[d];
          base += i * ins[d];
        }
        int64_t in_lo = inside ? rlo : 0, in_hi = inside ? rhi : 0;
        for (int64_t r = 0; r < in_lo; ++r, ++p, ++row) {
          visit(row, c, kk, p, int64_t{0}, int64_t{0}, int64_t{0});
        }
        for (int64_t r = in_lo; r < in_hi; ++r, ++p, ++row) {
          visit(row, c, kk, p, base + r * mid_step, lo, hi);
        }
        for (int64_t r = in_hi; r < mid_n; ++r, ++p, ++row) {
          visit(row, c, kk, p, int64_t{0}, int64_t{0}, int64_t{0});
        }
        for (int64_t d = mid - 1; d >= 0; --d) {
          if (++ov[d] < w.output[d]) break;
          ov[d] = 0;
        }
      }
      for (int64_t d = last; d >= 0; --d) {
        if (++kv[d] < w.kernel[d]) break;
        kv[d] = 0;
      }
    }
  }
}

// Fills `cols` with the im2col matrix ([channels * kernel, output]) of the
// `channels` channels of image `x`: whole runs of input rows, zeros for
// the pads.
template <typename C>
void GatherPatches(const Window& w, int64_t channels, const C* x, C* cols) {
  int64_t width = w.output[w.rank() - 1];
  int64_t stride = w.strides[w.rank() - 1];
  WalkPatchRows(w, channels,
                [&](int64_t row, int64_t, int64_t, int64_t, int64_t first, int64_t lo, int64_t hi) {
                  C* __restrict out = cols + row * width;
                  const int64_t step = stride;
                  std::fill(out, out + lo, C{0});
                  if (step == 1) {
                    std::copy(x + first + lo, x + first + hi, out + lo);
                  } else {
                    const C* __restrict in = x + first;
                    for (int64_t i = lo; i < hi; ++i) out[i] = in[i * step];
                  }
                  std::fill(out + hi, out + width, C{0});
                });
}

// Adds bias[o] to each element of row o of the `rows` rows of `width`
// elements at `y`.
template <typename C>
void AddRowBias(C* y, const C* bias, int64_t rows, int64_t width) {
  for (int64_t o = 0; o < rows; ++o) {
    for (int64_t p = 0; p < width; ++p) y[o * width + p] += bias[o];
  }
}

// The scratch buffer of the thread for `C` (the im2col matrices).
template <typename C>
std::vector<C>& ScratchBuffer() {
  thread_local std::vector<C> buffer;
  return buffer;
}

// A scratch buffer of at least `n` elements, reused across calls on the
// same thread; its contents are unspecified.
template <typename C>
C* Scratch(int64_t n) {
  std::vector<C>& buffer = ScratchBuffer<C>();
  if (static_cast<int64_t>(buffer.size()) < n) {
    buffer = std::vector<C>();
    buffer.resize(n);
  }
  return buffer.data();
}

// Releases the scratch buffer once it is past 8 MB, so that one large
// convolution does not hold its im2col matrix for the thread's life.
template <typename C>
void TrimScratch() {
  std::vector<C>& buffer = ScratchBuffer<C>();
  if (buffer.size() * sizeof(C) > (size_t{8} << 20)) buffer = std::vector<C>();
}

// Whether the window reads each input element once, in order (1x1
// kernels, unit strides, no pads): the image is its own im2col matrix.
bool IsPointwise(const Window& w) {
  for (int64_t d = 0; d < w.rank(); ++d) {
    if (w.kernel[d] != 1 || w.strides[d] != 1 || w.pads[d] != 0 || w.pads[w.rank() + d] != 0) {
      return false;
    }
  }
  return true;
}

// The layout of a convolution: N images of C channels in G groups to M
// output channels.
struct ConvShape {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
};

// Depthwise convolution (one input channel per group): each output row
// is summed in place, one kernel offset at a time, over the input row's
// run inside the window. `y` must hold zeros.
template <typename C>
void ConvolveDepthwise(const ConvShape& s, const Window& w, const C* x, const C* weights,
                       C* y) {
  int64_t rank = w.rank();
  int64_t image = nn::Product(w.input, 0, rank);
  int64_t positions = nn::Product(w.output, 0, rank);
  int64_t kernel_size = nn::Product(w.kernel, 0, rank);
  int64_t width = w.output[rank - 1];
  int64_t stride = w.strides[rank - 1];
  int64_t mg = s.out_channels / s.group;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t g = 0; g < s.group; ++g) {
      const C* xg = x + (n * s.in_channels + g) * image;
      for (int64_t j = 0; j < mg; ++j) {
        int64_t m = g * mg + j;
        const C* wm = weights + m * kernel_size;
        C* ym = y + (n * s.out_channels + m) * positions;
        WalkPatchRows(w, 1,
                      [&](int64_t, int64_t, int64_t kk, int64_t p, int64_t first, int64_t lo,
                          int64_t hi) {
                        // Locals, so that the stores to `out` cannot alias them.
                        const C wk = wm[kk];
                        const int64_t step = stride;
                        C* __restrict out = ym + p * width;
                        const C* __restrict in = xg + first;
                        // Eigen's array maps, which vectorize at -O2.
                        using Row = Eigen::Array<C, Eigen::Dynamic, 1>;
                        Eigen::Map<Row> dst(out + lo, hi - lo);
                        if (step == 1) {
                          dst += wk * Eigen::Map<const Row>(in + lo, hi - lo);
                        } else {
                          dst += wk * Eigen::Map<const Row, 0, Eigen::InnerStride<>>(
                                          in + lo * step, hi - lo, Eigen::InnerStride<>(step));
                        }
                      });
      }
    }
  }
}

// y[n, m, out...] = sum over the group's channels and kernel of
// w[m, c, k...] x[n, c, window...], on Eigen per image and group (C is the
// compute type; integer types wrap). `bias` (M values) is added when set.
// `y` must hold zeros.
template <typename C>
void Convolve(const ConvShape& s, const Window& w, const C* x, const C* weights, const C* bias,
              C* y) {
  int64_t rank = w.rank();
  int64_t image = nn::Product(w.input, 0, rank);
  int64_t positions = nn::Product(w.output, 0, rank);
  int64_t kernel_size = nn::Product(w.kernel, 0, rank);
  int64_t cg = s.in_channels / s.group, mg = s.out_channels / s.group;
  bool pointwise = IsPointwise(w);
  if (cg == 1 && !pointwise) {
    ConvolveDepthwise(s, w, x, weights, y);
  } else {
    C* cols = pointwise ? nullptr : Scratch<C>(cg * kernel_size * positions);
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t g = 0; g < s.group; ++g) {
        const C* xg = x + (n * s.in_channels + g * cg) * image;
        if (!pointwise) GatherPatches(w, cg, xg, cols);
        nn::Multiply(weights + g * mg * cg * kernel_size, pointwise ? xg : cols,
                     y + (n * s.out_channels + g * mg) * positions, mg, cg * kernel_size,
                     positions);
      }
    }
    if (!pointwise) TrimScratch<C>();
  }
  if (bias != nullptr) {
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t m = 0; m < s.out_channels; ++m) {
        C* row = y + (n * s.out_channels + m) * positions;
        C b = bias[m];
        for (int64_t i = 0; i < positions; ++i) row[i] += b;
      }
    }
  }
}

// The widest 1-D output the direct path below takes with one input
// channel per group, and with more: past them the per-row paths (which
// vectorize over the output positions) win. The direct path's sums are
// scalar, one chain per output channel of a block; with several channels
// per group the im2col matrix product catches up from 4 outputs on
// (bench/nn_kernels_bench BM_Conv1d).
constexpr int64_t kNarrowWidth = 8;
constexpr int64_t kNarrowWidthGrouped = 3;

// Whether Conv takes the direct 1-D path: one spatial dim and a narrow
// output (per-row im2col bookkeeping would dominate).
bool IsNarrow1D(const ConvShape& s, const Window& w) {
  if (w.rank() != 1 || w.output[0] < 1) return false;
  return w.output[0] <= (s.in_channels == s.group ? kNarrowWidth : kNarrowWidthGrouped);
}

// One block of B output channels of the direct 1-D path: for each output
// position, B sums in double over the group's channels and the kernel
// offsets inside the input (in that order, pads skipped: for one channel
// per group, the order ConvolveDepthwise sums in), plus the bias, each
// rounded once to T. `wm` is the block's first weight row (rows `row`
// apart), `xg` the group's first channel, `ym` the block's first output
// row, `bm` the block's biases (or null).
template <int B, typename T>
void NarrowBlock(const T* xg, const T* wm, const T* bm, T* ym, int64_t in, int64_t row,
                 int64_t cg, int64_t kernel, int64_t dilation, int64_t width,
                 const int64_t* first, const int64_t* klo, const int64_t* khi) {
  for (int64_t o = 0; o < width; ++o) {
    double acc[B];
    for (int b = 0; b < B; ++b) acc[b] = 0;
    const int64_t lo = klo[o], hi = khi[o];
    const T* xo = xg + first[o];
    for (int64_t c = 0; c < cg; ++c) {
      const T* __restrict xc = xo + c * in;
      const T* __restrict wc = wm + c * kernel;
      if (dilation == 1) {
        for (int64_t k = lo; k < hi; ++k) {
          const double v = nn::LoadAs<double>(xc[k]);
#pragma GCC unroll 8
          for (int b = 0; b < B; ++b) acc[b] += nn::LoadAs<double>(wc[b * row + k]) * v;
        }
      } else {
        for (int64_t k = lo; k < hi; ++k) {
          const double v = nn::LoadAs<double>(xc[k * dilation]);
#pragma GCC unroll 8
          for (int b = 0; b < B; ++b) acc[b] += nn::LoadAs<double>(wc[b * row + k]) * v;
        }
      }
    }
    for (int b = 0; b < B; ++b) {
      double y = bm != nullptr ? acc[b] + nn::LoadAs<double>(bm[b]) : acc[b];
      ym[b * width + o] = nn::StoreAs<T>(y);
    }
  }
}

// Conv over one spatial dim with a narrow output (IsNarrow1D), straight
// from the storage type T (no widened copies of X and W): each output is
// its sum in double rounded once, as in Convolve, computed by direct loops
// over the output positions, the window of each a run of the input.
template <typename T>
void ConvolveNarrow1D(const ConvShape& s, const Window& w, const T* x, const T* weights,
                      const T* bias, T* y) {
  const int64_t in = w.input[0], kernel = w.kernel[0], width = w.output[0];
  const int64_t stride = w.strides[0], dilation = w.dilations[0], pad = w.pads[0];
  const int64_t cg = s.in_channels / s.group, mg = s.out_channels / s.group;
  // Each output's window: its first input element (maybe on a pad) and
  // the kernel offsets [klo, khi) inside the input.
  int64_t first[kNarrowWidth], klo[kNarrowWidth], khi[kNarrowWidth];
  for (int64_t o = 0; o < width; ++o) {
    first[o] = o * stride - pad;
    std::tie(klo[o], khi[o]) = StepsInside(first[o], dilation, in, kernel);
  }
  const int64_t row = cg * kernel;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t g = 0; g < s.group; ++g) {
      const T* xg = x + (n * s.in_channels + g * cg) * in;
      for (int64_t j = 0; j < mg;) {
        int64_t m = g * mg + j;
        const T* wm = weights + m * row;
        const T* bm = bias != nullptr ? bias + m : nullptr;
        T* ym = y + (n * s.out_channels + m) * width;
        if (mg - j >= 8) {
          NarrowBlock<8>(xg, wm, bm, ym, in, row, cg, kernel, dilation, width, first, klo, khi);
          j += 8;
        } else if (mg - j >= 4) {
          NarrowBlock<4>(xg, wm, bm, ym, in, row, cg, kernel, dilation, width, first, klo, khi);
          j += 4;
        } else {
          NarrowBlock<1>(xg, wm, bm, ym, in, row, cg, kernel, dilation, width, first, klo, khi);
          j += 1;
        }
      }
    }
  }
}

// Whether Conv takes the direct 2-D depthwise path: two spatial dims, one
// input channel per group, and a window that is not pointwise (those take
// the matrix product, as before).
bool IsDepthwise2D(const ConvShape& s, const Window& w) {
  return w.rank() == 2 && s.in_channels == s.group && !IsPointwise(w) && w.output[1] >= 1;
}

// Depthwise Conv over two spatial dims, straight from the storage type T
// (no widened copies of X and W): per output row, one double accumulator
// per output, the kernel offsets added in ascending order (row-major,
// offsets on a pad skipped: the order ConvolveDepthwise sums in), then
// the bias, each output rounded once to T. Direct loops: the column range
// of each kernel column inside the input is computed once per call.
template <typename T>
void ConvolveDepthwise2D(const ConvShape& s, const Window& w, const T* x, const T* weights,
                         const T* bias, T* y) {
  const int64_t ih = w.input[0], iw = w.input[1], oh = w.output[0], ow = w.output[1];
  const int64_t kh = w.kernel[0], kw = w.kernel[1];
  const int64_t sh = w.strides[0], sw = w.strides[1];
  const int64_t dh = w.dilations[0], dw = w.dilations[1];
  const int64_t ph = w.pads[0], pw = w.pads[1];  // the begin pads
  const int64_t mg = s.out_channels / s.group;
  // Per kernel column: the input column of output 0 (maybe on a pad) and
  // the outputs [clo, chi) whose column is inside the input.
  std::vector<int64_t> cstart(kw), clo(kw), chi(kw);
  for (int64_t k = 0; k < kw; ++k) {
    cstart[k] = k * dw - pw;
    std::tie(clo[k], chi[k]) = StepsInside(cstart[k], sw, iw, ow);
  }
  std::vector<double> acc_buffer(ow), wd(kh * kw);
  double* __restrict acc = acc_buffer.data();
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t m = 0; m < s.out_channels; ++m) {
      const int64_t g = m / mg;
      const T* xg = x + (n * s.in_channels + g) * ih * iw;
      const T* wm = weights + m * kh * kw;
      for (int64_t k = 0; k < kh * kw; ++k) wd[k] = nn::LoadAs<double>(wm[k]);
      T* ym = y + (n * s.out_channels + m) * oh * ow;
      const bool has_bias = bias != nullptr;
      const double b = has_bias ? nn::LoadAs<double>(bias[m]) : 0.0;
      for (int64_t r = 0; r < oh; ++r) {
        std::fill(acc, acc + ow, 0.0);
        for (int64_t a = 0; a < kh; ++a) {
          const int64_t iy = r * sh - ph + a * dh;
          if (iy < 0 || iy >= ih) continue;
          const T* xr = xg + iy * iw;
          for (int64_t k = 0; k < kw; ++k) {
            const double wk = wd[a * kw + k];
            const int64_t lo = clo[k], hi = chi[k];
            const T* __restrict in = xr + cstart[k];
            if (sw == 1) {
              for (int64_t o = lo; o < hi; ++o) acc[o] += wk * nn::LoadAs<double>(in[o]);
            } else {
              for (int64_t o = lo; o < hi; ++o) acc[o] += wk * nn::LoadAs<double>(in[o * sw]);
            }
          }
        }
        T* __restrict out = ym + r * ow;
        if (has_bias) {
          for (int64_t o = 0; o < ow; ++o) out[o] = nn::StoreAs<T>(acc[o] + b);
        } else {
          for (int64_t o = 0; o < ow; ++o) out[o] = nn::StoreAs<T>(acc[o]);
        }
      }
    }
  }
}

// The shape checks Conv, ConvInteger and QLinearConv share: X [N, C, ...],
// W [M, C/group, k...], and the window.
absl::StatusOr<std::pair<ConvShape, Window>> ConvGeometry(const KernelCall& call,
                                                          const Tensor& x, const Tensor& w) {
  if (x.rank() < 3 || w.rank() != x.rank()) {
    return call.Error("X and W must have the same rank, 3 or more");
  }
  ConvShape s;
  s.batch = x.dims()[0];
  s.in_channels = x.dims()[1];
  s.out_channels = w.dims()[0];
  s.group = call.Int("group", 1);
  if (s.group < 1 || s.in_channels % s.group != 0 || s.out_channels % s.group != 0 ||
      w.dims()[1] * s.group != s.in_channels) {
    return call.Error(absl::StrCat("group ", s.group, " does not divide the ", s.in_channels,
                                   " input channels and ", s.out_channels,
                                   " output channels as W's shape says"));
  }
  std::vector<int64_t> kernel = nn::KernelShape(call, w);
  if (!std::equal(kernel.begin(), kernel.end(), w.dims().begin() + 2, w.dims().end())) {
    return call.Error("kernel_shape differs from W's spatial dims");
  }
  OC_ASSIGN_OR_RETURN(Window window,
                      nn::MakeWindow(call, absl::MakeConstSpan(x.dims()).subspan(2), kernel,
                                     nn::Rounding::kFloor));
  std::vector<int64_t> out_dims = {s.batch, s.out_channels};
  out_dims.insert(out_dims.end(), window.output.begin(), window.output.end());
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, out_dims).status());
  int64_t cols = s.in_channels / s.group * nn::Product(kernel, 0, kernel.size()) *
                 nn::Product(window.output, 0, window.output.size());
  if (cols > nn::kMaxOutputElements) return call.Error("the im2col matrix is too large");
  return std::make_pair(s, window);
}

std::vector<int64_t> OutputDims(const ConvShape& s, const Window& w) {
  std::vector<int64_t> dims = {s.batch, s.out_channels};
  dims.insert(dims.end(), w.output.begin(), w.output.end());
  return dims;
}

// X, W and B (input 2, optional) of Conv or ConvTranspose: an error unless
// they are of one element type.
absl::StatusOr<std::array<const Tensor*, 3>> ConvInputs(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  OC_ASSIGN_OR_RETURN(const Tensor* w, nn::Required(call, 1, "W"));
  const Tensor* b = call.input(2);
  if (w->elem_type() != x->elem_type() || (b != nullptr && b->elem_type() != x->elem_type())) {
    return call.Error("the inputs differ in element type");
  }
  return std::array<const Tensor*, 3>{x, w, b};
}

// A convolution's X, W and B (when given), of a float type, read as C.
template <typename C>
struct ConvViews {
  RealView<C> x, w;
  std::optional<RealView<C>> b;
};

template <typename C>
ConvViews<C> ReadConvViews(const Tensor& x, const Tensor& w, const Tensor* b) {
  ConvViews<C> views{*RealView<C>::Of(x), *RealView<C>::Of(w), std::nullopt};
  if (b != nullptr) views.b = *RealView<C>::Of(*b);
  return views;
}

// Double, whatever the storage type T.
template <typename T>
using InDouble = double;

// Y of a convolution computed in C = Real<T>, T the storage type of X's
// float type: `compute(views, y)` with `views` the ConvViews<C> and `y`
// the zeroed elements of `dims`, which Y holds in X's type.
template <template <typename> typename Real, typename Compute>
Outputs ComputeConv(const KernelCall& call, const Tensor& x, const Tensor& w, const Tensor* b,
                    const std::vector<int64_t>& dims, Compute compute) {
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, x.elem_type());
  nn::VisitFloatType(x.elem_type(), [&](auto v) {
    using T = decltype(v);
    using C = Real<T>;
    ConvViews<C> views = ReadConvViews<C>(x, w, b);
    std::vector<C> y(nn::Product(dims, 0, dims.size()));
    compute(views, y);
    out = nn::StoreTensor<T, C>(x.elem_type(), dims, y);
  });
  return nn::One(std::move(out));
}

// An im2col (or col2im) convolution, ComputeConv in nn::Real:
// `compute(views, cols, y)` with `cols` the zeroed column matrix of
// `cols_size` elements (an error past kMaxOutputElements, naming the
// `matrix`).
template <typename Compute>
Outputs ColumnConv(const KernelCall& call, const Tensor& x, const Tensor& w, const Tensor* b,
                   const std::vector<int64_t>& dims, int64_t cols_size, absl::string_view matrix,
                   Compute compute) {
  if (cols_size > nn::kMaxOutputElements) {
    return call.Error(absl::StrCat("the ", matrix, " matrix is too large"));
  }
  return ComputeConv<nn::Real>(call, x, w, b, dims, [&](auto& views, auto& y) {
    std::vector<typename std::decay_t<decltype(y)>::value_type> cols(cols_size);
    compute(views, cols, y);
  });
}

Outputs ConvKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, ConvInputs(call));
  const Tensor* x = inputs[0];
  const Tensor* w = inputs[1];
  const Tensor* b = inputs[2];
  OC_ASSIGN_OR_RETURN(auto geometry, ConvGeometry(call, *x, *w));
  // Named references, not a structured binding: the lambdas below use them
  // (clang 14, which builds the fuzzers, cannot capture a binding).
  const ConvShape& s = geometry.first;
  const nn::Window& window = geometry.second;
  if (b != nullptr && b->size() != s.out_channels) {
    return call.Error(absl::StrCat("B holds ", b->size(), " values for ", s.out_channels,
                                   " output channels"));
  }
  absl::StatusOr<Tensor> out = nn::UnsupportedType(call, x->elem_type());
  // The direct paths read X and W as stored (sums in double, rounded once):
  // `convolve(tag, x, w, b, y)` on the storage of X's float type.
  auto run_direct = [&](auto convolve) -> absl::StatusOr<std::vector<Tensor>> {
    nn::VisitFloatType(x->elem_type(), [&](auto v) {
      using T = decltype(v);
      Tensor y(x->elem_type(), OutputDims(s, window));
      convolve(v, x->data<T>().data(), w->data<T>().data(),
               b != nullptr ? b->data<T>().data() : nullptr, y.data<T>().data());
      out = std::move(y);
    });
    return nn::One(std::move(out));
  };
  if (IsDepthwise2D(s, window)) {
    return run_direct([&](auto v, auto... storage) {
      ConvolveDepthwise2D<decltype(v)>(s, window, storage...);
    });
  }
  if (IsNarrow1D(s, window)) {
    return run_direct([&](auto v, auto... storage) {
      ConvolveNarrow1D<decltype(v)>(s, window, storage...);
    });
  }
  // Sums in double for every type: each output is its exact sum rounded
  // once, so that float rounding does not build up over the hundreds of
  // terms of a window (deep networks amplify it past the tolerance).
  return ComputeConv<InDouble>(call, *x, *w, b, OutputDims(s, window), [&](auto& views, auto& y) {
    Convolve<double>(s, window, views.x.data(), views.w.data(),
                     views.b ? views.b->data() : nullptr, y.data());
  });
}

// ConvTranspose: each input element spreads w[c, m, k...] times itself
// over the output window it maps to (col2im of W^T X), cropped by the
// pads; output_shape (or auto_pad SAME) fixes the output extent and the
// pads follow from it.
Outputs ConvTransposeKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, ConvInputs(call));
  const Tensor* x = inputs[0];
  const Tensor* w = inputs[1];
  const Tensor* b = inputs[2];
  if (x->rank() < 3 || w->rank() != x->rank()) {
    return call.Error("X and W must have the same rank, 3 or more");
  }
  int64_t rank = x->rank() - 2;
  ConvShape s;
  s.batch = x->dims()[0];
  s.in_channels = x->dims()[1];
  s.group = call.Int("group", 1);
  if (s.group < 1 || w->dims()[0] != s.in_channels || s.in_channels % s.group != 0) {
    return call.Error("W's first dim must be X's channels, divisible by group");
  }
  s.out_channels = w->dims()[1] * s.group;
  Window win;
  win.kernel = nn::KernelShape(call, *w);
  if (!std::equal(win.kernel.begin(), win.kernel.end(), w->dims().begin() + 2,
                  w->dims().end())) {
    return call.Error("kernel_shape differs from W's spatial dims");
  }
  win.strides = call.Ints("strides").value_or(std::vector<int64_t>(rank, 1));
  win.dilations = call.Ints("dilations").value_or(std::vector<int64_t>(rank, 1));
  std::vector<int64_t> output_padding =
      call.Ints("output_padding").value_or(std::vector<int64_t>(rank, 0));
  std::optional<std::vector<int64_t>> pads = call.Ints("pads");
  std::optional<std::vector<int64_t>> output_shape = call.Ints("output_shape");
  const onnx::AttributeProto* auto_pad_attr = call.attribute("auto_pad");
  std::string auto_pad = auto_pad_attr != nullptr ? auto_pad_attr->s() : "NOTSET";
  if (output_shape && static_cast<int64_t>(output_shape->size()) == rank + 2) {
    output_shape->erase(output_shape->begin(), output_shape->begin() + 2);
  }
  if (static_cast<int64_t>(win.strides.size()) != rank ||
      static_cast<int64_t>(win.dilations.size()) != rank ||
      static_cast<int64_t>(output_padding.size()) != rank ||
      (pads && static_cast<int64_t>(pads->size()) != 2 * rank) ||
      (output_shape && static_cast<int64_t>(output_shape->size()) != rank)) {
    return call.Error("strides, dilations, output_padding, pads or output_shape do not match "
                      "the spatial dims");
  }
  win.output.assign(x->dims().begin() + 2, x->dims().end());
  win.input.resize(rank);
  win.pads.assign(2 * rank, 0);
  for (int64_t d = 0; d < rank; ++d) {
    if (win.strides[d] < 1 || win.dilations[d] < 1 || win.kernel[d] < 1 ||
        win.strides[d] > (1 << 20) || win.dilations[d] > (1 << 20) ||
        win.kernel[d] > (1 << 20) || output_padding[d] < 0 || output_padding[d] > (1 << 20)) {
      return call.Error("strides, dilations, kernel_shape or output_padding out of range");
    }
    int64_t full = win.strides[d] * (win.output[d] - 1) + output_padding[d] + win.Span(d);
    bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (pads && !same) {
      win.pads[d] = (*pads)[d];
      win.pads[rank + d] = (*pads)[rank + d];
      win.input[d] = output_shape ? (*output_shape)[d] : full - win.pads[d] - win.pads[rank + d];
    } else if (output_shape || same) {
      win.input[d] = output_shape ? (*output_shape)[d] : win.output[d] * win.strides[d];
      int64_t total = full - win.input[d];  // negative when output_shape pads the end
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
      win.pads[d] = auto_pad == "SAME_UPPER" ? half : total - half;
      win.pads[rank + d] = total - win.pads[d];
    } else {
      win.input[d] = full;
    }
    if (win.input[d] < 0 || win.pads[d] < -(1 << 30) || win.pads[d] > (1 << 30)) {
      return call.Error("the output extent is negative");
    }
  }
  std::vector<int64_t> dims = {s.batch, s.out_channels};
  dims.insert(dims.end(), win.input.begin(), win.input.end());
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, dims).status());
  if (b != nullptr && b->size() != s.out_channels) return call.Error("B's size is not M");
  int64_t cg = s.in_channels / s.group, mg = s.out_channels / s.group;
  int64_t kernel_size = nn::Product(win.kernel, 0, rank);
  int64_t positions = nn::Product(win.output, 0, rank);
  int64_t image = nn::Product(win.input, 0, rank);
  int64_t cols_size = mg * kernel_size * positions;
  return ColumnConv(call, *x, *w, b, dims, cols_size, "col2im", [&](auto& views, auto& cols,
                                                                    auto& y) {
    using C = typename std::decay_t<decltype(y)>::value_type;
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t g = 0; g < s.group; ++g) {
        nn::Multiply(views.w.data() + g * cg * mg * kernel_size,
                     views.x.data() + (n * s.in_channels + g * cg) * positions, cols.data(),
                     mg * kernel_size, cg, positions, {.transpose_a = true});
        C* yg = y.data() + (n * s.out_channels + g * mg) * image;
        int64_t width = win.output[rank - 1], stride = win.strides[rank - 1];
        WalkPatchRows(win, mg,
                      [&](int64_t row, int64_t, int64_t, int64_t, int64_t first, int64_t lo,
                          int64_t hi) {
                        const C* in = cols.data() + row * width;
                        C* out = yg + first;
                        for (int64_t i = lo; i < hi; ++i) out[i * stride] += in[i];
                      });
        if (views.b) AddRowBias(yg, views.b->data() + g * mg, mg, image);
      }
    }
  });
}

// The 8-bit elements of `t` as int32 less `zero_point`: a scalar, or one
// per slice of axis 0 (per output channel of W).
absl::StatusOr<std::vector<int32_t>> Offset8(const KernelCall& call, const Tensor& t,
                                             const Tensor* zero_point) {
  OC_ASSIGN_OR_RETURN(auto elements, nn::Int8Elements(call, t, zero_point));
  auto& [values, zp] = elements;
  if (zp.empty()) return std::move(values);
  int64_t slices = t.rank() > 0 ? t.dims()[0] : 1;
  if (zp.size() != 1 && static_cast<int64_t>(zp.size()) != slices) {
    return call.Error("a zero point is neither a scalar nor one per output channel");
  }
  int64_t slice = slices == 0 ? 0 : t.size() / slices;
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] -= zp.size() == 1 ? zp[0] : zp[i / slice];
  }
  return std::move(values);
}

// The int32 convolution of the offset 8-bit inputs (wrapping, never UB),
// plus `bias` when set.
absl::StatusOr<std::pair<std::vector<int32_t>, std::vector<int64_t>>> IntegerConv(
    const KernelCall& call, const Tensor& x, const Tensor* x_zp, const Tensor& w,
    const Tensor* w_zp, const Tensor* bias) {
  OC_ASSIGN_OR_RETURN(auto geometry, ConvGeometry(call, x, w));
  auto [s, window] = geometry;
  if (x_zp != nullptr && x_zp->size() != 1) return call.Error("x_zero_point must be a scalar");
  OC_ASSIGN_OR_RETURN(std::vector<int32_t> vx, Offset8(call, x, x_zp));
  OC_ASSIGN_OR_RETURN(std::vector<int32_t> vw, Offset8(call, w, w_zp));
  std::vector<uint32_t> ux(vx.begin(), vx.end()), uw(vw.begin(), vw.end()), ub;
  if (bias != nullptr) {
    if (bias->elem_type() != onnx::TensorProto::INT32 || bias->size() != s.out_channels) {
      return call.Error("B must hold one int32 per output channel");
    }
    for (int32_t e : bias->data<int32_t>()) ub.push_back(static_cast<uint32_t>(e));
  }
  std::vector<int64_t> dims = OutputDims(s, window);
  std::vector<uint32_t> y(nn::Product(dims, 0, dims.size()));
  Convolve<uint32_t>(s, window, ux.data(), uw.data(), bias != nullptr ? ub.data() : nullptr,
                     y.data());
  return std::make_pair(std::vector<int32_t>(y.begin(), y.end()), dims);
}

Outputs ConvIntegerKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "x"));
  OC_ASSIGN_OR_RETURN(const Tensor* w, nn::Required(call, 1, "w"));
  OC_ASSIGN_OR_RETURN(auto result,
                      IntegerConv(call, *x, call.input(2), *w, call.input(3), nullptr));
  Tensor out(onnx::TensorProto::INT32, result.second);
  std::copy(result.first.begin(), result.first.end(), out.data<int32_t>().begin());
  return nn::One(std::move(out));
}

// QLinearConv: the int32 convolution (plus B) times x_scale * w_scale /
// y_scale (per output channel when w_scale is), plus y_zero_point,
// saturated and rounded half to even.
Outputs QLinearConvKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "x"));
  OC_ASSIGN_OR_RETURN(const Tensor* x_scale, nn::Required(call, 1, "x_scale"));
  OC_ASSIGN_OR_RETURN(const Tensor* w, nn::Required(call, 3, "w"));
  OC_ASSIGN_OR_RETURN(const Tensor* w_scale, nn::Required(call, 4, "w_scale"));
  OC_ASSIGN_OR_RETURN(const Tensor* y_scale, nn::Required(call, 6, "y_scale"));
  const Tensor* y_zp = call.input(7);
  for (const Tensor* scale : {x_scale, w_scale, y_scale}) {
    if (scale->elem_type() != onnx::TensorProto::FLOAT) return call.Error("scales must be float");
  }
  if (x_scale->size() != 1 || y_scale->size() != 1) {
    return call.Error("x_scale and y_scale must be scalars");
  }
  OC_ASSIGN_OR_RETURN(auto result,
                      IntegerConv(call, *x, call.input(2), *w, call.input(5), call.input(8)));
  int64_t channels = result.second[1];
  if (w_scale->size() != 1 && w_scale->size() != channels) {
    return call.Error("w_scale is neither a scalar nor one per output channel");
  }
  int32_t out_type = y_zp != nullptr ? y_zp->elem_type() : x->elem_type();
  double zp = 0;
  if (y_zp != nullptr) {
    if (y_zp->size() != 1) return call.Error("y_zero_point must be a scalar");
    zp = out_type == onnx::TensorProto::INT8 ? y_zp->data<int8_t>()[0]
                                             : y_zp->data<uint8_t>()[0];
  }
  double low = out_type == onnx::TensorProto::INT8 ? -128 : 0;
  double high = out_type == onnx::TensorProto::INT8 ? 127 : 255;
  int64_t image = nn::Product(result.second, 2, result.second.size());
  Tensor out(out_type, result.second);
  for (size_t i = 0; i < result.first.size(); ++i) {
    int64_t m = image == 0 ? 0 : (static_cast<int64_t>(i) / image) % channels;
    float ws = w_scale->data<float>()[w_scale->size() == 1 ? 0 : m];
    float multiplier = x_scale->data<float>()[0] * ws / y_scale->data<float>()[0];
    double y = std::clamp(static_cast<double>(result.first[i]) * multiplier + zp, low, high);
    y = std::nearbyint(y);
    if (out_type == onnx::TensorProto::INT8) {
      out.data<int8_t>()[i] = static_cast<int8_t>(y);
    } else {
      out.data<uint8_t>()[i] = static_cast<uint8_t>(y);
    }
  }
  return nn::One(std::move(out));
}

// X[plane] sampled at (h, w) bilinearly, zero outside the plane.
template <typename C>
C SampleZeroPadded(const C* plane, int64_t height, int64_t width, C h, C w) {
  if (!(h > -1 && h < static_cast<C>(height) && w > -1 && w < static_cast<C>(width))) return C{0};
  int64_t h0 = static_cast<int64_t>(std::floor(h)), w0 = static_cast<int64_t>(std::floor(w));
  C lh = h - static_cast<C>(h0), lw = w - static_cast<C>(w0);
  C value{0};
  for (int64_t dy = 0; dy < 2; ++dy) {
    for (int64_t dx = 0; dx < 2; ++dx) {
      int64_t y = h0 + dy, x = w0 + dx;
      if (y < 0 || y >= height || x < 0 || x >= width) continue;
      C weight = (dy ? lh : C{1} - lh) * (dx ? lw : C{1} - lw);
      value += weight * plane[y * width + x];
    }
  }
  return value;
}

// DeformConv (2-D): Conv whose kernel taps move by the offset input
// ([N, offset_group * kH * kW * 2, oH, oW], (h, w) pairs) and are sampled
// bilinearly (zero outside X), each scaled by the optional mask; im2col of
// the samples, then a matrix product per image and group on Eigen.
Outputs DeformConvKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(const Tensor* x, nn::Required(call, 0, "X"));
  OC_ASSIGN_OR_RETURN(const Tensor* w, nn::Required(call, 1, "W"));
  OC_ASSIGN_OR_RETURN(const Tensor* offset, nn::Required(call, 2, "offset"));
  const Tensor* b = call.input(3);
  const Tensor* mask = call.input(4);
  if (x->rank() != 4 || w->rank() != 4 || offset->rank() != 4) {
    return call.Error("only 2-D DeformConv is supported: X, W and offset must have rank 4");
  }
  ConvShape s;
  s.batch = x->dims()[0];
  s.in_channels = x->dims()[1];
  s.out_channels = w->dims()[0];
  s.group = call.Int("group", 1);
  int64_t offset_group = call.Int("offset_group", 1);
  if (s.group < 1 || w->dims()[1] * s.group != s.in_channels || s.out_channels % s.group != 0 ||
      offset_group < 1 || s.in_channels % offset_group != 0) {
    return call.Error("group or offset_group does not divide the channels as W's shape says");
  }
  Window win;
  win.input = {x->dims()[2], x->dims()[3]};
  win.kernel = nn::KernelShape(call, *w);
  win.strides = call.Ints("strides").value_or(std::vector<int64_t>{1, 1});
  win.dilations = call.Ints("dilations").value_or(std::vector<int64_t>{1, 1});
  win.pads = call.Ints("pads").value_or(std::vector<int64_t>{0, 0, 0, 0});
  win.output = {offset->dims()[2], offset->dims()[3]};
  if (win.kernel.size() != 2 || win.strides.size() != 2 || win.dilations.size() != 2 ||
      win.pads.size() != 4 || win.kernel[0] != w->dims()[2] || win.kernel[1] != w->dims()[3]) {
    return call.Error("kernel_shape, strides, dilations or pads do not match 2 spatial dims");
  }
  for (int d = 0; d < 2; ++d) {
    int64_t room = win.input[d] + win.pads[d] + win.pads[2 + d] - win.Span(d);
    if (win.strides[d] < 1 || win.dilations[d] < 1 || room < 0 ||
        win.output[d] != room / win.strides[d] + 1) {
      return call.Error("the offset's spatial dims do not match the convolution's output");
    }
  }
  int64_t kernel_size = win.kernel[0] * win.kernel[1];
  int64_t positions = win.output[0] * win.output[1];
  if (offset->dims()[0] != s.batch || offset->dims()[1] != offset_group * kernel_size * 2) {
    return call.Error("offset's shape does not match offset_group and the kernel");
  }
  if (mask != nullptr && (mask->rank() != 4 || mask->dims()[0] != s.batch ||
                          mask->dims()[1] != offset_group * kernel_size ||
                          mask->dims()[2] != win.output[0] || mask->dims()[3] != win.output[1])) {
    return call.Error("mask's shape does not match offset_group, the kernel and the output");
  }
  if (b != nullptr && b->size() != s.out_channels) return call.Error("B's size is not M");
  std::vector<int64_t> dims = OutputDims(s, win);
  OC_RETURN_IF_ERROR(nn::CheckedCount(call, dims).status());
  int64_t cg = s.in_channels / s.group, mg = s.out_channels / s.group;
  int64_t cols_size = cg * kernel_size * positions;
  return ColumnConv(call, *x, *w, b, dims, cols_size, "im2col", [&](auto& views, auto& cols,
                                                                    auto& y) {
    using C = typename std::decay_t<decltype(y)>::value_type;
    RealView<C> voff = *RealView<C>::Of(*offset);
    std::optional<RealView<C>> vmask;
    if (mask != nullptr) vmask = *RealView<C>::Of(*mask);
    int64_t height = win.input[0], width = win.input[1];
    int64_t per_offset_group = s.in_channels / offset_group;
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t g = 0; g < s.group; ++g) {
        for (int64_t c = 0; c < cg; ++c) {
          int64_t ic = g * cg + c;
          int64_t og = ic / per_offset_group;
          const C* plane = views.x.data() + (n * s.in_channels + ic) * height * width;
          for (int64_t k = 0; k < kernel_size; ++k) {
            int64_t kh = k / win.kernel[1], kw = k % win.kernel[1];
            const C* off_h =
                voff.data() + ((n * offset_group + og) * kernel_size * 2 + 2 * k) * positions;
            const C* off_w = off_h + positions;
            const C* m = vmask ? vmask->data() + ((n * offset_group + og) * kernel_size + k) *
                                                     positions
                               : nullptr;
            C* row = cols.data() + (c * kernel_size + k) * positions;
            for (int64_t p = 0; p < positions; ++p) {
              int64_t i = p / win.output[1], j = p % win.output[1];
              C h = static_cast<C>(i * win.strides[0] - win.pads[0] + kh * win.dilations[0]) +
                    off_h[p];
              C wc = static_cast<C>(j * win.strides[1] - win.pads[1] + kw * win.dilations[1]) +
                     off_w[p];
              C value = SampleZeroPadded(plane, height, width, h, wc);
              row[p] = m != nullptr ? value * m[p] : value;
            }
          }
        }
        C* yg = y.data() + (n * s.out_channels + g * mg) * positions;
        nn::Multiply(views.w.data() + g * mg * cg * kernel_size, cols.data(), yg, mg,
                     cg * kernel_size, positions);
        if (views.b) AddRowBias(yg, views.b->data() + g * mg, mg, positions);
      }
    }
  });
}

}  // namespace onnxconvert::eval::conv_ops
